"""MCCFR convergence: NashConv of the average policy against iterations.

Runs external- and outcome-sampling MCCFR (solvers/mccfr.py) on each game
and, at log-spaced iteration counts, measures the exact NashConv of the
average policy (information states never visited play uniformly) with the
exact evaluator on the compiled tree (solvers/evaluate.py). Writes
``mccfr_convergence.csv`` and ``mccfr_convergence.png`` to OUT.

    python experiments/mccfr_convergence.py OUT [--iterations N] [--points P] [--seed S]
        [--games "leduc_poker;underdog(players=3,cards=5,bank=2)"]
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import numpy as np
import pyspiel

from kibitz import games
from kibitz.solvers import evaluate as ev
from kibitz.solvers.mccfr import MCCFR
from kibitz.solvers.tree import compile_tree


def main(argv=None):
    default = ["leduc_poker", games.REGISTRY["underdog"].small, games.REGISTRY["pub"].small]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="output folder")
    ap.add_argument("--games", default=";".join(default), help="semicolon-separated game strings")
    ap.add_argument("--iterations", type=int, default=20000)
    ap.add_argument("--points", type=int, default=12, help="measurements per run (log-spaced)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    marks = sorted({int(x) for x in np.geomspace(10, args.iterations, args.points)})
    rows = []
    for name in args.games.split(";"):
        game = pyspiel.load_game(name)
        tree = compile_tree(game)
        uniform = ev.nash_conv(tree, tree.uniform_policy())
        for sampling in ("es", "os"):
            solver = MCCFR(game, np.random.default_rng(args.seed), sampling)
            rows.append((name, sampling, 0, 0.0, uniform))
            spent = 0.0
            for m in marks:
                t0 = time.perf_counter()
                solver.run(m - solver.iteration)
                spent += time.perf_counter() - t0
                nc = ev.nash_conv(tree, ev.policy_to_slots(tree, solver.average_policy(), default="uniform"))
                rows.append((name, sampling, m, spent, nc))
                print(f"{name:<50} {sampling}  {m:>8}  {spent:8.1f} s  NashConv {nc:.4g}", flush=True)
    with (out / "mccfr_convergence.csv").open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["game", "sampling", "iterations", "seconds", "nash_conv"])
        w.writerows(rows)

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(dict.fromkeys(r[0] for r in rows))
    fig, axes = plt.subplots(1, len(names), figsize=(5 * len(names), 4), squeeze=False)
    for ax, name in zip(axes[0], names):
        for sampling, label in (("es", "external sampling"), ("os", "outcome sampling")):
            pts = [(r[2], r[4]) for r in rows if r[0] == name and r[1] == sampling and r[2] > 0]
            ax.loglog([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        uniform = next(r[4] for r in rows if r[0] == name)
        ax.axhline(uniform, color="grey", linestyle=":", label="uniform policy")
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("iterations")
        ax.set_ylabel("NashConv")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "mccfr_convergence.png", dpi=120)
    print(f"wrote {out / 'mccfr_convergence.csv'} and {out / 'mccfr_convergence.png'}")


if __name__ == "__main__":
    main()
