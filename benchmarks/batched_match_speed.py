"""Games per second of a match between the shipped network and random: the
batched match (agents/matches/batched_match.py, many games at once on the compiled
rules, one batched inference per step) beside ``kibitz tournament`` (one
game at a time through the pyspiel API, one worker), in one run.

    python benchmarks/batched_match_speed.py [--games pub,underdog] [--tournament-games N]
                                             [--batched-games M] [--out FILE]

Only games whose shipped network reads an encoding the batched environment
hands out are measured (the others are named and left out). The ratio of
games per second is what to quote; it is the README's speed row, written to
``--out`` (kibitz.experiments.speed).
"""

from __future__ import annotations

import argparse
import time

import pyspiel

from kibitz import games
from kibitz.agents.matches.batched_match import _Batched, batched_match
from kibitz.agents.matches.tournament import run_tournament
from kibitz.experiments import speed

SPECS = ["trained", "random"]


def main(argv=None):
    run = speed.Run()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", default=",".join(sorted(games.REGISTRY)), help="comma-separated game names")
    ap.add_argument("--tournament-games", type=int, default=140, help="games of the tournament")
    ap.add_argument("--batched-games", type=int, default=5000, help="games of the batched match")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=speed.default_out("batched_match_speed"),
                    help="the README's speed row (JSON; default: %(default)s)")
    args = ap.parse_args(argv)
    rates = {}
    print(f"{'game':<14} {'batched games/s':>15} {'tournament games/s':>19} {'ratio':>7}")
    for name in args.games.split(","):
        game = pyspiel.load_game(name)
        try:
            _Batched("trained", game).encoding and batched_match(game, SPECS, 10, seed=args.seed)  # compiles
        except ValueError as e:
            print(f"{name:<14} left out: {e}")
            continue
        t0 = time.perf_counter()
        fast = batched_match(game, SPECS, args.batched_games, seed=args.seed)
        a = fast["games"] / (time.perf_counter() - t0)
        t0 = time.perf_counter()
        slow = run_tournament(name, SPECS, args.tournament_games, seed=args.seed, workers=1, progress=False)
        b = slow.finished / (time.perf_counter() - t0)
        print(f"{name:<14} {a:>15,.0f} {b:>19,.1f} {a / b:>6.0f}x", flush=True)
        rates[name] = {"batched_games_per_s": a, "tournament_games_per_s": b, "ratio": a / b,
                       "batched_means": [x["mean"] for x in fast["agents"]],
                       "tournament_means": [x["mean_payoff"] for x in slow.results["agents"]]}
    figures = ", ".join(f"{speed.label(name)} {r['ratio']:.0f}x" for name, r in rates.items())
    run.write(args.out, "trained vs random, games/s (batched match on the compiled rules)",
              f"`batched_match` vs `kibitz tournament` (1 worker): {figures}", "-", data=rates)


if __name__ == "__main__":
    main()
