"""Tree-compiler speed and memory: the fast walkers beside the reference walker.

The walkers of :func:`kibitz.solvers.tree.compile_tree` compile each game
in the same run, without the on-disk cache, alternating in rounds so that
machine noise hits all alike: the reference walker (the pyspiel API, a
clone per child), the direct one (a kibitz game's Python rules; also with
``workers=2``, two processes) and the default one (``auto``: the compiled
walk of a game with compiled rules, which makes no strings), whose tree's
information-state strings are then made (``strings``: the replay a policy
file asks for, timed on its own). The ratios of nodes per second to the
reference walker's are what to quote, never a lone figure; the
two-process figure needs two free cores (``--cfr-only`` skips the
walkers). Then, on the compiled tree, CFR+ in three solvers taking
turns, one iteration each, ``--cfr-iterations`` times: one thread of the
compact layout (float32, the default from a million nodes), the same in
float64 (``working_dtype``), and two threads (``threads=2``); printed are
the ratios of their best and of their median iteration times: the
two-core speed-up, and float32's gain (it needs two free cores too).

Memory, in bytes per node: ``tree`` is the compiled tree's arrays (the
information-state strings excluded); ``CFR+`` is everything resident while
CFR+ runs, the tree's arrays plus the solver's working arrays, in the
default layout on one thread (``CFRSolver.layout``: ``fast`` below
1,000,000 nodes, ``compact`` from there) and in the compact layout.

    python benchmarks/compile_speed.py [--rounds R] [--games "g1;g2"] [--cfr-iterations N] [--cfr-only]
                                       [--out FILE]

Games: the small configuration of every kibitz game (``spec.small``) and
leduc_poker. The README's speed row goes to ``--out`` (default
docs/results/speed/compile_speed.json, with ``--cfr-only``
compile_speed_cfr.json; kibitz.experiments.speed) and the table of ratios
for docs/solvers/cfr.md beside it, with the suffix ``.md``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyspiel

from kibitz import games
from kibitz.experiments import speed
from kibitz.solvers import _kernels
from kibitz.solvers.cfr import ALGORITHMS, CFRSolver
from kibitz.solvers.tree import ReplayedStrings, _direct_walk, compile_tree

#: (column, walker, workers)
WALKERS = (("reference", "reference", 1), ("direct", "direct", 1), ("direct2", "direct", 2),
           ("auto", "auto", 1))


def default_games() -> list[str]:
    return [spec.small for spec in games.REGISTRY.values()] + ["leduc_poker"]


def cfr_times(tree, iterations: int) -> dict:
    """Ratios of best and median CFR+ iteration times (see the module
    docstring): ``threads`` one compact thread over two threads, ``float32``
    float64 over float32 on one thread."""
    cfg = ALGORITHMS["cfr+"]
    solvers = {"f32": CFRSolver(tree, cfg, layout="compact"),
               "f64": CFRSolver(tree, cfg, layout="compact", working_dtype=np.float64),
               "two": CFRSolver(tree, cfg, threads=2)}
    times = {k: [] for k in solvers}
    for s in solvers.values():
        s.iterate()
    for _ in range(iterations):
        for k, s in solvers.items():
            t0 = time.perf_counter()
            s.iterate()
            times[k].append(time.perf_counter() - t0)
    best = {k: min(v) for k, v in times.items()}
    med = {k: float(np.median(v)) for k, v in times.items()}
    return {"threads_best": best["f32"] / best["two"], "threads_median": med["f32"] / med["two"],
            "float32_best": best["f64"] / best["f32"], "float32_median": med["f64"] / med["f32"]}


def bench(game_string: str, rounds: int, cfr_iterations: int, cfr_only: bool) -> dict:
    """Best time of each walker over ``rounds`` alternating rounds (none with
    ``cfr_only``: the tree comes from the cache), memory, and the CFR+
    ratios of :func:`cfr_times`."""
    game = pyspiel.load_game(game_string)
    walkers = [w for w in WALKERS if w[1] != "direct" or _direct_walk(game)]
    best = {column: float("nan") if cfr_only else float("inf") for column, _, _ in WALKERS + (("strings",) * 3,)}
    tree = compile_tree(game) if cfr_only else None
    if not cfr_only:
        compile_tree(game, use_cache=False)  # loads the compiled walk's machine code, untimed
    for r in range(0 if cfr_only else rounds):
        order = walkers if r % 2 == 0 else walkers[::-1]
        for column, walker, workers in order:
            t0 = time.perf_counter()
            tree = compile_tree(game, use_cache=False, walker=walker, workers=workers)
            best[column] = min(best[column], time.perf_counter() - t0)
            if column == "auto":
                t0 = time.perf_counter()
                list(tree.infoset_strings)
                made = isinstance(tree.infoset_strings, ReplayedStrings)
                best["strings"] = min(best["strings"], time.perf_counter() - t0 if made else 0.0)
    nodes = tree.num_nodes
    one = CFRSolver(tree, ALGORITHMS["cfr+"])
    compact = CFRSolver(tree, ALGORITHMS["cfr+"], layout="compact")
    return {"game": game_string, "nodes": nodes, "tree_bytes": tree.nbytes / nodes,
            "cfr_bytes": (tree.nbytes + one.nbytes()) / nodes, "layout": one.layout,
            "compact_bytes": (tree.nbytes + compact.nbytes()) / nodes,
            **{f"{column}_nodes_per_s": nodes / best[column] for column, _, _ in WALKERS},
            "direct_ratio": best["reference"] / best["direct"],
            "direct2_ratio": best["reference"] / best["direct2"],
            "ratio": best["reference"] / best["auto"],
            "strings_ratio": best["reference"] / (best["auto"] + best["strings"]),
            **cfr_times(tree, cfr_iterations)}


def _times(ratio: float) -> str:
    """``2.30x``, or ``-`` for a walker that did not run (a game that is not
    kibitz's, or ``--cfr-only``)."""
    return f"{ratio:.2f}x" if np.isfinite(ratio) and ratio > 0 else "-"


def walker_table(results: list[dict]) -> list[str]:
    """docs/solvers/cfr.md's table of the walkers' ratios to the reference walker."""
    lines = ["| configuration | nodes | compiled | with strings | direct | direct, 2 processes |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in results:
        lines.append(f"| {speed.label(r['game'])} | {r['nodes']:,} | {_times(r['ratio'])} | "
                     f"{_times(r['strings_ratio'])} | {_times(r['direct_ratio'])} | {_times(r['direct2_ratio'])} |")
    return lines


def threads_table(results: list[dict], iterations: int) -> list[str]:
    """docs/solvers/cfr.md's table of two CFR+ threads against one, and float32 against float64."""
    lines = ["| tree | nodes | iterations | two threads vs one, best | median | float32 vs float64, best | median |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in results:
        lines.append(f"| {speed.label(r['game'])} | {r['nodes']:,} | {iterations} | {r['threads_best']:.2f}x | "
                     f"{r['threads_median']:.2f}x | {r['float32_best']:.2f}x | {r['float32_median']:.2f}x |")
    return lines


def write_row(run, args, results: list[dict]) -> None:
    nodes = f"{min(r['nodes'] for r in results):,}-{max(r['nodes'] for r in results):,} nodes"
    if args.cfr_only:
        ratios = ", ".join(f"{speed.label(r['game'])} {r['threads_best']:.2f}x/{r['threads_median']:.2f}x"
                           for r in results)
        run.write(args.out, f"CFR+ on two threads vs one ({nodes})",
                  f"best/median iteration time, one thread of the same compact layout: {ratios}; "
                  "it needs two free cores",
                  ">= 1.6x (issue 24)", data=results, table=threads_table(results, args.cfr_iterations))
    else:
        ratios = ", ".join(f"{speed.label(r['game'])} {_times(r['ratio'])}" for r in results)
        run.write(args.out, f"tree compiler, nodes/s ({nodes})",
                  f"default walker (compiled rules) vs the reference walker (pyspiel API, a clone per child): "
                  f"{ratios}", ">= 10x", data=results, table=walker_table(results))


def main(argv=None) -> None:
    run = speed.Run()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds of the walkers per game (best of)")
    ap.add_argument("--games", default=None, help="games separated by ';' (default: see above)")
    ap.add_argument("--cfr-iterations", type=int, default=30,
                    help="CFR+ iterations of each solver, taking turns")
    ap.add_argument("--cfr-only", action="store_true", help="skip the walkers (the tree from the cache)")
    ap.add_argument("--out", default=None, help="the README's speed row (JSON; default: "
                    f"{speed.default_out('compile_speed')}, with --cfr-only {speed.default_out('compile_speed_cfr')})")
    args = ap.parse_args(argv)
    args.out = args.out or speed.default_out("compile_speed_cfr" if args.cfr_only else "compile_speed")
    if args.rounds < 1 or args.cfr_iterations < 1:
        ap.error(f"--rounds {args.rounds}, --cfr-iterations {args.cfr_iterations}: both must be >= 1")
    todo = args.games.split(";") if args.games else default_games()
    _kernels.warmup(threads=True)
    print(f"{'game':58} {'nodes':>10} {'reference/s':>12} {'direct':>7} {'2 proc':>7} "
          f"{'default/s':>10} {'ratio':>7} {'+strings':>8} | {'B/node: tree':>12} {'CFR+':>5} {'(layout)':>9} "
          f"{'compact':>7} | {'CFR+ 2 threads: best':>20} {'median':>6} | {'float32: best':>13} {'median':>6}")
    results = []
    for gs in todo:
        r = bench(gs, args.rounds, args.cfr_iterations, args.cfr_only)
        results.append(r)
        print(f"{gs:58} {r['nodes']:>10,} {r['reference_nodes_per_s']:>12,.0f} "
              f"{_times(r['direct_ratio']):>7} {_times(r['direct2_ratio']):>7} "
              f"{r['auto_nodes_per_s']:>10,.0f} {_times(r['ratio']):>7} {_times(r['strings_ratio']):>8} | "
              f"{r['tree_bytes']:>12.1f} "
              f"{r['cfr_bytes']:>5.1f} {'(' + r['layout'] + ')':>9} {r['compact_bytes']:>7.1f} | "
              f"{r['threads_best']:>19.2f}x {r['threads_median']:>5.2f}x | "
              f"{r['float32_best']:>12.2f}x {r['float32_median']:>5.2f}x", flush=True)
    write_row(run, args, results)


if __name__ == "__main__":
    main()
