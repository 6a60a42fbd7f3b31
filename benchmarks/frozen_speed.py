"""pyspiel-API speed of the games now against the games before their rules
were written once (issue 47): the ``games/`` of
``kibitz.experiments.frozen_rules.COMMIT``, read from git.

    python benchmarks/frozen_speed.py [--games underdog] [--seconds 2] [--rounds 3]

Each side runs in a process of its own (two copies of the games in one
process would register the same pyspiel names), built as the frozen-rules
check builds it (``frozen_rules._use_games``); the sides alternate, one
measurement per process, and each figure is the best of ``--rounds``. What
is measured is benchmarks/game_speed.py's: random playouts through the
pyspiel API (steps/s), clones of mid-game states (clones/s), and random
playouts that also read the mover's observation tensor (steps/s). The
ratios (now over before) are the README's speed row; the target is at
least 1 for playouts.

    python benchmarks/frozen_speed.py --ismcts 100 [--games pub,underdog] [--positions 6]

measures IS-MCTS instead: simulations per second of ``ISMCTS(sims=N)``
with its default options on the same decision points (one from each of
``--positions`` seeded random games), the search of that commit
(``solvers/`` read from git as ``games/`` is) against today's: issue 47's
"IS-MCTS simulations/s at least 3x today's at equal options".
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FROZEN_RULES = HERE.parent / "experiments" / "frozen_rules.py"
MEASURES = ("steps", "clones", "observed")


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ismcts_worker(folder: str, solvers: str, game_string: str, seconds: float, sims: int, count: int) -> None:
    """IS-MCTS simulations per second of one side (its games and its
    search), printed as one JSON line."""
    import importlib.util as util

    import numpy as np
    import pyspiel

    _load("kibitz_frozen_rules", FROZEN_RULES)._use_games(Path(folder))
    spec = util.spec_from_file_location("kibitz.solvers", Path(solvers) / "__init__.py",
                                        submodule_search_locations=[solvers])
    package = util.module_from_spec(spec)
    sys.modules["kibitz.solvers"] = package
    spec.loader.exec_module(package)
    from kibitz.solvers.ismcts import ISMCTS

    game_speed = _load("kibitz_game_speed", HERE / "game_speed.py")
    game = pyspiel.load_game(game_string)
    points = game_speed.decision_points(game, np.random.default_rng(0), count)  # the same points on both sides
    rng = np.random.default_rng(1)
    searches = {}  # one search object a seat, as an ismcts agent keeps it

    def one(state):
        me = state.current_player()
        if me not in searches:
            searches[me] = ISMCTS(game, me, rng, sims=sims)
        searches[me].search(state)

    for state in points:  # warm up: numba's cache, the first worlds
        one(state)
    done, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for state in points:
            one(state)
            done += sims
    print(json.dumps({"ismcts": done / (time.perf_counter() - t0)}))


def worker(folder: str, game_string: str, seconds: float) -> None:
    """One side's measurement, printed as one JSON line."""
    import numpy as np
    import pyspiel

    _load("kibitz_frozen_rules", FROZEN_RULES)._use_games(Path(folder))
    game_speed = _load("kibitz_game_speed", HERE / "game_speed.py")
    game = pyspiel.load_game(game_string)
    rng = np.random.default_rng(0)
    game_speed.playout_steps(game, 0.3, rng)  # warm up: numba's cache, the first states
    game_speed.playout_steps(game, 0.3, rng, observe=True)
    print(json.dumps({"steps": game_speed.playout_steps(game, seconds, rng),
                      "clones": game_speed.clones_per_second(game, seconds / 2, rng),
                      "observed": game_speed.playout_steps(game, seconds, rng, observe=True)}))


