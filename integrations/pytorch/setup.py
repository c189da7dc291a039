"""Builds weft_torch as a Python extension against an installed weft, found
with pkg-config (PKG_CONFIG_PATH=<prefix>/lib/pkgconfig after `cmake --install`).

    /usr/bin/python3 setup.py build_ext --inplace   # or: pip install --no-build-isolation .

The CMake build (WEFT_WITH_TORCH=AUTO) builds the same extension without this file."""
import os
import subprocess

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

HERE = os.path.dirname(os.path.abspath(__file__))


def pkg_config(flag):
    out = subprocess.run(["pkg-config", flag, "weft"], check=True, capture_output=True, text=True)
    return out.stdout.split()


cflags = pkg_config("--cflags")
libs = pkg_config("--libs")
lib_dirs = [f[2:] for f in libs if f.startswith("-L")]
setup(
    name="weft_torch",
    version="0.1.0",
    description="weft collectives as a torch.distributed backend",
    package_dir={"": "python"},
    packages=["weft_torch"],
    ext_modules=[CppExtension(
        name="weft_torch._C",
        sources=[os.path.join("src", f) for f in (
            "element_types.cc", "tensor_staging.cc", "weft_ops.cc", "weft_p2p_ops.cc",
            "weft_sparse_ops.cc", "weft_work.cc", "completion_queue.cc", "process_group_weft.cc",
            "recovery.cc", "module.cc")],
        include_dirs=[f[2:] for f in cflags if f.startswith("-I")],
        library_dirs=lib_dirs,
        libraries=[f[2:] for f in libs if f.startswith("-l")],
        runtime_library_dirs=lib_dirs,
        # C++17, as the CMake build: torch 1.x's helper would otherwise add -std=c++14.
        extra_compile_args=["-O2", "-std=c++17"],
    )],
    cmdclass={"build_ext": BuildExtension},
)
