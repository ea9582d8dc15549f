"""One writer per run folder: an exclusive ``flock`` on ``<run>/.lock``, held while a run trains.

Two processes training one folder (two ``crax train --resume`` of the same run) would interleave
their metrics and checkpoints from different trajectories. The second is refused with a message
naming the holder, which the lock file records (process id, host, start time and command). The
operating system drops the lock when the holder exits, however it exits, so a killed run leaves
no stale lock behind; the file itself stays and is harmless.
"""

from __future__ import annotations

import datetime
import fcntl
import os
import socket
import sys
from pathlib import Path

LOCK_FILE = ".lock"


class RunFolderBusy(ValueError):
    """Another process holds the run folder's lock."""


class RunLock:
    """The exclusive lock on a run folder; use as a context manager or :meth:`acquire`/:meth:`release`."""

    def __init__(self, run_dir: str | os.PathLike):
        self.path = Path(run_dir) / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> RunLock:
        """Takes the lock, or raises :class:`RunFolderBusy` naming the process that holds it."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 4096, 0).decode("utf-8", "replace").strip() or "an unknown process"
            os.close(fd)
            raise RunFolderBusy(f"run folder {str(self.path.parent)!r} is in use by {holder}; wait for that run "
                                f"to finish or stop it, then try again") from None
        stamp = datetime.datetime.now().isoformat(timespec="seconds")
        note = f"process {os.getpid()} on {socket.gethostname()} since {stamp} ({' '.join(sys.argv) or 'python'})"
        os.ftruncate(fd, 0)
        os.pwrite(fd, (note + "\n").encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
