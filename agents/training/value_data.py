"""Training data for AIVAT's value network (``solvers/value_net.py``).

Games are played as a tournament plays them (``agents/matches/tournament.py``'s
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

For the variance objective (:func:`collect_nodes`), a game gives the nodes
a tournament corrects, as :class:`NodeRecorder` sees them in
:func:`play_recorded`, with deals from ``(SEED_OFFSET + seed, 43, i)``.
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
    from kibitz.agents.matches.tournament import DealChance, play_recorded

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
    parts, seconds = _play_games(lambda i: play_examples(game, specs, i, features, seed=seed, keep=keep), start,
                                 games, on_game, should_stop, len)
    return concat(parts, features.size, game.num_players()), seconds


def _play_games(play, start: int, games: int, on_game, should_stop, count) -> tuple[list, float]:
    """``play(i)`` for the games ``start .. start + games - 1`` (``should_stop()``
    asked before each), ``on_game(i, count(part))`` after each; the parts and the seconds."""
    parts = []
    t0 = time.perf_counter()
    for i in range(start, start + games):
        if should_stop is not None and should_stop():
            break
        parts.append(play(i))
        if on_game is not None:
            on_game(i, count(parts[-1]))
    return parts, time.perf_counter() - t0


# ---------------------------------------------------------------- the variance objective's data
#: the variance objective's games draw their deals from ``(SEED_OFFSET + seed, 43, i)``: never a
#: tournament's deals (``(seed, deal)``, agents/matches/tournament.py) nor the MSE objective's data
SEED_OFFSET = 10 ** 6


class NodeRecorder:
    """Stands in for :class:`kibitz.solvers.aivat.Corrections` in
    :func:`play_recorded`: it sees the nodes a tournament corrects, skips
    the same ones (fewer than two actions of positive probability) and
    records each one's features and candidates instead of its term."""

    def __init__(self, features: value_net.Features):
        self.features = features
        self.x, self.action, self.kind, self.weight, self.node = [], [], [], [], []

    def at_node(self, state, probabilities, taken: int, chance: bool) -> None:
        items = list(probabilities.items()) if isinstance(probabilities, dict) else list(probabilities)
        items = [(int(a), float(p)) for a, p in items if p > 0.0]
        if len(items) < 2:
            return
        p = np.array([q for _, q in items])
        p /= p.sum()
        n = len(self.x)
        self.x.append(self.features(state).astype(np.float16))
        for (a, _), q in zip(items, p):
            self.action.append(a)
            self.weight.append(q - (1.0 if a == int(taken) else 0.0))
        self.kind.extend([value_net.CHANCE if chance else value_net.DECISION] * len(items))
        self.node.extend([n] * len(items))

    def games(self, returns, game_index: int) -> value_net.NodeGames:
        width = self.features.size
        return value_net.NodeGames(
            x=np.array(self.x, np.float16).reshape(len(self.x), width),
            node_game=np.zeros(len(self.x), np.int32), cand_node=np.array(self.node, np.int32),
            cand_action=np.array(self.action, np.int32), cand_kind=np.array(self.kind, np.int8),
            cand_weight=np.array(self.weight, np.float32),
            returns=np.asarray(returns, np.float32)[None, :], game=np.array([game_index], np.int32))


def play_nodes(game, specs: Sequence[str], game_index: int, features: value_net.Features,
               seed: int = 0) -> value_net.NodeGames:
    """Game ``game_index`` (deal ``(SEED_OFFSET + seed, 43, game_index)``, the
    seats as :func:`play_examples` fills them) and the nodes AIVAT corrects in it."""
    from kibitz.agents.matches.tournament import DealChance, play_recorded

    words = SEED_OFFSET + seed
    agents = [make_agent(spec, game, s, seed=agent_seed(words, game_index, s))
              for s, spec in enumerate(seat_specs(specs, game_index, game.num_players()))]
    recorder = NodeRecorder(features)
    _, returns = play_recorded(game, agents, DealChance((words, 43, game_index)), recorder)
    return recorder.games(returns, game_index)


