"""IS-MCTS simulations per second: a search's worlds replayed on the
compiled rules without checks (``adapter.State._apply_unchecked`` and
``_replay_unchecked``, the one compiled loop ``_common.replay`` plays an
internal replay with) beside the same replay move by move with
``_apply_action``'s check (each move looked up in the legal moves or chance
outcomes, built for it), alternating in one run.

    python benchmarks/resample_speed.py [--games pub,underdog] [--sims 300] [--positions 4] [--rounds 3] [--out FILE]

Both sides run the same search (kibitz's SO-ISMCTS as by default: its
simulations compiled, its worlds drawn in Python) on
the same positions (benchmarks/ismcts_speed.py draws them); only how
``resample_from_infostate(..., internal=True)`` replays the world's moves
differs. The ratio is written to ``--out`` (default
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


def main(argv=None):
    run = speed.Run()
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", default="pub,underdog,doubt_and_bet")
    ap.add_argument("--sims", type=int, default=300)
    ap.add_argument("--positions", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=speed.default_out("resample_speed"))
    args = ap.parse_args(argv)
    unchecked, replay = adapter.State._apply_unchecked, adapter.State._replay_unchecked

    def checked(state, action):  # _apply_action's check, then the move (swapping in _apply_action itself recurses)
        moves = state._c.moves if state._c.moves is not None else state.legal_moves()
        if action not in moves:
            raise ValueError(f"replayed move {action} is not legal")
        unchecked(state, action)

    def checked_replay(state, actions):  # a world's replay, each move checked (as before the compiled replay)
        for a in actions:
            checked(state, a)

    sides = {"checked": (checked, checked_replay), "unchecked": (unchecked, replay)}
    names = [g for g in args.games.split(",") if g]
    best = {name: dict.fromkeys(sides, 0.0) for name in names}
    try:
        for name in names:
            game = pyspiel.load_game(name)
            states = positions(game, np.random.default_rng(args.seed), args.positions, "random")
            time_ours(game, states, 50, 2.0, args.seed)  # warm up
            for _ in range(args.rounds):
                for side, (apply, whole) in sides.items():
                    adapter.State._apply_unchecked, adapter.State._replay_unchecked = apply, whole
                    n, seconds = time_ours(game, states, args.sims, 2.0, args.seed)
                    best[name][side] = max(best[name][side], n / seconds)
            adapter.State._apply_unchecked, adapter.State._replay_unchecked = unchecked, replay
            print(f"{name} ismcts(sims={args.sims}) sims/s: worlds replayed unchecked "
                  f"{best[name]['unchecked']:.0f}, checked {best[name]['checked']:.0f}, "
                  f"ratio {best[name]['unchecked'] / best[name]['checked']:.2f}", flush=True)
    finally:
        adapter.State._apply_unchecked, adapter.State._replay_unchecked = unchecked, replay
    ratios = ", ".join(f"{speed.label(n)} {b['unchecked'] / b['checked']:.2f}x" for n, b in best.items())
    run.write(args.out, "IS-MCTS simulations/s, worlds replayed on the compiled rules",
              f"{args.sims} simulations, {args.positions} positions: unchecked replay vs the checked one: "
              f"{ratios}", ">= 1x", data=best)

if __name__ == "__main__":
    main()
