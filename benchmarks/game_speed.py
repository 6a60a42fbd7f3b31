"""Random-playout speed of kibitz games beside OpenSpiel's python_kuhn_poker.

Both are measured in the same run, alternating in rounds so that machine
noise hits both alike; the ratio is what to quote, never a lone time.

    python benchmarks/game_speed.py [--seconds S] [--games g1,g2] [--rounds R] [--out FILE]

The steps ratios are the README's speed row, written to ``--out``
(kibitz.experiments.speed).

A step is one apply_action (chance or player) including the legal-action or
chance-outcome query that picks it; a clone is ``state.clone()`` of a state
from the middle of a random game.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pyspiel
from open_spiel.python.games import kuhn_poker  # noqa: F401  (registers python_kuhn_poker)

BASELINE = "python_kuhn_poker"


def playout_steps(game, seconds: float, rng: np.random.Generator, observe: bool = False) -> float:
    """Random playouts for ``seconds``; returns steps per second. With
    ``observe`` each decision also reads the mover's observation tensor
    (benchmarks/batched_speed.py)."""
    steps = 0
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while time.perf_counter() < deadline:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                action = outcomes[int(rng.integers(len(outcomes)))][0]
            else:
                if observe:
                    state.observation_tensor(state.current_player())
                legal = state.legal_actions()
                action = legal[int(rng.integers(len(legal)))]
            state.apply_action(action)
            steps += 1
    return steps / (time.perf_counter() - t0)


def decision_points(game, rng: np.random.Generator, count: int, seats=None) -> list:
    """Decision points with two or more legal moves, one from each of
    ``count`` games: random play, or ``seats()``'s agents (a new list of one
    agent a seat for each game), chance by its probabilities."""
    out = []
    while len(out) < count:
        bots = None if seats is None else seats()
        state = game.new_initial_state()
        found = []
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                probs = np.array([p for _, p in outcomes])
                state.apply_action(outcomes[int(rng.choice(len(outcomes), p=probs / probs.sum()))][0])
                continue
            legal = state.legal_actions()
            if len(legal) > 1:
                found.append(state.clone())
            if bots is None:
                state.apply_action(legal[int(rng.integers(len(legal)))])
            else:
                state.apply_action(bots[state.current_player()].step(state))
        if found:
            out.append(found[int(rng.integers(len(found)))])
    return out


def mid_game_states(game, rng: np.random.Generator, count: int = 20):
    states = []
    for _ in range(count):
        state = game.new_initial_state()
        path = []
        while not state.is_terminal():
            path.append(state.clone())
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                action = outcomes[int(rng.integers(len(outcomes)))][0]
            else:
                legal = state.legal_actions()
                action = legal[int(rng.integers(len(legal)))]
            state.apply_action(action)
        states.append(path[len(path) // 2])
    return states


def clones_per_second(game, seconds: float, rng: np.random.Generator) -> float:
    states = mid_game_states(game, rng)
    n = 0
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while time.perf_counter() < deadline:
        for s in states:
            s.clone()
        n += len(states)
    return n / (time.perf_counter() - t0)


def measure(names, seconds: float, rounds: int, seed: int = 0):
    """Returns {name: (steps/s, clones/s)}, best of ``rounds`` alternating runs."""
    rng = np.random.default_rng(seed)
    loaded = {name: pyspiel.load_game(name) for name in [BASELINE, *names]}
    best = {name: [0.0, 0.0] for name in loaded}
    for _ in range(rounds):
        for name, game in loaded.items():
            best[name][0] = max(best[name][0], playout_steps(game, seconds, rng))
            best[name][1] = max(best[name][1], clones_per_second(game, seconds / 2, rng))
    return {k: tuple(v) for k, v in best.items()}


def main(argv=None):
    # imported here: benchmarks/frozen_speed.py loads this file beside another games/ folder
    from kibitz import games
    from kibitz.experiments import speed

    run = speed.Run()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0, help="seconds per measurement")
    parser.add_argument("--rounds", type=int, default=3, help="alternating rounds (best kept)")
    parser.add_argument("--games", default=",".join(sorted(games.REGISTRY)),
                        help="comma-separated game strings (default: every kibitz game)")
    parser.add_argument("--out", default=speed.default_out("game_speed"),
                        help="the README's speed row (JSON; default: %(default)s)")
    args = parser.parse_args(argv)
    names = [g for g in args.games.split(",") if g]
    results = measure(names, args.seconds, args.rounds)
    base_steps, base_clones = results[BASELINE]
    print(f"{'game':<40} {'steps/s':>10} {'ratio':>7} {'clones/s':>10} {'ratio':>7}")
    for name, (steps, clones) in results.items():
        print(f"{name:<40} {steps:>10.0f} {steps / base_steps:>7.2f} "
              f"{clones:>10.0f} {clones / base_clones:>7.2f}")
    print(f"(ratios against {BASELINE}, measured in this run; target steps ratio >= 0.5)")
    ratios = ", ".join(f"{speed.label(name)} {results[name][0] / base_steps:.2f}x" for name in names)
    run.write(args.out, "random playouts, steps/s", f"vs `{BASELINE}`: {ratios}", ">= 0.5x",
              data={name: {"steps_per_s": s, "clones_per_s": c} for name, (s, c) in results.items()})
    return results


if __name__ == "__main__":
    main()
