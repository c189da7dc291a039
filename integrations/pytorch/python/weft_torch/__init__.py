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

__all__ = ["ProcessGroupWeft", "weft_version", "init_from_env", "standby_wait", "replace",
           "StateReplica"]

ProcessGroupWeft = _C.ProcessGroupWeft
weft_version = _C.weft_version

_DEFAULT_TIMEOUT = datetime.timedelta(minutes=5)


def _td(timeout):
    if isinstance(timeout, datetime.timedelta):
        return timeout
    return datetime.timedelta(seconds=float(timeout))


def init_from_env(timeout=_DEFAULT_TIMEOUT):
    """A weft group of the job, from the launcher's environment (weft-run,
    WEFT_ROOT_ADDR, torchrun's variables: docs/launching.md), without a store."""
    return _C.init_from_env(_td(timeout))


def standby_wait(timeout=_DEFAULT_TIMEOUT):
    """In a standby process (weft-run --standby K): waits, idle, until the
    survivors of a failure call replace(), then returns the group in which
    this process holds a dead rank's number. Raises RuntimeError when the job
    ended without needing it."""
    return _C.standby_wait(_td(timeout))


def replace(group, dead=None, timeout=_DEFAULT_TIMEOUT):
    """After a failure, on every survivor alike: (new group, replaced). With a
    standby for every dead rank, the new group has the old size and numbering
    (replaced == the number of dead ranks); otherwise it holds the survivors
    only (replaced == 0). dead=None asks the launcher which ranks died
    (weft-run knows; the group must be the job's own). The old group stays
    broken: drop it."""
    return _C.replace(group, [int(r) for r in (dead or [])], _td(timeout))


class StateReplica:
    """CPU tensors (model parameters, optimizer state, a step counter) with
    copies in other ranks' memory, committed in versions (weftReplicaCommit).

    commit() packs the tensors into a host buffer and sends it; with
    wait=False it returns at once and the tensors may change meanwhile (call
    wait() before the next commit). restore(group) is collective over the
    group: every rank's tensors become the newest version whole on every rank.
    """

    def __init__(self, group, tensors, copies=1):
        self._tensors = [t.detach() for t in tensors]
        for t in self._tensors:
            if t.device.type != "cpu" or not t.is_contiguous():
                raise ValueError("StateReplica takes contiguous CPU tensors")
        self._sizes = [t.numel() * t.element_size() for t in self._tensors]
        self._replica = _C.Replica(group, sum(self._sizes), copies)
        self._buffer = self._replica.buffer()

    def _views(self):
        offset = 0
        for t, n in zip(self._tensors, self._sizes):
            yield t.reshape(-1).view(torch.uint8), self._buffer[offset:offset + n]
            offset += n

    def commit(self, wait=True):
        for tensor, packed in self._views():
            packed.copy_(tensor)
        self._replica.start()
        return self._replica.wait() if wait else None

    def wait(self):
        """Completes a commit(wait=False); returns its version."""
        return self._replica.wait()

    def restore(self, group):
        version = self._replica.restore(group)
        for tensor, packed in self._views():
            tensor.copy_(packed)
        return version

    @property
    def version(self):
        return self._replica.version


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
