"""Games as Ray tasks, in batches: the ``--ray`` engine of tournaments and matches.

:func:`run_batches` plays ``items`` (game numbers, or (match, game) pairs)
with ``play(payload, batch)`` as Ray tasks, a batch of items per task, and
hands each finished item's result to ``keep`` on the driver. What an item
gives depends only on the payload and the item, never on the batch it was
in, the node that played it or the order the batches finish, so the caller
gets the results of a run in one process (it orders them itself).

Batch size. A Ray task costs a fixed time beside its work (submission,
scheduling, passing the batch and its results through the object store).
That *per-task overhead* is measured at the start: the median round trip
of no-op tasks, one at a time. The first wave plays one item per task, one
task per CPU slot, and the time an item takes is measured in the workers
(updated as batches finish). Batches then hold enough items that the
overhead is at most ``target`` (5%) of the batch's work, and no more than
``max_task_seconds`` of work (what a killed driver may lose), and no more
than an even share of what is left, so no CPU slot idles at the end. At
most two tasks per CPU slot are in flight.

Failures. A worker process that dies (killed, out of memory, its node
gone) fails its task, which Ray runs again (up to ``RETRIES`` times):
the batch is played afresh and gives the same results; past that,
:class:`RayRunError`. An exception raised by ``play`` is not retried: it
is raised on the driver as itself.
Ctrl-C cancels the tasks in flight and returns with what finished.
"""

from __future__ import annotations

import dataclasses
import statistics
import time
from typing import Callable, Sequence

from kibitz.solvers.ray_cluster import cluster_cpus

#: share of a task's work its overhead may take
TARGET_OVERHEAD = 0.05
#: times Ray reruns a task whose worker process died
RETRIES = 3
#: no-op round trips that measure the per-task overhead
OVERHEAD_PROBES = 10


class RayRunError(RuntimeError):
    """Ray could not finish a task (its worker died more than ``RETRIES``
    times, its node went away, the cluster stopped)."""


@dataclasses.dataclass
class BatchReport:
    """What a Ray run did: tasks, items, the nodes that played them, the
    per-task overhead and the work the workers measured."""

    tasks: int = 0
    items: int = 0
    nodes: set = dataclasses.field(default_factory=set)
    cpus: int = 0
    overhead: float = 0.0       # seconds per task (median no-op round trip)
    work: float = 0.0           # seconds the workers spent playing
    interrupted: bool = False

    @property
    def overhead_share(self) -> float:
        """The tasks' overhead as a share of their work."""
        return self.tasks * self.overhead / self.work if self.work > 0 else 0.0

    def summary(self) -> str:
        return (f"ray: {self.items} games in {self.tasks} tasks on {len(self.nodes)} node(s), "
                f"{self.cpus} CPU slots, busy {self.work:.1f} s; per-task overhead "
                f"{1000 * self.overhead:.1f} ms, {100 * self.overhead_share:.2f}% of the work")


def _noop():
    return None


def _play_batch(play, payload, batch):
    """One task: the batch's results, the seconds they took, the node."""
    import ray
    t0 = time.perf_counter()
    out = play(payload, batch)
    return out, time.perf_counter() - t0, ray.get_runtime_context().get_node_id()


def measure_overhead(ray, probes: int = OVERHEAD_PROBES) -> float:
    """Median seconds of a no-op task's round trip (submitted, run, fetched)."""
    noop = ray.remote(num_cpus=1)(_noop)
    ray.get(noop.remote())  # a worker up
    times = []
    for _ in range(probes):
        t0 = time.perf_counter()
        ray.get(noop.remote())
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def batch_size(overhead: float, per_item: float, left: int, cpus: int, target: float = TARGET_OVERHEAD,
               max_task_seconds: float = 60.0) -> int:
    """Items per task: overhead at most ``target`` of the work, at most
    ``max_task_seconds`` of work and an even share of the ``left`` items."""
    per_item = max(per_item, 1e-6)
    need = overhead / (target * per_item)
    size = max(1, int(-(-need // 1)))
    size = min(size, max(1, int(max_task_seconds / per_item)))
    return max(1, min(size, -(-left // cpus)))


def run_batches(ray, play: Callable, payload, items: Sequence, keep: Callable, *,
                on_batch: Callable[[BatchReport], None] | None = None,
                target: float = TARGET_OVERHEAD, max_task_seconds: float = 60.0) -> BatchReport:
    """Plays ``items`` as Ray tasks of ``play(payload, batch)`` (a function
    importable on every node, returning one result per item, in order);
    calls ``keep(item, result)`` on the driver as batches finish. Returns the
    :class:`BatchReport`; ``on_batch`` sees it after each batch."""
    report = BatchReport(cpus=cluster_cpus(ray))
    report.overhead = measure_overhead(ray)
    task = ray.remote(num_cpus=1, max_retries=RETRIES, retry_exceptions=False)(_play_batch)
    payload_ref = ray.put(payload)
    items = list(items)
    nxt = 0
    per_item = None
    in_flight: dict = {}
    try:
        while nxt < len(items) or in_flight:
            while nxt < len(items) and len(in_flight) < 2 * report.cpus:
                if per_item is None:  # the first wave: one item each, to time an item
                    if len(in_flight) >= report.cpus:
                        break
                    size = 1
                else:
                    size = batch_size(report.overhead, per_item, len(items) - nxt, report.cpus, target,
                                      max_task_seconds)
                batch = items[nxt:nxt + size]
                nxt += size
                in_flight[task.remote(play, payload_ref, batch)] = batch
            done, _ = ray.wait(list(in_flight), num_returns=1)
            ref = done[0]
            batch = in_flight.pop(ref)
            try:
                results, seconds, node = ray.get(ref)
            except ray.exceptions.RayTaskError as e:
                for other in in_flight:
                    ray.cancel(other)
                cause = e.cause if isinstance(getattr(e, "cause", None), BaseException) else None
                raise (cause or e) from None
            except ray.exceptions.RayError as e:
                for other in in_flight:
                    ray.cancel(other)
                raise RayRunError(f"Ray could not play items {batch[0]}..{batch[-1]}: "
                                  f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None
            report.tasks += 1
            report.items += len(batch)
            report.work += seconds
            report.nodes.add(node)
            this = seconds / len(batch)
            per_item = this if per_item is None else 0.7 * per_item + 0.3 * this
            for item, result in zip(batch, results):
                keep(item, result)
            if on_batch:
                on_batch(report)
    except KeyboardInterrupt:
        report.interrupted = True
        for ref in in_flight:
            ray.cancel(ref, force=True)
    return report
