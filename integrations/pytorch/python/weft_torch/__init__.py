"""weft as a torch.distributed backend.

    import weft_torch  # registers the "weft" backend
    torch.distributed.init_process_group("weft", ...)

Importing this package registers the backend; nothing else in a program
changes. CPU tensors only in this version.
"""
import datetime
import os

import torch
import torch.distributed as dist

# weft checks that the thread calling a communicator changes at the same calls
# on every rank. torch runs a Future callback on whichever thread completes the
# future, or at once on the thread that attaches it when the future is already
# complete, so a callback's collectives (a communication hook's) come from
# different threads on different ranks even when every rank calls them in one
# order. The order itself is still checked (WEFT_CHECK_CALLS). Set before any
# group is created; a value the user set is kept.
os.environ.setdefault("WEFT_CHECK_THREADS", "0")

from . import _C  # noqa: E402

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
