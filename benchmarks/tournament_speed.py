"""Tournament speed: random-vs-random games/s with 1 and 2 workers, and the
overhead per game against a bare OpenSpiel playout loop, in one run.

    python benchmarks/tournament_speed.py [--game G] [--games N] [--agents random,random] [--out FILE]
    python benchmarks/tournament_speed.py --ray [--game G] [--games N] [--agents 'ismcts(sims=100),random']
                                          [--out FILE]

``--ray`` measures an IS-MCTS match instead (56 games by default): one
worker against a local Ray of 2 CPU slots (``ray.init(num_cpus=2)``), the same games, results checked
equal, with the per-task overhead and the batches Ray ran. The script
first runs itself again in a network namespace of its own holding only
loopback (root: ``unshare -n``; solvers/ray_cluster.py), so Ray talks to
127.0.0.1 only. Ray's start is timed apart (a cluster starts once, not per
tournament); the ratio is of the tournaments' wall times.

The bare loop plays N random games (chance sampled from chance_outcomes,
players uniformly over legal_actions) and nothing else. The tournament
numbers are wall-clock for ``run_tournament`` with N games (rounded up to
whole deals), no output directory and no progress bar: they include making
the agents per game, duplicate-deal chance, recording every move, the
statistics and ratings, and for 2 workers starting the spawned processes.

The ratio is the README's speed row, written to ``--out`` (default
docs/results/speed/tournament_speed.json, with ``--ray``
tournament_speed_ray.json; kibitz.experiments.speed); with ``--ray`` also
docs/scaling.md's table, beside it with the suffix ``.md``.
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np

from kibitz.agents.matches.tournament import run_tournament
from kibitz.experiments import speed
from kibitz.games import load_game


def bare_playouts(game, n: int, rng: np.random.Generator) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                p = np.array([q for _, q in outcomes])
                action = outcomes[rng.choice(len(outcomes), p=p / p.sum())][0]
            else:
                legal = state.legal_actions()
                action = legal[int(rng.integers(len(legal)))]
            state.apply_action(action)
    return time.perf_counter() - t0


def in_loopback_namespace() -> int:
    """Runs this script again in a loopback-only network namespace; its exit code."""
    import subprocess
    import sys
    import tempfile

    from kibitz.solvers.ray_cluster import loopback_argv, loopback_env

    with tempfile.TemporaryDirectory(prefix="kzray-", dir="/tmp") as home:
        env = dict(loopback_env(home), KIBITZ_LOOPBACK="1")
        return subprocess.run(loopback_argv([sys.executable, *sys.argv]), env=env).returncode


def ray_match(args, run) -> None:
    import ray

    from kibitz.solvers.ray_cluster import alive_nodes

    specs = args.agents.split(",")
    t0 = time.perf_counter()
    r1 = run_tournament(args.game, specs, args.games, seed=0, workers=1, progress=False)
    one = time.perf_counter() - t0
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, logging_level="warning")
    start = time.perf_counter() - t0
    lines = []
    t0 = time.perf_counter()
    r2 = run_tournament(args.game, specs, args.games, seed=0, progress=False, ray=True, log=lines.append)
    two = time.perf_counter() - t0
    busy = float(lines[-1].rsplit("busy ", 1)[1].split()[0]) if "busy " in lines[-1] else float("nan")
    node_ip = ray.util.get_node_ip_address()
    nodes = alive_nodes(ray)
    ray.shutdown()
    assert r1.results == r2.results, "results differ between 1 worker and Ray"
    n = r1.total
    print(f"game {args.game}, agents {args.agents}, {n} games, {os.cpu_count()} cpus; "
          f"Ray on {nodes} node(s) at {node_ip}")
    print(f"tournament, 1 worker:      {n / one:8.3f} games/s ({one:.1f} s)")
    print(f"tournament, Ray 2 CPUs:    {n / two:8.3f} games/s ({two:.1f} s; Ray started in {start:.1f} s before)")
    print(f"ratio Ray 2 CPUs / 1:      {one / two:8.2f}x (target >= 1.7x on 2 free cores); "
          f"{one / (two + start):.2f}x with Ray's start")
    print(lines[-1])
    print(f"the workers played {busy:.1f} s of games in the Ray run's {two:.1f} s on 2 slots "
          f"({100 * busy / (2 * two):.0f}% busy; the rest: worker start-up and imports, the last games' tail)")
    print(f"load average {load:.1f} before the Ray run")
    overhead = lines[-1].split("per-task overhead ", 1)[-1]
    run.write(args.out, f"tournament on Ray, 2 CPU slots vs 1 worker (`{args.agents}` {args.game}, {n:,} games)",
              f"{one / two:.2f}x ({one / (two + start):.2f}x counting Ray's {start:.1f} s start); per-task overhead "
              f"{overhead}; loopback-only namespace; it needs two free cores", ">= 1.7x",
              data={"games": n, "one_worker_s": one, "ray_s": two, "ray_start_s": start, "busy_s": busy,
                    "load_before_ray": load, "report": lines[-1]},
              table=["| load before | 1 worker | Ray, 2 CPUs | ratio | with Ray's start | per-task overhead |",
                     "| ---: | ---: | ---: | ---: | ---: | ---: |",
                     f"| {load:.1f} | {n / one:.3f} games/s | {n / two:.3f} games/s | {one / two:.2f}x | "
                     f"{one / (two + start):.2f}x | {overhead} |"])


def main():
    run = speed.Run()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="underdog")
    ap.add_argument("--games", type=int, default=None,
                    help="games (default 2000; with --ray 56)")
    ap.add_argument("--agents", default=None, help="agent specs (default random,random; with --ray "
                    "'ismcts(sims=100),random')")
    ap.add_argument("--ray", action="store_true", help="an IS-MCTS match: 1 worker against Ray with 2 CPUs")
    ap.add_argument("--out", default=None, help="the README's speed row (JSON; default: "
                    f"{speed.default_out('tournament_speed')}, with --ray {speed.default_out('tournament_speed_ray')})")
    args = ap.parse_args()
    args.out = args.out or speed.default_out("tournament_speed_ray" if args.ray else "tournament_speed")
    if args.ray:
        if os.environ.get("KIBITZ_LOOPBACK") != "1":
            raise SystemExit(in_loopback_namespace())
        args.games = args.games or 56
        args.agents = args.agents or "ismcts(sims=100),random"
        ray_match(args, run)
        return
    args.games = args.games or 2000
    args.agents = args.agents or "random,random"
    game = load_game(args.game)
    specs = args.agents.split(",")
    bare_cpu = time.process_time()
    bare = bare_playouts(game, args.games, np.random.default_rng(0))
    bare_cpu = time.process_time() - bare_cpu
    one, cpu1 = time.perf_counter(), time.process_time()
    r1 = run_tournament(args.game, specs, args.games, seed=0, workers=1, progress=False)
    one, cpu1 = time.perf_counter() - one, time.process_time() - cpu1
    load = os.getloadavg()[0]
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    two = time.perf_counter()
    r2 = run_tournament(args.game, specs, args.games, seed=0, workers=2, progress=False)
    two = time.perf_counter() - two
    kids2 = resource.getrusage(resource.RUSAGE_CHILDREN)
    worker_cpu = (kids2.ru_utime + kids2.ru_stime) - (kids.ru_utime + kids.ru_stime)
    assert r1.results == r2.results, "results differ between 1 and 2 workers"
    n = r1.total
    print(f"game {game}, agents {','.join(specs)}, {n} games, {os.cpu_count()} cpus")
    print(f"bare playout loop:       {args.games / bare:9.1f} games/s")
    print(f"tournament, 1 worker:    {n / one:9.1f} games/s")
    print(f"tournament, 2 workers:   {n / two:9.1f} games/s")
    print(f"ratio 2 workers / 1:     {one / two:9.2f}x (target >= 1.7x on 2 free cores)")
    print(f"  CPU per game: 1 worker {1000 * cpu1 / n:.3f} ms, 2 workers {1000 * worker_cpu / n:.3f} ms; "
          f"the 2 workers got {worker_cpu / two:.2f} cores on average (load average {load:.1f} before)")
    print(f"overhead per game (1 worker vs bare loop): {1000 * (one / n - bare / args.games):.3f} ms wall "
          f"({one / n / (bare / args.games):.2f}x the bare game time); "
          f"{1000 * (cpu1 / n - bare_cpu / args.games):.3f} ms CPU "
          f"({cpu1 / n / (bare_cpu / args.games):.2f}x the bare game's CPU)")
    run.write(args.out, f"tournament, 2 workers vs 1 (`{args.agents}` {args.game}, {n:,} games)",
              f"{one / two:.2f}x (the 2 workers got {worker_cpu / two:.2f} cores); overhead per game "
              f"{one / n / (bare / args.games):.2f}x a bare OpenSpiel playout loop; it needs two free cores",
              ">= 1.7x", data={"games": n, "bare_s": bare, "one_worker_s": one, "two_workers_s": two,
                                "cpu_one_s": cpu1, "cpu_two_workers_s": worker_cpu, "load_before_two": load})


if __name__ == "__main__":
    main()