def measure_side(folder: Path, game_string: str, seconds: float, numba_cache: Path | None,
                 ismcts: tuple | None = None) -> dict:
    """One side's figures, measured in a process of its own; ``ismcts``:
    ``(solvers folder, sims, positions)`` to measure the search instead."""
    env = dict(os.environ)
    if numba_cache is not None:
        env["NUMBA_CACHE_DIR"] = str(numba_cache)
    job = (["--worker", str(folder), game_string, str(seconds)] if ismcts is None else
           ["--ismcts-worker", str(folder), str(ismcts[0]), game_string, str(seconds), str(ismcts[1]), str(ismcts[2])])
    out = subprocess.run([sys.executable, "-P", str(Path(__file__).resolve()), *job],
                         capture_output=True, text=True, env=env, cwd=folder.parent)
    if out.returncode != 0:
        raise SystemExit(f"the {folder} side failed on {game_string}:\n{out.stderr.strip()}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    from kibitz.experiments import frozen_rules, speed

    run = speed.Run()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default="underdog", help="comma-separated game strings (default: %(default)s)")
    parser.add_argument("--seconds", type=float, default=2.0, help="seconds per measurement")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (best kept)")
    parser.add_argument("--ismcts", type=int, default=0, metavar="SIMS",
                        help="measure IS-MCTS at SIMS simulations a move (games and search of both sides)")
    parser.add_argument("--positions", type=int, default=6, help="with --ismcts: decision points searched")
    parser.add_argument("--out", default=None,
                        help="the README's speed row (JSON; default: docs/results/speed/frozen_speed.json, "
                             "with --ismcts ismcts_frozen_speed.json)")
    args = parser.parse_args(argv)
    sides = {"before": (frozen_rules.frozen_games(), frozen_rules.cache_folder() / "numba"),
             "now": (frozen_rules.current_games(), None)}
    names = [g for g in args.games.split(",") if g]
    if args.ismcts:
        return _ismcts_main(args, run, sides, names)
    best = {name: {side: dict.fromkeys(MEASURES, 0.0) for side in sides} for name in names}
    for _ in range(args.rounds):
        for name in names:
            for side, (folder, cache) in sides.items():
                figures = measure_side(folder, name, args.seconds, cache)
                for k in MEASURES:
                    best[name][side][k] = max(best[name][side][k], figures[k])
    print(f"games now against the games of {frozen_rules.COMMIT[:7]}, best of {args.rounds} alternating rounds")
    print(f"{'game':<28} {'measure':<10} {'before':>10} {'now':>10} {'ratio':>7}")
    for name in names:
        for k in MEASURES:
            b, a = best[name]["before"][k], best[name]["now"][k]
            print(f"{name:<28} {k:<10} {b:>10.0f} {a:>10.0f} {a / b:>7.2f}")
    figures = ", ".join(f"{speed.label(n)} steps {best[n]['now']['steps'] / best[n]['before']['steps']:.2f}x, "
                        f"clones {best[n]['now']['clones'] / best[n]['before']['clones']:.2f}x" for n in names)
    run.write(args.out or speed.default_out("frozen_speed"), "pyspiel-API playouts on the rules written once", f"vs the games at "
              f"`{frozen_rules.COMMIT[:7]}`: {figures}", ">= 1x", data=best)
    return best


def _ismcts_main(args, run, sides, names):
    from kibitz.experiments import frozen_rules, speed

    solvers = {"before": frozen_rules.frozen_games(part="solvers"), "now": HERE.parent / "solvers"}
    best = {name: {side: 0.0 for side in sides} for name in names}
    for _ in range(args.rounds):
        for name in names:
            for side, (folder, cache) in sides.items():
                figures = measure_side(folder, name, args.seconds, cache, (solvers[side], args.ismcts, args.positions))
                best[name][side] = max(best[name][side], figures["ismcts"])
    print(f"IS-MCTS ({args.ismcts} simulations) now against the games and search of {frozen_rules.COMMIT[:7]}, "
          f"best of {args.rounds} alternating rounds")
    print(f"{'game':<28} {'before':>10} {'now':>10} {'ratio':>7}")
    for name in names:
        b, a = best[name]["before"], best[name]["now"]
        print(f"{name:<28} {b:>10.0f} {a:>10.0f} {a / b:>7.2f}")
    figures = ", ".join(f"{speed.label(n)} {best[n]['now'] / best[n]['before']:.2f}x" for n in names)
    run.write(args.out or speed.default_out("ismcts_frozen_speed"), "IS-MCTS simulations/s against the search "
              f"before issue 47", f"vs the games and `solvers/` at `{frozen_rules.COMMIT[:7]}`, {args.ismcts} "
              f"simulations, {args.positions} positions: {figures}", ">= 3x", data=best)
    return best


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    elif len(sys.argv) > 1 and sys.argv[1] == "--ismcts-worker":
        ismcts_worker(sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7]))
    else:
        main()
