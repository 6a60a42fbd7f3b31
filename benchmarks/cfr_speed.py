"""CFR+ speed of kibitz's compiled trees beside OpenSpiel's C++ CFR+.

The baseline is ``pyspiel.CFRPlusSolver`` on
``pyspiel.load_game_as_cached_tree(game)``, OpenSpiel's fastest exact path
for a game (for a Python game it removes the Python calls from the walk).
Both solvers are timed in the same run, alternating in rounds so that
machine noise hits both alike; the ratio of times per iteration is what to
quote, never a lone time.

    python benchmarks/cfr_speed.py [--seconds S] [--rounds R] [--games g1;g2] [--out FILE]

Games: leduc_poker, liars_dice(numdice=1) and the small configuration
(``spec.small``) of every kibitz game registered in ``games.REGISTRY``.
Also printed: compile speed (nodes/s, without the on-disk cache) and memory
per node (the compiled tree's arrays plus the CFR+ solver's working arrays).
The ratios are the README's speed row, written to ``--out``
(kibitz.experiments.speed).
"""

from __future__ import annotations

import argparse
import time

import pyspiel

from kibitz import games
from kibitz.experiments import speed
from kibitz.solvers import _kernels
from kibitz.solvers.cfr import ALGORITHMS, CFRSolver
from kibitz.solvers.tree import compile_tree

OPENSPIEL_GAMES = ["leduc_poker", "liars_dice(numdice=1)"]


def timed_iterations(step, seconds: float) -> tuple[int, float]:
    """Calls ``step`` for at least ``seconds`` (and at least once)."""
    count = 0
    t0 = time.perf_counter()
    while True:
        step()
        count += 1
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds:
            return count, elapsed


def bench(game_string: str, seconds: float, rounds: int) -> dict:
    game = pyspiel.load_game(game_string)
    t0 = time.perf_counter()
    tree = compile_tree(game, use_cache=False)
    compile_s = time.perf_counter() - t0
    ours = CFRSolver(tree, ALGORITHMS["cfr+"])
    ours.iterate()
    t0 = time.perf_counter()
    cached = pyspiel.load_game_as_cached_tree(game_string)
    cache_s = time.perf_counter() - t0
    theirs = pyspiel.CFRPlusSolver(cached)
    theirs.evaluate_and_update_policy()
    ours_n = ours_t = theirs_n = theirs_t = 0.0
    for _ in range(rounds):
        n, t = timed_iterations(ours.iterate, seconds)
        ours_n, ours_t = ours_n + n, ours_t + t
        n, t = timed_iterations(theirs.evaluate_and_update_policy, seconds)
        theirs_n, theirs_t = theirs_n + n, theirs_t + t
    per_ours, per_theirs = ours_t / ours_n, theirs_t / theirs_n
    return {
        "game": str(game), "nodes": tree.num_nodes, "infosets": tree.num_infosets,
        "compile_nodes_per_s": tree.num_nodes / compile_s, "os_cache_s": cache_s,
        "bytes_per_node": (tree.nbytes + ours.nbytes()) / tree.num_nodes,
        "ours_its": 1 / per_ours, "theirs_its": 1 / per_theirs, "ratio": per_theirs / per_ours,
    }


def main(argv=None):
    run = speed.Run()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=0.5, help="seconds per solver per round")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--games", default=None,
                    help="';'-separated game strings (default: the OpenSpiel pair and every "
                         "registered kibitz game's small configuration)")
    ap.add_argument("--out", default=speed.default_out("cfr_speed"),
                    help="the README's speed row (JSON; default: %(default)s)")
    args = ap.parse_args(argv)
    if args.games:
        todo = [g for g in args.games.split(";") if g]
    else:
        todo = OPENSPIEL_GAMES + [spec.small for _, spec in sorted(games.REGISTRY.items())]
    _kernels.warmup()
    print(f"CFR+ time per iteration, kibitz compiled tree vs pyspiel.CFRPlusSolver on "
          f"load_game_as_cached_tree ({args.rounds} rounds x {args.seconds} s each)")
    header = (f"{'game':44} {'nodes':>10} {'infosets':>9} {'compile n/s':>12} {'B/node':>7} "
              f"{'kibitz it/s':>12} {'OpenSpiel it/s':>15} {'ratio':>7}")
    print(header)
    print("-" * len(header))
    worst, done = None, []
    for gs in todo:
        try:
            r = bench(gs, args.seconds, args.rounds)
        except Exception as e:  # noqa: BLE001 - one game's failure must not hide the others
            print(f"{gs:44} failed: {type(e).__name__}: {e}")
            continue
        name = r["game"] if len(r["game"]) <= 44 else gs[:44]
        print(f"{name:44} {r['nodes']:>10,} {r['infosets']:>9,} {r['compile_nodes_per_s']:>12,.0f} "
              f"{r['bytes_per_node']:>7.0f} {r['ours_its']:>12,.1f} {r['theirs_its']:>15,.2f} "
              f"{r['ratio']:>6.1f}x", flush=True)
        done.append((gs, r))
        worst = r["bytes_per_node"] if worst is None else max(worst, r["bytes_per_node"])
    if worst:
        print(f"memory: at most {worst:.0f} bytes per node here, so a tree of about "
              f"{8e9 / worst / 1e6:,.0f} million nodes fits in 8 GB once compiled (estimate; "
              f"compiling holds extra Python-side buffers)")
    ratios = ", ".join(f"{speed.label(gs)} {r['ratio']:.1f}x" for gs, r in done)
    failed = [gs for gs in todo if gs not in dict(done)]
    run.write(args.out, "CFR+ time per iteration",
              f"vs `pyspiel.CFRPlusSolver` on `load_game_as_cached_tree`: {ratios}"
              + (f"; failed: {', '.join(failed)}" if failed else ""),
              ">= 30x (leduc_poker, liars_dice)", data=dict(done))


if __name__ == "__main__":
    main()
