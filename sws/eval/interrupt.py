"""Stopping a run on SIGINT/SIGTERM without losing finished episodes.

While :func:`stop_signals` is open the first signal only sets a flag, which the runner checks between waits:
it then stops submitting, flushes the workers' buffered records, stops them and raises :class:`EvalInterrupted`.
A second signal ends the process at once, as it would without the handler (a flush that hangs on a lost
node can always be cut short), and so does ``sws/stopping.py``'s watchdog a bounded time after the first.
The handlers replace Ray's (whose SIGTERM handler exits 1 after a native stack dump) and are put back after.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

from sws.stopping import STOP_SIGNALS, Interrupted, arm_watchdog


class EvalInterrupted(Interrupted):
    """A run stopped by a signal after recording what had finished; ``exit_code`` is 128 + the signal."""

    def __init__(self, signum: int, recorded: int, total: int, out_dir: Path):
        self.signum, self.recorded, self.total = signum, recorded, total
        self.exit_code = 128 + signum
        name = signal.Signals(signum).name
        super().__init__(
            f"interrupted by {name}: {recorded} of {total} episodes recorded in {out_dir}; run the same "
            "command again to resume"
        )


class StopFlag:
    """The first stop signal received (None: none yet); the handler of both signals."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self.watchdog: threading.Event | None = None

    def __call__(self, signum: int, frame: object) -> None:
        if self.signum is None:
            self.signum = signum
            self.watchdog = arm_watchdog(signum)  # a flush waiting on a Ray the signal also reached ends too
            return
        signal.signal(signum, signal.SIG_DFL)  # a second signal: its default action, now
        signal.raise_signal(signum)


@contextlib.contextmanager
def stop_signals() -> Iterator[StopFlag]:
    """SIGINT and SIGTERM set the yielded flag instead of ending the process (main thread only: elsewhere
    signals cannot be handled, and the flag stays unset)."""
    flag = StopFlag()
    if threading.current_thread() is not threading.main_thread():
        yield flag
        return
    previous = {s: signal.signal(s, flag) for s in STOP_SIGNALS}
    try:
        yield flag
    finally:
        for s, handler in previous.items():  # None: a handler installed outside Python
            signal.signal(s, signal.SIG_DFL if handler is None else handler)
        if flag.watchdog:  # the flush is over
            flag.watchdog.set()
