"""External-sampling MCCFR iterations per second: kibitz beside OpenSpiel's Python solver.

For each game both solvers run from scratch for the same wall time, in
alternating rounds within one run (so machine noise hits both alike); an
iteration is one traversal per player in both. The ratio is what to quote.

    python benchmarks/mccfr_speed.py [--games "g1;g2"] [--seconds S] [--rounds R] [--out FILE]

The default games are leduc_poker, kuhn_poker and the small configuration of
every kibitz game (``games.REGISTRY[name].small``): full-size games are far
too deep for external sampling, which walks every move of the traverser.
The ratios are the README's speed row, written to ``--out``
(kibitz.experiments.speed).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyspiel
from open_spiel.python.algorithms import external_sampling_mccfr as os_es

from kibitz import games
from kibitz.experiments import speed
from kibitz.solvers.mccfr import MCCFR


def rate(step, seconds: float) -> float:
    n = 0
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while time.perf_counter() < deadline:
        step()
        n += 1
    return n / (time.perf_counter() - t0)


def main(argv=None):
    run = speed.Run()
    default = ["kuhn_poker", "leduc_poker"] + [games.REGISTRY[g].small for g in sorted(games.REGISTRY)]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", default=";".join(default), help="semicolon-separated game strings")
    ap.add_argument("--seconds", type=float, default=0.5, help="seconds per solver per round")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=speed.default_out("mccfr_speed"),
                    help="the README's speed row (JSON; default: %(default)s)")
    args = ap.parse_args(argv)
    rates = {}
    print(f"{'game':<62} {'kibitz it/s':>11} {'openspiel it/s':>15} {'ratio':>6}")
    for name in args.games.split(";"):
        game = pyspiel.load_game(name)
        ours_solver = MCCFR(game, np.random.default_rng(args.seed), "es")
        np.random.seed(args.seed)  # OpenSpiel's solver draws from numpy's global generator
        theirs_solver = os_es.ExternalSamplingSolver(game, os_es.AverageType.SIMPLE)
        ours, theirs = [], []
        for _ in range(args.rounds):
            ours.append(rate(ours_solver.iterate, args.seconds))
            theirs.append(rate(theirs_solver.iteration, args.seconds))
        a, b = float(np.mean(ours)), float(np.mean(theirs))
        print(f"{name:<62} {a:>11.1f} {b:>15.1f} {a / b:>6.2f}", flush=True)
        rates[name] = {"kibitz_its_per_s": a, "openspiel_its_per_s": b, "ratio": a / b}
    ratios = ", ".join(f"{speed.label(name)} {r['ratio']:.2f}x" for name, r in rates.items())
    run.write(args.out, "external-sampling MCCFR iterations/s",
              f"vs OpenSpiel's Python `ExternalSamplingSolver`: {ratios}", ">= 3x", data=rates)


if __name__ == "__main__":
    main()
