"""weft as a torch.distributed backend.

    import weft_torch  # registers the "weft" backend
    torch.distributed.init_process_group("weft", ...)

Importing this package registers the backend; nothing else in a program
changes. CPU tensors only in this version.
"""
import datetime

import torch
import torch.distributed as dist

from . import _C

__all__ = ["ProcessGroupWeft", "weft_version"]

ProcessGroupWeft = _C.ProcessGroupWeft
weft_version = _C.weft_version


def _create(store, rank, world_size, timeout):
    if not isinstance(timeout, datetime.timedelta):
        timeout = datetime.timedelta(seconds=float(timeout))
    return _C.ProcessGroupWeft(store, rank, world_size, timeout)


def _register():
    if "WEFT" in getattr(dist.Backend, "_plugins", {}):
        return
    major = int(torch.__version__.split(".")[0])
    if major >= 2:
        # 2.x: a backend names the devices it serves; "cpu:weft" then works too.
        try:
            dist.Backend.register_backend("weft", _create, devices=["cpu"])
            return
        except TypeError:
            pass
    dist.Backend.register_backend("weft", _create)


_register()
