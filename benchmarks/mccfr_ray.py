"""MCCFR on Ray actors: NashConv against iterations and wall time for K = 1, 2, 4.

    python benchmarks/mccfr_ray.py [--game leduc_poker] [--sampling es] [--seconds 30]
                                   [--batch 2000] [--actors 1,2,4] [--points 6]

Each K runs for the same wall time (``--seconds``) from seed 0 on a local
Ray with ``max(K)`` CPU slots (on a 2-core machine K = 4 shares the two
cores), beside sequential MCCFR in this process (solvers/mccfr.py, no Ray).
NashConv is the exact one of the average policy on the compiled tree,
taken ``--points`` times during the run with the clock stopped. The last
lines say whether K = 2 ends below K = 1 and each run's overhead (the share
of the batch time not spent traversing). The script runs itself again in a
network namespace of its own holding only loopback (root: ``unshare -n``;
solvers/ray_cluster.py).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from kibitz.games import load_game
from kibitz.solvers import evaluate as ev
from kibitz.solvers.mccfr import MCCFR
from kibitz.solvers.tree import compile_tree


def curve(solver, tree, seconds: float, points: int) -> list[tuple[int, float, float]]:
    """(iterations, seconds, NashConv) at ``points`` even times of a run of ``seconds``."""
    rows, spent = [], 0.0
    for k in range(1, points + 1):
        t0 = time.perf_counter()
        while spent + time.perf_counter() - t0 < seconds * k / points:
            solver.iterate()
        spent += time.perf_counter() - t0
        nc = ev.nash_conv(tree, ev.policy_to_slots(tree, solver.average_policy(), default="uniform"))
        rows.append((solver.iteration, spent, nc))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="leduc_poker")
    ap.add_argument("--sampling", default="es", choices=["es", "os"])
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--batch", type=int, default=None, help="iterations per actor per batch")
    ap.add_argument("--actors", default="1,2,4")
    ap.add_argument("--points", type=int, default=6)
    args = ap.parse_args()
    if os.environ.get("KIBITZ_LOOPBACK") != "1":
        from kibitz.solvers.ray_cluster import loopback_argv, loopback_env
        with tempfile.TemporaryDirectory(prefix="kzray-", dir="/tmp") as home:
            env = dict(loopback_env(home), KIBITZ_LOOPBACK="1")
            raise SystemExit(subprocess.run(loopback_argv([sys.executable, *sys.argv]), env=env).returncode)

    import ray

    from kibitz.solvers.mccfr_ray import DEFAULT_BATCH, RayMCCFR

    batch = args.batch or DEFAULT_BATCH
    ks = [int(k) for k in args.actors.split(",")]
    game = load_game(args.game)
    tree = compile_tree(game)
    print(f"{args.game}: {tree.num_nodes:,} nodes, {tree.num_infosets:,} information states; "
          f"MCCFR-{args.sampling}, {args.seconds:g} s each, batch {batch} iterations per actor; "
          f"load average {os.getloadavg()[0]:.1f}")
    results = {}
    plain = MCCFR(game, np.random.default_rng(0), args.sampling)
    results["sequential"] = (curve(plain, tree, args.seconds, args.points), None)
    ray.init(num_cpus=max(ks), include_dashboard=False, logging_level="warning")
    for k in ks:
        solver = RayMCCFR(game, seed=0, actors=k, batch=batch, sampling=args.sampling)
        results[f"K={k}"] = (curve(solver, tree, args.seconds, args.points), solver.overhead_share)
        solver.close()
    ray.shutdown()
    print(f"{'run':<11} {'seconds':>8} {'iterations':>11} {'it/s':>8} {'NashConv':>10}")
    for name, (rows, _) in results.items():
        for it, sec, nc in rows:
            print(f"{name:<11} {sec:8.1f} {it:11,} {it / sec:8,.0f} {nc:10.4f}")
    final = {name: rows[-1][2] for name, (rows, _) in results.items()}
    for name, (_, share) in results.items():
        if share is not None:
            print(f"{name}: overhead {100 * share:.1f}% of the batch time")
    if "K=1" in final and "K=2" in final:
        verdict = "below" if final["K=2"] < final["K=1"] else "NOT below"
        print(f"after {args.seconds:g} s: NashConv K=2 {final['K=2']:.4f} {verdict} K=1 {final['K=1']:.4f} "
              f"(sequential {final['sequential']:.4f}); load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
