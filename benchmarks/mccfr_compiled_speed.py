"""MCCFR iterations per second at the default sizes: the compiled solver
beside kibitz's Python solver and OpenSpiel's C++ solver, outcome sampling
(or external sampling with ``--sampling es``, in the games where an
iteration is affordable: Pub).

For each game (default size) the three solvers run from scratch for the same
wall time, in alternating rounds within one run (so machine noise hits them
alike); an iteration is one sampled trajectory per player in all three
(OpenSpiel's ``OutcomeSamplingMCCFRSolver.run_iteration`` walks one per
player; with ``--sampling es`` one traversal per player, as its
``ExternalSamplingMCCFRSolver``'s). Every round starts a fresh solver, so the rates include the tables'
growth from empty. The ratios are what to quote.

    python benchmarks/mccfr_compiled_speed.py [--games pub,underdog] [--sampling os|es] [--seconds S]
                                              [--rounds R] [--out FILE]

The ratios are the README's speed row, written to ``--out`` (kibitz.experiments.speed).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyspiel

from kibitz import games
from kibitz.experiments import speed
from kibitz.solvers.mccfr import MCCFR
from kibitz.solvers.mccfr_compiled import CompiledMCCFR

#: the most the compiled solver's tables take in one round
MAX_BYTES = 1.5e9


#: why a solver's rounds ended early: {(game, solver): message}
FAILURES: dict = {}


def rate(step, seconds: float, count, what=None) -> float:
    """Iterations a second of ``step`` for ``seconds`` (``count()``: iterations
    done). A solver that fails (OpenSpiel's C++ solver checks its regret
    increments, which overflow in Doubt and Bet's long games; the Python
    solver divides by a sampling probability that underflows) gives the
    rate until it failed, and the failure is kept in :data:`FAILURES`."""
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while time.perf_counter() < deadline:
        try:
            if step():
                break  # the compiled tables are full: the rate so far
        except (pyspiel.SpielError, ZeroDivisionError, OverflowError) as e:
            FAILURES[what] = f"{type(e).__name__} after {count()} iterations: {str(e)[-80:]}"
            break
    return count() / (time.perf_counter() - t0)


def compiled_rate(game, seed: int, seconds: float, sampling: str = "os") -> float:
    solver = CompiledMCCFR(game, np.random.default_rng(seed), sampling, max_bytes=MAX_BYTES)
    return rate(solver.iterate, seconds, lambda: solver.iteration)


def python_rate(game, seed: int, seconds: float, sampling: str = "os") -> float:
    solver = MCCFR(game, np.random.default_rng(seed), sampling)
    return rate(solver.iterate, seconds, lambda: solver.iteration, (str(game), "python"))


def openspiel_rate(game, seed: int, seconds: float, sampling: str = "os") -> float:
    solver = (pyspiel.OutcomeSamplingMCCFRSolver(game, seed=seed) if sampling == "os"
              else pyspiel.ExternalSamplingMCCFRSolver(game, seed=seed))
    done = [0]

    def step():
        solver.run_iteration()
        done[0] += 1

    return rate(step, seconds, lambda: done[0], (str(game), "openspiel"))


def main(argv=None):
    run = speed.Run()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", default=None,
                    help="comma-separated game strings (default: the four games; pub with --sampling es)")
    ap.add_argument("--sampling", default="os", choices=["os", "es"])
    ap.add_argument("--seconds", type=float, default=3.0, help="seconds per solver per round")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None,
                    help="the README's speed row (JSON; default: docs/results/speed/mccfr_compiled_speed.json, "
                         "mccfr_compiled_es_speed.json with --sampling es)")
    args = ap.parse_args(argv)
    es = args.sampling == "es"
    names = args.games or ("pub" if es else ",".join(sorted(games.REGISTRY)))
    out = args.out or speed.default_out("mccfr_compiled_es_speed" if es else "mccfr_compiled_speed")
    rates = {}
    print(f"{'game':<14} {'compiled it/s':>13} {'python it/s':>12} {'openspiel C++ it/s':>19} "
          f"{'vs python':>9} {'vs C++':>7}")
    for name in names.split(","):
        game = pyspiel.load_game(name)
        ours, py, cpp = [], [], []
        for r in range(args.rounds):
            ours.append(compiled_rate(game, args.seed + r, args.seconds, args.sampling))
            py.append(python_rate(game, args.seed + r, args.seconds, args.sampling))
            cpp.append(openspiel_rate(game, args.seed + r, args.seconds, args.sampling))
        a, b, c = (float(np.mean(x)) for x in (ours, py, cpp))
        print(f"{name:<14} {a:>13.1f} {b:>12.1f} {c:>19.1f} {a / b:>8.1f}x {a / c:>6.1f}x", flush=True)
        for (g, which), why in FAILURES.items():
            if g == str(game):
                print(f"    {which} stopped: {why}")
        rates[name] = {"failures": {w: why for (g, w), why in FAILURES.items() if g == str(game)},
                       "compiled_its_per_s": a, "python_its_per_s": b, "openspiel_cpp_its_per_s": c,
                       "vs_python": a / b, "vs_openspiel_cpp": a / c}
    figures = "; ".join(f"{speed.label(name)} {r['vs_python']:.1f}x Python, {r['vs_openspiel_cpp']:.1f}x C++"
                        + (f" (until {' and '.join(r['failures'])} failed)" if r["failures"] else "")
                        for name, r in rates.items())
    kind = "external" if es else "outcome"
    cpp_name = "ExternalSamplingMCCFRSolver" if es else "OutcomeSamplingMCCFRSolver"
    run.write(out, f"{kind}-sampling MCCFR iterations/s at default size (compiled rules)",
              f"vs kibitz's Python MCCFR and OpenSpiel's C++ `{cpp_name}`: {figures}",
              ">= 20x Python, >= 3x C++", data=rates)


if __name__ == "__main__":
    main()
