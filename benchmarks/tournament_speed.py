"""Tournament speed: random-vs-random games/s with 1 and 2 workers, and the
overhead per game against a bare OpenSpiel playout loop, in one run.

    python benchmarks/tournament_speed.py [--game G] [--games N] [--agents random,random]

The bare loop plays N random games (chance sampled from chance_outcomes,
players uniformly over legal_actions) and nothing else. The tournament
numbers are wall-clock for ``run_tournament`` with N games (rounded up to
whole deals), no output directory and no progress bar: they include making
the agents per game, duplicate-deal chance, recording every move, the
statistics and ratings, and for 2 workers starting the spawned processes.
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np

from kibitz.agents.tournament import run_tournament
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="underdog")
    ap.add_argument("--games", type=int, default=2000)
    ap.add_argument("--agents", default="random,random")
    args = ap.parse_args()
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


if __name__ == "__main__":
    main()
