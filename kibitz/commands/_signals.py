"""How a command stops: on SIGINT (Ctrl-C) and SIGTERM (``timeout``, job
schedulers, ``kill``) alike.

While a command runs, both signals raise KeyboardInterrupt in the main
thread, whatever dispositions the process inherited: a job started in the
background of a script begins with SIGINT ignored (the shell sets SIG_IGN
and exec keeps it, so Python never installs its Ctrl-C handler), and
SIGTERM's default ends the process at once, keeping nothing of what
finished and leaving its worker processes behind. A command keeps its
finished work on KeyboardInterrupt (or stops at the flag of
``solvers.driver.stop_on_signals``, which it installs over these handlers),
then exits 130 after SIGINT and 143 after SIGTERM (128 + the signal).

Only the first signal raises: ``timeout`` sends SIGTERM to the command and
then to its process group, and a terminal's Ctrl-C may come twice; a later
one must not break into the bounded clean-up that the first started (the
worker pool being terminated and joined). Worker processes set their own
dispositions (``agents.tournament._worker_init``): SIGINT ignored, SIGTERM
the default, so that terminating them prints nothing.
"""

from __future__ import annotations

import contextlib
import signal

#: the signals a command stops on
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def exit_status(signum) -> int:
    """130 after SIGINT (or a KeyboardInterrupt that no signal raised), 143 after SIGTERM."""
    return 128 + int(signum or signal.SIGINT)


@contextlib.contextmanager
def interrupt_on_signals():
    """SIGINT and SIGTERM raise KeyboardInterrupt while the block runs (the
    first of them only; see the module docstring); yields a dict whose
    ``"signal"`` is the first signal received, None until one is. The
    handlers in place before are put back at the end. Outside the main
    thread nothing is installed."""
    got = {"signal": None}

    def handler(signum, frame):  # noqa: ARG001
        if got["signal"] is None:
            got["signal"] = signum
            raise KeyboardInterrupt

    saved = {}
    try:
        for sig in STOP_SIGNALS:
            try:
                saved[sig] = signal.signal(sig, handler)
            except ValueError:  # not the main thread
                pass
        yield got
    finally:
        for sig, old in saved.items():
            if old is not None:  # None: a handler that Python did not install
                signal.signal(sig, old)
