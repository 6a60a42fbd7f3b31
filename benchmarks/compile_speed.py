"""Tree-compiler speed: the fast walker beside the reference walker.

Both walkers of :func:`kibitz.solvers.tree.compile_tree` compile each game
(the fast one also with ``workers=2``, two processes) in the same run, without the on-disk cache, alternating in rounds so that
machine noise hits both alike; the ratio of nodes per second is what to
quote, never a lone figure; the two-process figure needs two free cores. Also printed: the compiled tree's bytes per node
(its arrays; the information-state strings excluded).

    python benchmarks/compile_speed.py [--rounds R] [--games "g1;g2"]

Games: the small configuration of every kibitz game (``spec.small``) and
leduc_poker.
"""

from __future__ import annotations

import argparse
import time

import pyspiel

from kibitz import games
from kibitz.solvers.tree import compile_tree

#: (column, walker, workers)
WALKERS = (("reference", "reference", 1), ("auto", "auto", 1), ("auto2", "auto", 2))


def default_games() -> list[str]:
    return [spec.small for spec in games.REGISTRY.values()] + ["leduc_poker"]


def bench(game_string: str, rounds: int) -> dict:
    """Best time of each walker over ``rounds`` alternating rounds."""
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
    return {"game": game_string, "nodes": nodes, "bytes_per_node": tree.nbytes / nodes,
            **{f"{column}_nodes_per_s": nodes / best[column] for column, _, _ in WALKERS},
            "ratio": best["reference"] / best["auto"], "ratio2": best["reference"] / best["auto2"]}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds per game (best of)")
    ap.add_argument("--games", default=None, help="games separated by ';' (default: see above)")
    args = ap.parse_args(argv)
    todo = args.games.split(";") if args.games else default_games()
    print(f"{'game':58} {'nodes':>10} {'reference/s':>12} {'fast/s':>12} {'ratio':>7} "
          f"{'2 proc/s':>12} {'ratio':>7} {'B/node':>7}")
    for gs in todo:
        r = bench(gs, args.rounds)
        print(f"{gs:58} {r['nodes']:>10,} {r['reference_nodes_per_s']:>12,.0f} "
              f"{r['auto_nodes_per_s']:>12,.0f} {r['ratio']:>6.2f}x "
              f"{r['auto2_nodes_per_s']:>12,.0f} {r['ratio2']:>6.2f}x {r['bytes_per_node']:>7.1f}")


if __name__ == "__main__":
    main()
