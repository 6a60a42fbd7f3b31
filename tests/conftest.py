"""Shared pytest hooks: the outcome of each test phase is kept on the test
item, so that a fixture can tell in its teardown whether the test failed
(the browser tests keep a screenshot then)."""

import pytest


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


def stop_tournament_at(monkeypatch, index: int) -> None:
    """Makes game ``index`` of every tournament raise KeyboardInterrupt, as
    Ctrl-C there would (in this process: run it with one worker)."""
    import kibitz.agents.tournament as tour

    real = tour.play_one

    def interrupting(plan, i):
        if i == index:
            raise KeyboardInterrupt
        return real(plan, i)

    monkeypatch.setattr(tour, "play_one", interrupting)
