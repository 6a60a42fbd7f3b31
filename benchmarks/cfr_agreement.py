"""How long kibitz's CFR/CFR+ and OpenSpiel's C++ solvers stay numerically equal.

    python benchmarks/cfr_agreement.py [--game leduc_poker] [--algorithm cfr+] [--out FILE]

Runs both side by side and prints NashConv of each average policy at
checkpoints with the absolute difference (see docs/solvers/cfr.md). The
differences are the README's speed row, written to ``--out``
(kibitz.experiments.speed).
"""

import argparse

import pyspiel

from kibitz import games  # noqa: F401
from kibitz.experiments import speed
from kibitz.solvers import compile_tree, make_config, nash_conv
from kibitz.solvers.cfr import CFRSolver

REFERENCE = {"cfr": pyspiel.CFRSolver, "cfr+": pyspiel.CFRPlusSolver}


def main(argv=None):
    run = speed.Run()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="leduc_poker")
    parser.add_argument("--algorithm", choices=sorted(REFERENCE), default="cfr+")
    parser.add_argument("--checkpoints", default="10,50,100,200,400,1000")
    parser.add_argument("--out", default=speed.default_out("cfr_agreement"),
                        help="the README's speed row (JSON; default: %(default)s)")
    args = parser.parse_args(argv)
    rows = []
    game = pyspiel.load_game(args.game)
    tree = compile_tree(game)
    ours, theirs = CFRSolver(tree, make_config(args.algorithm)), REFERENCE[args.algorithm](game)
    print(f"{'iterations':>10}  {'kibitz':>14}  {'openspiel':>14}  {'|difference|':>12}")
    done = 0
    for mark in (int(x) for x in args.checkpoints.split(",")):
        while done < mark:
            ours.iterate()
            theirs.evaluate_and_update_policy()
            done += 1
        a = nash_conv(tree, ours.average_policy())
        b = pyspiel.nash_conv(game, theirs.average_policy())
        print(f"{mark:>10,}  {a:>14.9g}  {b:>14.9g}  {abs(a - b):>12.3g}")
        rows.append({"iterations": mark, "kibitz": a, "openspiel": b, "difference": abs(a - b)})
    diffs = ", ".join(f"{r['difference']:.1e} at {r['iterations']:,}" for r in rows)
    run.write(args.out, "CFR agreement",
              f"|NashConv difference| from `pyspiel.{REFERENCE[args.algorithm].__name__}` "
              f"on {speed.label(args.game)}, {args.algorithm}: {diffs} iterations", "", data=rows)


if __name__ == "__main__":
    main()
