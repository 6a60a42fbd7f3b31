"""Shared pytest hooks: the outcome of each test phase is kept on the test
item, so that a fixture can tell in its teardown whether the test failed
(the browser tests keep a screenshot then).

JAX's persistent compilation cache is on for the whole run, shared by the
test processes (xdist's workers and the CLIs the tests start): the suite
builds many trainers and networks of the same shapes, and each new one
compiled the same functions again (a second MMD trainer of Kuhn poker: 2-6 s
before its first step). The cache lives in .pytest_cache/jax (``make
clean`` removes it); a size limit turns on JAX's file lock, so that two
processes never read an entry half written.
"""

import os
import pathlib

import pytest

_CACHE = pathlib.Path(__file__).resolve().parent.parent / ".pytest_cache" / "jax"
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(_CACHE))
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0")
os.environ.setdefault("JAX_COMPILATION_CACHE_MAX_SIZE", str(2 * 2**30))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


def stop_tournament_at(monkeypatch, index: int) -> None:
    """Makes game ``index`` of every tournament raise KeyboardInterrupt, as
    Ctrl-C there would (in this process: run it with one worker)."""
    import kibitz.agents.matches.tournament as tour

    real = tour.play_one

    def interrupting(plan, i):
        if i == index:
            raise KeyboardInterrupt
        return real(plan, i)

    monkeypatch.setattr(tour, "play_one", interrupting)
