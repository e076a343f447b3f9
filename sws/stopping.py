"""Stopping a long command on SIGINT/SIGTERM within a bounded time, as ``sws eval`` does.

While :func:`stop_on_signals` is open, the first signal raises :class:`Stopped` in the main thread, so the
command's ``with`` blocks unwind and stop what they started (a child ``sws serve``); then the local Ray
this process started is shut down, any process it started and left is ended, and one line
``interrupted by SIGTERM: <what is kept>`` ends it with exit status 128 + the signal. An evaluation inside
stops as it does by itself (:class:`Interrupted`, ``sws eval``'s: its line, its status). A second signal
ends the process at once, and so does :func:`arm_watchdog` ``BOUND_S`` after the first, should the stop hang.
A signal handled while the garbage collector runs a weakref callback or ``__del__`` raises there, where Python
ignores exceptions ("Exception ignored in ..."): such a lost :class:`Stopped` is raised again in the main
thread as soon as it returns (``sys.unraisablehook``), so the command never works on after the signal.
``sws.raykit.init_ray`` keeps the handler through ``ray.init`` and puts the local Ray in a session of its own,
so a signal to the command's process group reaches the command only.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
AGAIN = "run the same command again to resume"
BOUND_S = 60.0  # from the first signal to the exit, whatever the stop is waiting on
REDELIVER_S = 0.05  # from a lost stop to raising it again


class Interrupted(Exception):
    """A stop the command finished itself, having recorded what it did (``sws eval``'s): its ``str`` is the
    one line, ``signum`` the signal."""

    signum: int


class Stopped(BaseException):
    """Raised by the first stop signal (a ``BaseException``, as ``KeyboardInterrupt``: no ``except
    Exception`` in a stage swallows it); ``watchdog`` disarms the bound armed with it."""

    def __init__(self, signum: int, watchdog: threading.Event):
        super().__init__(signal.Signals(signum).name)
        self.signum, self.watchdog = signum, watchdog


def end_children(grace_s: float = 5.0) -> None:
    """SIGTERM every process this one started and is still running, SIGKILL them after ``grace_s``."""
    import psutil

    children = psutil.Process().children(recursive=True)
    for process in children:
        with contextlib.suppress(psutil.Error):
            process.terminate()
    for process in psutil.wait_procs(children, timeout=grace_s)[1]:
        with contextlib.suppress(psutil.Error):
            process.kill()


def arm_watchdog(signum: int, bound_s: float = BOUND_S) -> threading.Event:
    """End this process (and what it started) ``bound_s`` from now, with one line, unless the returned event
    is set first (the stop finished and the process goes on: a test's in-process run, a notebook)."""
    disarmed = threading.Event()

    def watch() -> None:
        if disarmed.wait(bound_s):
            return
        name = signal.Signals(signum).name
        print(f"interrupted by {name}: the stop took over {bound_s:.0f} s and was cut short", file=sys.stderr)
        end_children(grace_s=1.0)
        os._exit(128 + signum)

    threading.Thread(target=watch, name="sws-stop-watchdog", daemon=True).start()
    return disarmed


class _Stop:
    """The stop the first signal raised, and whether it is owed again (it was lost where exceptions are ignored)."""

    raised: Stopped | None = None
    owed = False


def _first_signal(signum: int, frame: object) -> None:
    for s in STOP_SIGNALS:
        signal.signal(s, _later_signal)
    _Stop.raised = Stopped(signum, arm_watchdog(signum))
    raise _Stop.raised


def _later_signal(signum: int, frame: object) -> None:
    """The lost stop raised again (:func:`_lost_stop`), or a second signal: its default action, now."""
    if _Stop.owed and _Stop.raised is not None:
        _Stop.owed = False
        raise Stopped(_Stop.raised.signum, _Stop.raised.watchdog)
    signal.signal(signum, signal.SIG_DFL)
    signal.raise_signal(signum)


def _lost_stop(previous: Callable) -> Callable:
    """A ``sys.unraisablehook`` that has an ignored :class:`Stopped` raised again in the main thread, and passes
    anything else on: the signal sent again to the main thread (it wakes a blocking call, as the first did)
    a moment later from another thread; sent from here, the handler would run inside the hook, where the
    exception is ignored too. (If the moment falls in another callback, the stop is lost and owed again.)"""

    def hook(unraisable) -> None:
        if isinstance(unraisable.exc_value, Stopped) and not _Stop.owed:
            _Stop.owed = True
            main, signum = threading.main_thread().ident, unraisable.exc_value.signum
            threading.Timer(REDELIVER_S, signal.pthread_kill, (main, signum)).start()
        elif not isinstance(unraisable.exc_value, Stopped):
            previous(unraisable)

    return hook


@contextlib.contextmanager
def stop_on_signals(done: Callable[[], str]) -> Iterator[None]:
    """Stop the block on SIGINT/SIGTERM as the module says; ``done()`` says what is kept (``interrupted by
    SIGTERM: {done()}``). Outside the main thread signals cannot be handled, and inside another such block
    (a command run as a Ray job) the outer one stops it: the block just runs."""
    if (
        threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGTERM) is _first_signal
    ):
        yield
        return
    previous = {s: signal.signal(s, _first_signal) for s in STOP_SIGNALS}
    previous_hook, sys.unraisablehook = sys.unraisablehook, _lost_stop(sys.unraisablehook)
    _Stop.raised, _Stop.owed = None, False
    try:
        yield
    except Stopped as exc:
        stopped, line = exc, f"interrupted by {exc}: {done()}"
    except Interrupted as exc:  # its flush is over: bound the rest
        stopped, line = Stopped(exc.signum, arm_watchdog(exc.signum)), str(exc)
    else:
        return
    finally:
        for s, handler in previous.items():  # None: a handler installed outside Python
            signal.signal(s, signal.SIG_DFL if handler is None else handler)
        sys.unraisablehook = previous_hook
    _stop_started()
    print(line, file=sys.stderr)
    stopped.watchdog.set()
    sys.exit(128 + stopped.signum)


def stops_on_signals(done: Callable[..., str]) -> Callable:
    """A click command's body under :func:`stop_on_signals`; ``done`` gets the command's parameters."""

    def decorate(command: Callable) -> Callable:
        @functools.wraps(command)
        def run(*args, **params):
            with stop_on_signals(lambda: done(**params)):
                return command(*args, **params)

        return run

    return decorate


def _stop_started() -> None:
    """Shut the local Ray down (a joined cluster is only left) and end whatever else this process started."""
    if "ray" in sys.modules:
        import ray

        with contextlib.suppress(Exception):
            ray.shutdown()
    end_children()
