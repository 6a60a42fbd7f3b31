"""Random play with observation tensors at the default sizes: the batched
environment on the compiled rules beside the pyspiel API.

Both play uniformly random games for the same wall time, alternating in one
run (so machine noise hits both alike). A *step* is one move or chance
outcome applied. The pyspiel side (benchmarks/game_speed.py's playouts)
does what RL code does through the API: at each decision it reads the
legal actions and the mover's ``observation_tensor``, at each chance node
the outcomes (and picks one uniformly); the batched side
(``kibitz.games.batched.BatchedEnv``, ``--batch`` games at once) hands out
the same for every game in each step. The ratio of steps per second is what
to quote.

    python benchmarks/batched_speed.py [--games pub,underdog] [--seconds S] [--rounds R] [--batch B] [--out FILE]
                                       [--baseline now|frozen]

With ``--baseline frozen`` the pyspiel side is the games as they were
before their rules were written once (``kibitz.experiments.frozen_rules.COMMIT``,
read from git and run in a process of their own, as benchmarks/frozen_speed.py
runs them): issue 47's "at least 50x today's pyspiel-API steps/s", today
being that commit (default ``--out``: batched_speed_frozen.json).

The ratios are the README's speed row, written to ``--out`` (kibitz.experiments.speed).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyspiel

from kibitz import games
from kibitz.experiments import speed
from kibitz.games.batched import BatchedEnv
from game_speed import playout_steps  # benchmarks/ is on the path of a script run from it


def batched_rate(game, seed: int, seconds: float, batch: int) -> float:
    env = BatchedEnv(game, batch, seed=seed)
    env.reset()
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while time.perf_counter() < deadline:
        env.play_random(10)
    return env.steps / (time.perf_counter() - t0)


def main(argv=None):
    run = speed.Run()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", default=None, help="comma-separated game strings (default: every game; with "
                    "--baseline frozen, the games of frozen_rules.COMMIT)")
    ap.add_argument("--seconds", type=float, default=3.0, help="seconds per side per round")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--batch", type=int, default=256, help="games stepped at once")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--baseline", choices=("now", "frozen"), default="now",
                    help="the pyspiel API of the games now, or of the games at frozen_rules.COMMIT")
    ap.add_argument("--out", default=None, help="the README's speed row (JSON; default: "
                    "docs/results/speed/batched_speed.json, batched_speed_frozen.json with --baseline frozen)")
    args = ap.parse_args(argv)
    frozen = None
    if args.baseline == "frozen":
        import frozen_speed
        from kibitz.experiments import frozen_rules

        frozen = frozen_rules.frozen_games(), frozen_rules.cache_folder() / "numba"
        commit = frozen_rules.COMMIT[:7]
    if args.games is None:  # a game added since the frozen commit (showdown) has no baseline there
        args.games = ",".join(frozen_rules.GAMES if frozen else sorted(games.REGISTRY))
    rates = {}
    print(f"{'game':<14} {'batched steps/s':>15} {'pyspiel API steps/s':>20} {'ratio':>7}")
    for name in args.games.split(","):
        game = pyspiel.load_game(name)
        batched_rate(game, args.seed, 0.1, args.batch)  # compiled before the clock runs
        ours, api = [], []
        for r in range(args.rounds):
            ours.append(batched_rate(game, args.seed + r, args.seconds, args.batch))
            if frozen is None:
                api.append(playout_steps(game, args.seconds, np.random.default_rng(args.seed + r), observe=True))
            else:  # the same measure (steps reading the observation tensor), in a process of the old games
                api.append(frozen_speed.measure_side(*frozen[:1], name, args.seconds, frozen[1])["observed"])
        a, b = float(np.mean(ours)), float(np.mean(api))
        print(f"{name:<14} {a:>15,.0f} {b:>20,.0f} {a / b:>6.0f}x", flush=True)
        rates[name] = {"batched_steps_per_s": a, "api_steps_per_s": b, "ratio": a / b}
    figures = ", ".join(f"{speed.label(name)} {r['ratio']:.0f}x" for name, r in rates.items())
    if frozen is None:
        run.write(args.out or speed.default_out("batched_speed"), "random play with observation tensors, steps/s at "
                  "default size (batched environment)", f"`BatchedEnv` ({args.batch} games) vs the pyspiel API: "
                  f"{figures}", ">= 50x", data=rates)
    else:
        run.write(args.out or speed.default_out("batched_speed_frozen"), "random play with observation tensors, "
                  "steps/s at default size (batched environment), against the API before issue 47",
                  f"`BatchedEnv` ({args.batch} games) vs the pyspiel API of the games at `{commit}`: {figures}",
                  ">= 50x", data=rates)


if __name__ == "__main__":
    main()
