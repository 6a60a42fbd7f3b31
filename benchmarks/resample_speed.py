"""IS-MCTS simulations per second in Pub: a search's worlds replayed on the
compiled rules without checks (``adapter.State._replay``) beside the same
replay move by move through ``_apply_action`` (each move checked against
the legal moves or chance outcomes), alternating in one run.

    python benchmarks/resample_speed.py [--sims 300] [--positions 4] [--rounds 3] [--out FILE]

Both sides run the same search (kibitz's SO-ISMCTS, compiled rollouts) on
the same positions (benchmarks/ismcts_speed.py draws them); only how
``PubState.resample_from_infostate(..., internal=True)`` replays the world's
moves differs. The ratio is written to ``--out`` (default
docs/results/speed/resample_speed.json; kibitz.experiments.speed).
"""

from __future__ import annotations

import argparse

import numpy as np
import pyspiel

from kibitz import games  # noqa: F401  (registers the games)
from kibitz.experiments import speed
from kibitz.games import adapter
from ismcts_speed import positions, time_ours  # benchmarks/ is on the path of a script run from it


def _checked(state, actions) -> None:
    """The replay before: every move through ``_apply_action``."""
    for a in actions:
        state._apply_action(a)


def main(argv=None):
    run = speed.Run()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sims", type=int, default=300)
    ap.add_argument("--positions", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=speed.default_out("resample_speed"))
    args = ap.parse_args(argv)
    game = pyspiel.load_game("pub")
    states = positions(game, np.random.default_rng(args.seed), args.positions, "random")
    unchecked = adapter.State._replay
    sides = {"checked": _checked, "unchecked": unchecked}
    best = dict.fromkeys(sides, 0.0)
    time_ours(game, states, 50, 2.0, args.seed)  # warm up
    try:
        for _ in range(args.rounds):
            for name, replay in sides.items():
                adapter.State._replay = replay
                n, seconds = time_ours(game, states, args.sims, 2.0, args.seed)
                best[name] = max(best[name], n / seconds)
    finally:
        adapter.State._replay = unchecked
    ratio = best["unchecked"] / best["checked"]
    print(f"pub ismcts(sims={args.sims}) sims/s: worlds replayed unchecked {best['unchecked']:.0f}, "
          f"checked {best['checked']:.0f}, ratio {ratio:.2f}")
    run.write(args.out, "IS-MCTS simulations/s, worlds replayed on the compiled rules",
              f"pub, {args.sims} simulations, {args.positions} positions: unchecked replay vs the move-by-move "
              f"checked one: {ratio:.2f}x", ">= 1x", data=best)


if __name__ == "__main__":
    main()
