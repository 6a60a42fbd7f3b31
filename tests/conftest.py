"""Shared pytest hooks: the outcome of each test phase is kept on the test
item, so that a fixture can tell in its teardown whether the test failed
(the browser tests keep a screenshot then)."""

import pytest


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report
