"""MCCFR on Ray actors: NashConv against iterations and wall time for K = 1, 2, 4.

    python benchmarks/mccfr_ray.py [--game leduc_poker] [--sampling es] [--seconds 30]
                                   [--batch 2000] [--actors 1,2,4] [--points 6] [--out FILE]

Each K runs for the same wall time (``--seconds``) from seed 0 on a local
Ray with ``max(K)`` CPU slots (on a 2-core machine K = 4 shares the two
cores), beside sequential MCCFR in this process (solvers/mccfr.py, no Ray).
NashConv is the exact one of the average policy on the compiled tree,
taken ``--points`` times during the run with the clock stopped. The last
lines say whether K = 2 ends below K = 1 and each run's overhead (the share
of the batch time not spent traversing). The script runs itself again in a
network namespace of its own holding only loopback (root: ``unshare -n``;
solvers/ray_cluster.py). The README's speed row goes to ``--out`` (default
docs/results/speed/mccfr_ray.json; kibitz.experiments.speed) and
docs/scaling.md's table beside it, with the suffix ``.md``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from kibitz.experiments import speed
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


def table(results: dict, seconds: float) -> list[str]:
    """docs/scaling.md's table: each run's iterations and its NashConv at each point."""
    points = [sec for _, sec, _ in next(iter(results.values()))[0]]
    lines = [f"| run | iterations in {seconds:g} s | iterations/s | "
             + " | ".join(f"NashConv at {seconds * (k + 1) / len(points):g} s" if k == 0
                          else f"{seconds * (k + 1) / len(points):g} s" for k in range(len(points))) + " |",
             "| --- | ---: | ---: | " + " | ".join("---:" for _ in points) + " |"]
    for name, (rows, _) in results.items():
        it, sec, _ = rows[-1]
        lines.append(f"| {name.replace('=', ' = ')} | {it:,} | {it / sec:,.0f} | "
                     + " | ".join(f"{nc:.4f}" for _, _, nc in rows) + " |")
    return lines


def main():
    run = speed.Run()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="leduc_poker")
    ap.add_argument("--sampling", default="es", choices=["es", "os"])
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--batch", type=int, default=None, help="iterations per actor per batch")
    ap.add_argument("--actors", default="1,2,4")
    ap.add_argument("--points", type=int, default=6)
    ap.add_argument("--out", default=speed.default_out("mccfr_ray"),
                    help="the README's speed row (JSON; default: %(default)s)")
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
        rate = {name: rows[-1][0] / rows[-1][1] for name, (rows, _) in results.items()}
        shares = [100 * share for _, share in results.values() if share is not None]
        run.write(args.out, f"MCCFR on Ray, NashConv after {args.seconds:g} s, K = 2 actors vs K = 1 "
                  f"(MCCFR-{args.sampling}, {speed.label(args.game)})",
                  f"{final['K=2']:.4f} vs {final['K=1']:.4f} (sequential MCCFR without Ray "
                  f"{final['sequential']:.4f}); {rate['K=2'] / rate['K=1']:.2f}x the iterations/s; merges "
                  f"{min(shares):.1f}-{max(shares):.1f}% of the batch time; loopback-only namespace",
                  "K = 2 below K = 1",
                  data={name: {"curve": rows, "overhead_share": share} for name, (rows, share) in results.items()},
                  table=table(results, args.seconds))


if __name__ == "__main__":
    main()