def collect_nodes(game, specs: Sequence[str], games: int, seed: int = 0, encoding: str = value_net.ENCODING,
                  start: int = 0, on_game: Callable[[int, int], None] | None = None,
                  should_stop: Callable[[], bool] | None = None) -> tuple[value_net.NodeGames, float]:
    """:func:`collect` for the variance objective: the corrected nodes of
    games ``start .. start + games - 1`` (:func:`play_nodes`) and the seconds
    they took; ``on_game(index, nodes)`` after each game."""
    if not specs:
        raise ValueError("no agent specs; give one or more, e.g. trained,heuristic")
    features = value_net.Features(game, encoding)
    parts, seconds = _play_games(lambda i: play_nodes(game, specs, i, features, seed=seed), start, games, on_game,
                                 should_stop, lambda part: len(part.node_game))
    return value_net.concat_node_games(parts, features.size, game.num_players()), seconds


# ---------------------------------------------------------------- the state-value network's stream
def position_chunks(game, specs: Sequence[str], seed: int, *, chunk: int = 8192, per_game: int = 6,
                    batch: int = 512, start: int = 0):
    """Examples for :mod:`kibitz.solvers.state_value`, streamed: an endless
    iterator of ``(features, returns)``, each chunk from ``chunk`` fresh
    games on the batched environment (``kibitz.games.batched``) among the
    agents ``specs`` (their batched forms: ``random``, ``trained``,
    ``net(FILE)``, three games' ``heuristic``), seated as ``batched_match`` seats them, and ``per_game``
    positions of each game drawn uniformly without replacement among its
    positions before a move (chance and decisions; fewer in a shorter game),
    their features (``state_value.feature_size``) and the game's returns.
    Chunk ``k`` (from ``start``) depends only on the seed and ``k``: its
    games come from ``BatchedEnv(seed=(seed, 47, k))`` and the picks from
    ``numpy.random.default_rng((seed, 48, k))``."""
    k = start
    while True:
        yield position_sample(game, specs, chunk, per_game, np.random.SeedSequence((seed, 47, k)), batch=batch)
        k += 1


def position_sample(game, specs: Sequence[str], games: int, per_game: int, seed_sequence, *,
                    batch: int = 512) -> tuple[np.ndarray, np.ndarray]:
    """``(features, returns)`` of ``per_game`` positions of each of ``games``
    batched games among ``specs`` (:func:`position_chunks`), from ``seed_sequence``."""
    from kibitz.agents.matches.batched_match import batched_agents, step_agents
    from kibitz.agents.matches.tournament import arrangements
    from kibitz.games.batched import BatchedEnv
    from kibitz.solvers.state_value import compiled_features, feature_size

    rules, loops = compiled_features(game)
    agents, encoding = batched_agents(list(specs), game)
    n, size = game.num_players(), game.observation_tensor_size()
    env_seed, pick_seed, act_seed = seed_sequence.generate_state(3, np.uint64)
    seatings = np.array(arrangements(len(specs), n), dtype=np.int64)
    rows = min(batch, games)
    seating = seatings[np.arange(rows) % len(seatings)]
    env = BatchedEnv(game, rows, seed=int(env_seed), observe=encoding is not None,
                     encoding=encoding or "observation_tensor", record=True)
    rng = np.random.default_rng(int(act_seed))
    width = env.final_history.shape[1]
    hist = np.zeros((games, width), np.int64)
    lens = np.zeros(games, np.int64)
    rets = np.zeros((games, n), np.float64)
    env.reset()
    done = 0
    actions = np.zeros(rows, dtype=np.int64)
    while done < games:
        step_agents(env, agents, seating, rng, actions)
        for b in np.flatnonzero(env.ended)[:games - done]:
            hist[done], lens[done], rets[done] = env.final_history[b], env.final_len[b], env.returns[b]
            done += 1
    picker = np.random.default_rng(int(pick_seed))
    counts = np.minimum(per_game, lens)
    first = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    picks = np.concatenate([np.sort(picker.choice(int(m), int(c), replace=False)) for m, c in zip(lens, counts)])
    x = np.zeros((int(first[-1]), feature_size(game)), np.float32)
    loops.replay_features(rules.initial, rules.params, n, size, hist, lens, picks.astype(np.int64), first, x)
    return x, np.repeat(rets, counts, axis=0)
