"""Tree-compiler speed and memory: the fast walker beside the reference walker.

Both walkers of :func:`kibitz.solvers.tree.compile_tree` compile each game
(the fast one also with ``workers=2``, two processes) in the same run,
without the on-disk cache, alternating in rounds so that machine noise hits
both alike; the ratio of nodes per second is what to quote, never a lone
figure; the two-process figure needs two free cores. Then, on the compiled
tree, CFR+ on one thread (the solver's default layout) beside two threads
(``threads=2``) in the same run: the ratio of iteration times is the
two-core speed-up (it needs two free cores too: run this under
``/tmp/kz/quiet.sh`` or on an idle machine).

Memory, in bytes per node: ``tree`` is the compiled tree's arrays (the
information-state strings excluded); ``CFR+`` is everything resident while
CFR+ runs, the tree's arrays plus the solver's working arrays, in the
default layout on one thread (``CFRSolver.layout``: ``fast`` below
1,000,000 nodes, ``compact`` from there) and in the compact layout.

    python benchmarks/compile_speed.py [--rounds R] [--games "g1;g2"] [--cfr-seconds S]

Games: the small configuration of every kibitz game (``spec.small``) and
leduc_poker.
"""

from __future__ import annotations

import argparse
import time

import pyspiel

from kibitz import games
from kibitz.solvers import _kernels
from kibitz.solvers.cfr import ALGORITHMS, CFRSolver
from kibitz.solvers.tree import compile_tree

#: (column, walker, workers)
WALKERS = (("reference", "reference", 1), ("auto", "auto", 1), ("auto2", "auto", 2))


def default_games() -> list[str]:
    return [spec.small for spec in games.REGISTRY.values()] + ["leduc_poker"]


def per_iteration(solver: CFRSolver, seconds: float) -> float:
    """Seconds per CFR+ iteration, over at least ``seconds`` (and 2 iterations)."""
    count, t0 = 0, time.perf_counter()
    while count < 2 or time.perf_counter() - t0 < seconds:
        solver.iterate()
        count += 1
    return (time.perf_counter() - t0) / count


def bench(game_string: str, rounds: int, cfr_seconds: float) -> dict:
    """Best time of each walker over ``rounds`` alternating rounds, memory,
    and the best CFR+ iteration time on one and on two threads."""
    game = pyspiel.load_game(game_string)
    best = {column: float("inf") for column, _, _ in WALKERS}
    tree = None
    for r in range(rounds):
        order = WALKERS if r % 2 == 0 else WALKERS[::-1]
        for column, walker, workers in order:
            t0 = time.perf_counter()
            tree = compile_tree(game, use_cache=False, walker=walker, workers=workers)
            best[column] = min(best[column], time.perf_counter() - t0)
    nodes = tree.num_nodes
    one, two = CFRSolver(tree, ALGORITHMS["cfr+"]), CFRSolver(tree, ALGORITHMS["cfr+"], threads=2)
    compact = CFRSolver(tree, ALGORITHMS["cfr+"], layout="compact")
    one.iterate(), two.iterate()
    cfr = {"one": float("inf"), "two": float("inf")}
    for _ in range(rounds):
        cfr["one"] = min(cfr["one"], per_iteration(one, cfr_seconds))
        cfr["two"] = min(cfr["two"], per_iteration(two, cfr_seconds))
    return {"game": game_string, "nodes": nodes, "tree_bytes": tree.nbytes / nodes,
            "cfr_bytes": (tree.nbytes + one.nbytes()) / nodes, "layout": one.layout,
            "compact_bytes": (tree.nbytes + compact.nbytes()) / nodes,
            **{f"{column}_nodes_per_s": nodes / best[column] for column, _, _ in WALKERS},
            "ratio": best["reference"] / best["auto"], "ratio2": best["reference"] / best["auto2"],
            "cfr_speedup": cfr["one"] / cfr["two"]}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds per game (best of)")
    ap.add_argument("--games", default=None, help="games separated by ';' (default: see above)")
    ap.add_argument("--cfr-seconds", type=float, default=1.0,
                    help="seconds of CFR+ per thread count per round")
    args = ap.parse_args(argv)
    todo = args.games.split(";") if args.games else default_games()
    _kernels.warmup()
    print(f"{'game':58} {'nodes':>10} {'reference/s':>12} {'fast/s':>10} {'ratio':>7} "
          f"{'2 proc/s':>10} {'ratio':>7} | {'B/node: tree':>12} {'CFR+':>5} {'(layout)':>9} "
          f"{'compact':>7} | {'CFR+ 2 threads':>14}")
    for gs in todo:
        r = bench(gs, args.rounds, args.cfr_seconds)
        print(f"{gs:58} {r['nodes']:>10,} {r['reference_nodes_per_s']:>12,.0f} "
              f"{r['auto_nodes_per_s']:>10,.0f} {r['ratio']:>6.2f}x "
              f"{r['auto2_nodes_per_s']:>10,.0f} {r['ratio2']:>6.2f}x | {r['tree_bytes']:>12.1f} "
              f"{r['cfr_bytes']:>5.1f} {'(' + r['layout'] + ')':>9} {r['compact_bytes']:>7.1f} | "
              f"{r['cfr_speedup']:>13.2f}x", flush=True)


if __name__ == "__main__":
    main()
