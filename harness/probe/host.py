"""The host that started a probe, and whether it is gone (standard library only): the scoring probe and
the recording probe both stop waiting for a host that has exited (killed with SIGKILL, say)."""

from __future__ import annotations

import os


class Host:
    """The process that started the probe and will write its requests: ``pid`` as the host gave it
    (``HOST_PID_FLAG``; the recording probe: its start file's ``host_pid``), else the probe's parent as it
    starts. The host's pid comes from the host because a host killed before the probe starts leaves it a
    parent that is not the host (init, a subreaper), which would never change."""

    def __init__(self, pid: int | None = None) -> None:
        self.parent = os.getppid()  # the probe's parent as it starts: the host, or whoever took the probe over
        self.pid = self.parent if pid is None else pid

    def gone(self) -> bool:
        """Has the host exited? Yes when the probe's parent changed (the parent it started with died), or,
        when the host is not that parent (it died before the probe started, or a wrapper of ``--python``
        is the parent), when the host's pid names no process or a zombie."""
        if os.getppid() != self.parent:
            return True
        if self.pid == self.parent:
            return False
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return True
        except OSError:  # a process we may not signal: it exists
            return False
        try:  # Linux: a dead host its own parent has not reaped yet is still there, as a zombie
            with open(f"/proc/{self.pid}/stat", "rb") as stat:
                return stat.read().rpartition(b")")[2].split()[:1] == [b"Z"]
        except OSError:
            return False
