"""Ray for kibitz's runs beyond one process: the connection and the loopback namespace.

Ray is an optional extra (``pip install 'kibitz[ray]'``): ``import ray``
happens only inside these functions, so kibitz imports and runs without it,
and only ``--ray`` needs it (:class:`RayUnavailable` says how to install it).

Where a run goes is Ray's own choice, as ``ray.init`` makes it: the address
given (``--ray-address``), else the ``RAY_ADDRESS`` environment variable,
else the latest cluster ``ray start`` left on this machine, else a new local
Ray started for the run (one CPU slot per core, no dashboard) and stopped at
its end. A process that has already called ``ray.init`` (a test, a notebook)
runs on that Ray and leaves it running.

:func:`loopback_argv` wraps a command so that it runs in a network namespace
of its own that has only the loopback interface (``unshare -n``, as root):
the tests and benchmarks start every Ray instance so, and no Ray traffic can
reach an address outside 127.0.0.0/8 (docs/scaling.md).
"""

from __future__ import annotations

import contextlib
import os
import shutil


class RayUnavailable(RuntimeError):
    """``--ray`` without the ``ray`` package installed."""


INSTALL_HINT = "--ray needs the ray extra: pip install 'kibitz[ray]'"


def require():
    """The ``ray`` module, or :class:`RayUnavailable` naming the extra to install."""
    try:
        import ray
    except ImportError:
        raise RayUnavailable(INSTALL_HINT) from None
    return ray


@contextlib.contextmanager
def session(address: str | None = None):
    """Ray for the length of a ``with`` block (see the module docstring for
    where it runs); yields the ``ray`` module. A Ray this process did not
    start here is left running."""
    ray = require()
    if ray.is_initialized():
        yield ray
        return
    ray.init(address=address, include_dashboard=False, logging_level="warning", log_to_driver=True)
    try:
        yield ray
    finally:
        ray.shutdown()


def cluster_cpus(ray) -> int:
    """CPU slots of the cluster (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def alive_nodes(ray) -> int:
    return sum(1 for n in ray.nodes() if n.get("Alive"))


def loopback_argv(argv: list[str]) -> list[str]:
    """``argv`` run in a new network namespace holding only loopback (root
    only: ``unshare -n``, then ``ip link set lo up``)."""
    if os.geteuid() != 0 or not shutil.which("unshare") or not shutil.which("ip"):
        raise RuntimeError("a loopback-only network namespace needs root, unshare and ip")
    return ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$@"', "sh", *argv]


def loopback_env(home: str) -> dict:
    """The environment for a Ray started in a loopback namespace: ``home``
    holds what Ray keeps under ``~`` (its token) and its session folder
    (``RAY_TMPDIR``), so that two such Rays share no file; no usage report."""
    env = dict(os.environ)
    env.pop("RAY_ADDRESS", None)
    env.update({"HOME": home, "RAY_TMPDIR": home, "RAY_USAGE_STATS_ENABLED": "0"})
    return env
