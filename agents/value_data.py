"""Training data for AIVAT's value network (``solvers/value_net.py``).

Games are played as a tournament plays them (``agents/tournament.py``'s
:func:`play_recorded` with its :class:`DealChance`), the seats held by a
list of agent specs rotated: in game ``i`` seat ``s`` holds
``specs[(i + s) % len(specs)]``. Deal ``i`` is drawn from the seed words
``(seed, 43, i)`` and the agent in seat ``s`` gets the seed
``SeedSequence((seed, 43, i, s))``, so game ``i`` depends on nothing but
the seed, the specs and ``i``: the same seed gives the same examples, and
``start`` continues a collection.

Every node of a game's trajectory, chance and decision alike, gives one
example: the parent's features ``x(h)`` (:class:`solvers.value_net.Features`,
computed by replaying the recorded moves), the action taken, the node's
kind and the game's final returns. With ``keep`` below 1 each node is kept
with that probability (drawn from ``(seed, 44, i)``): the nodes of one game
share its returns, so a few of them carry most of what it teaches, for a
fraction of the memory.
"""

from __future__ import annotations

import time
from typing import Callable, Sequence

import numpy as np

from kibitz.agents.registry import make_agent
from kibitz.solvers import value_net


def seat_specs(specs: Sequence[str], game_index: int, num_seats: int) -> list[str]:
    """The specs in seats ``0..num_seats-1`` of game ``game_index``: the list rotated by the game's index."""
    return [specs[(game_index + s) % len(specs)] for s in range(num_seats)]


def agent_seed(seed: int, game_index: int, seat: int) -> int:
    return int(np.random.SeedSequence((seed, 43, game_index, seat)).generate_state(1, dtype=np.uint32)[0])


def play_examples(game, specs: Sequence[str], game_index: int, features: value_net.Features, seed: int = 0,
                  keep: float = 1.0) -> value_net.Examples:
    """The examples of game ``game_index`` (the module docstring)."""
    from kibitz.agents.tournament import DealChance, play_recorded

    n = game.num_players()
    agents = [make_agent(spec, game, s, seed=agent_seed(seed, game_index, s))
              for s, spec in enumerate(seat_specs(specs, game_index, n))]
    moves, returns = play_recorded(game, agents, DealChance((seed, 43, game_index)))
    kept = np.ones(len(moves), bool) if keep >= 1 else \
        np.random.default_rng((seed, 44, game_index)).random(len(moves)) < keep
    rows = np.flatnonzero(kept)
    x = np.empty((len(rows), features.size), np.float16)
    kind = np.empty(len(rows), np.int8)
    state = game.new_initial_state()
    j = 0
    for i, move in enumerate(moves):
        if kept[i]:
            x[j] = features(state)
            kind[j] = value_net.CHANCE if state.is_chance_node() else value_net.DECISION
            j += 1
        state.apply_action(move)
    return value_net.Examples(x=x, action=np.asarray(moves, np.int32)[rows], kind=kind,
                              returns=np.tile(np.asarray(returns, np.float32), (len(rows), 1)),
                              game=np.full(len(rows), game_index, np.int32))


def concat(parts: Sequence[value_net.Examples], input_size: int, num_players: int) -> value_net.Examples:
    """The examples of ``parts`` in order (an empty set of the given sizes for none)."""
    if not parts:
        return value_net.Examples(x=np.zeros((0, input_size), np.float16), action=np.zeros(0, np.int32),
                                  kind=np.zeros(0, np.int8), returns=np.zeros((0, num_players), np.float32),
                                  game=np.zeros(0, np.int32))
    return value_net.Examples(*(np.concatenate([getattr(p, f) for p in parts])
                                for f in ("x", "action", "kind", "returns", "game")))


def collect(game, specs: Sequence[str], games: int, seed: int = 0, encoding: str = value_net.ENCODING,
            keep: float = 1.0, start: int = 0, on_game: Callable[[int, int], None] | None = None,
            should_stop: Callable[[], bool] | None = None) -> tuple[value_net.Examples, float]:
    """The examples of games ``start .. start + games - 1`` and the seconds
    they took; ``on_game(index, examples)`` after each game; ``should_stop()``,
    asked between games, ends the collection early (the games played are
    kept). ValueError for no specs or ``keep`` outside (0, 1]."""
    if not specs:
        raise ValueError("no agent specs; give one or more, e.g. trained,heuristic")
    if not 0 < keep <= 1:
        raise ValueError(f"keep={keep!r}: allowed a share in (0, 1]")
    features = value_net.Features(game, encoding)
    parts = []
    t0 = time.perf_counter()
    for i in range(start, start + games):
        if should_stop is not None and should_stop():
            break
        parts.append(play_examples(game, specs, i, features, seed=seed, keep=keep))
        if on_game is not None:
            on_game(i, len(parts[-1]))
    return concat(parts, features.size, game.num_players()), time.perf_counter() - t0
