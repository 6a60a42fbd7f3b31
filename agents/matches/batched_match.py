"""Matches on the batched environment among agents that have a batched form.

``batched_match(game, specs, games, seed)`` plays ``games`` games of a kibitz
game on :class:`kibitz.games.batched.BatchedEnv` (many games at once in
compiled code) among agents whose moves can be chosen for many games at
once: ``random`` (uniform over the legal moves) and the network agents
``trained`` and ``net(FILE)`` (one batched inference per agent and step,
through the file's onnxruntime model, on the encoding the network reads).
Seats rotate over the rows as in a tournament (``tournament.arrangements``),
each row keeping its seating for every game it plays, and each finished
game credits each agent seated with the mean of its seats' returns (as
``kibitz tournament``'s mean payoff). Pub's, Over/Under's, Underdog's and
Doubt and Bet's ``heuristic`` play batched too (:data:`BATCHED_HEURISTICS`;
Underdog's and Doubt and Bet's read the compiled positions); agents without
a batched form (``ismcts``, ``policy``) play through ``kibitz tournament``.

Unlike ``kibitz tournament`` the deals are not duplicated (every row draws
its own chance from the environment's generator) and single games are not
recorded: this is for many games fast (training data, quick strength
checks), and the same seed gives the same results.
"""

from __future__ import annotations

import numpy as np

from kibitz.agents.matches.tournament import arrangements
from kibitz.games.batched import ENCODINGS, POSITION, BatchedEnv
from kibitz.solvers.stats import mean_interval

#: the agent kinds that play batched
BATCHED_KINDS = ("random", "trained", "net(FILE)", "heuristic (pub, over_under, underdog, doubt_and_bet)")


def _pub_heuristic(game):
    """Pub's heuristic (agents/heuristics/pub.py) read from the ``compact``
    encoding, which carries the very numbers it compares (its costs block:
    take - draw on a turn, take both - keep drawn on the choice, each
    divided by the ranks: the sign is that of the difference): take when
    taking costs no more than the expected draw, take both when that costs
    less than keeping the drawn card. tests/test_batched_match.py checks it
    move for move against the Python heuristic."""
    from kibitz.games import pub

    offset = 0
    for name, size, _ in game.compact_tensor_layout():
        if name == "costs":
            break
        offset += size
    take_minus_draw, both_minus_keep = offset + 2, offset + 5

    def choose(obs, mask, rng):
        choosing = mask[:, pub.KEEP_DRAWN]
        on_choice = np.where(obs[:, both_minus_keep] < 0, pub.TAKE_BOTH, pub.KEEP_DRAWN)
        on_turn = np.where((obs[:, take_minus_draw] <= 0) | ~mask[:, pub.DRAW], pub.TAKE, pub.DRAW)
        return np.where(choosing, on_choice, on_turn)

    return choose


def _over_under_heuristic(game):
    """Over/Under's heuristic (agents/heuristics/over_under.py) read from the
    ``compact`` encoding. Predicting: among the stacks on the table, both
    directions, the highest chance of staying safe, then the least expected
    money claimed, then the lowest action. Giving: to the other seat with
    the lowest tally, the lowest seat on a tie (the mover is the one seat the
    give actions leave out).

    The heuristic compares float64 sums (``OverUnderState.prediction_odds``),
    which split some exact ties of P(safe) by their last bit (1% of its
    predictions at the defaults when it plays every seat), while the
    encoding's float32 odds keep them tied and so rank by the money. To play the heuristic's very moves
    the odds are recomputed here in float64, sum by sum in its order, from
    the integers the encoding carries exactly: each kind's cards left in the
    deck, each stack's top value and money. tests/test_batched_match.py
    checks it move for move against the Python heuristic."""
    from kibitz.games.over_under import GIVE

    r = game.rules
    n, S, K, KC, M = r.n, r.S, r.K, r.KC, r.total_money
    offset = {}
    at = 0
    for name, size, _ in game.compact_tensor_layout():
        offset[name] = at
        at += size
    stacks = offset["stacks"] + 11 * np.arange(S)
    deck = offset["deck"] + np.arange(KC)
    tallies = offset["seats"] + 5 * np.arange(n)
    full = np.array([r.copies] * K + [1] * (KC - K), dtype=np.float64)
    top_scale = max(r.vals[:K])
    vals = np.array(r.vals[:KC], dtype=np.int64)
    seats = np.arange(n)

    def predict(obs):
        on_table = obs[:, stacks] > 0.5
        top = np.rint(obs[:, stacks + 2].astype(np.float64) * top_scale).astype(np.int64)
        money = np.rint(obs[:, stacks + 4].astype(np.float64) * M).astype(np.int64)
        counts = np.rint(obs[:, deck].astype(np.float64) * full).astype(np.int64)
        left = np.maximum(counts.sum(axis=1), 1).astype(np.float64)[:, None]
        safe_o, cost_o, safe_u, cost_u = (np.zeros((len(obs), S)) for _ in range(4))
        for k in range(KC):  # adding 0.0 where a kind is absent leaves every sum as it is
            p = counts[:, k:k + 1] / left
            if k < K:
                v = vals[k]
                safe_o += np.where(top <= v, p, 0.0)
                safe_u += np.where(top >= v, p, 0.0)
                cost_o += np.where(top > v, p * (money + v), 0.0)
                cost_u += np.where(top < v, p * (money + v), 0.0)
            elif k == K or n > 1:
                safe_o += p
                safe_u += p
            else:
                cost_o += p * money
                cost_u += p * money
        # action 2s: over, 2s + 1: under
        safe = np.stack([safe_o, safe_u], axis=2).reshape(len(obs), 2 * S)
        cost = np.stack([cost_o, cost_u], axis=2).reshape(len(obs), 2 * S)
        valid = np.repeat(on_table, 2, axis=1)
        safe = np.where(valid, safe, -np.inf)
        best = valid & (safe == safe.max(axis=1, keepdims=True))
        cost = np.where(best, cost, np.inf)
        return np.argmax(best & (cost == cost.min(axis=1, keepdims=True)), axis=1)  # the first: lowest action

    def give(obs, mask):
        legal = mask[:, r.give_base:r.give_base + n]
        me = np.argmin(legal, axis=1)  # the one seat not given to
        by_position = np.rint(obs[:, tallies].astype(np.float64) * M).astype(np.int64)
        tally = by_position[np.arange(len(obs))[:, None], (seats[None, :] - me[:, None]) % n]
        key = np.where(legal, tally * n + seats, np.iinfo(np.int64).max)
        return r.give_base + np.argmin(key, axis=1)

    def choose(obs, mask, rng):
        giving = obs[:, offset["phase"] + GIVE] > 0.5
        actions = np.zeros(len(obs), dtype=np.int64)
        if (~giving).any():
            actions[~giving] = predict(obs[~giving])
        if giving.any():
            actions[giving] = give(obs[giving], mask[giving])
        return actions

    return choose


def _underdog_heuristic(game):
    """Underdog's heuristic on the compiled positions
    (agents/heuristics/underdog_batched.py): it samples, so it plays the
    Python heuristic's policy, not its very moves."""
    from kibitz.agents.heuristics.underdog_batched import batched_heuristic

    return batched_heuristic(game)


def _doubt_and_bet_heuristic(game):
    """Doubt and Bet's heuristic on the compiled positions
    (agents/heuristics/doubt_and_bet_batched.py): deterministic, the Python
    heuristic's very moves (tests/test_doubt_and_bet_batched.py)."""
    from kibitz.agents.heuristics.doubt_and_bet_batched import batched_heuristic

    return batched_heuristic(game)


#: the heuristics with a batched form: game -> (the encoding it reads, or
#: :data:`POSITION`; a maker of ``choose(obs, mask, rng)``)
BATCHED_HEURISTICS = {"pub": ("compact", _pub_heuristic), "over_under": ("compact", _over_under_heuristic),
                      "underdog": (POSITION, _underdog_heuristic),
                      "doubt_and_bet": (POSITION, _doubt_and_bet_heuristic)}


class _Batched:
    """One agent's batched policy: ``choose(obs, mask, rng)`` -> a move per row."""

    def __init__(self, spec: str, game):
        from kibitz.agents.net_agent import load_network, trained_path

        self.spec = spec.strip()
        self.network = None
        self.heuristic = None
        self._encoding = None
        if self.spec == "random":
            return
        short = game.get_type().short_name
        if self.spec == "heuristic" and short in BATCHED_HEURISTICS:
            self._encoding, make = BATCHED_HEURISTICS[short]
            self.heuristic = make(game)
            return
        if self.spec == "trained":
            path = trained_path(game)
        elif self.spec.startswith("net(") and self.spec.endswith(")"):
            path = self.spec[len("net("):-1]
        else:
            raise ValueError(f"{spec!r} has no batched form; allowed: {', '.join(BATCHED_KINDS)} "
                             "(the others play through kibitz tournament)")
        self.network = load_network(str(path))
        if self.network.game != str(game):
            raise ValueError(f"{spec}: a network for {self.network.game}, not for {game}")
        if self.network.encoding not in ENCODINGS:
            raise ValueError(f"{spec}: reads the {self.network.encoding} encoding; the batched environment "
                             f"hands out {', '.join(ENCODINGS)}")

    @property
    def encoding(self):
        return self.network.encoding if self.network is not None else self._encoding

    def choose(self, obs, mask, rng: np.random.Generator) -> np.ndarray:
        """A move per row: one uniform number each, the first legal move
        whose cumulative probability (in ascending action order) exceeds it.
        The sums run over each row's legal moves only (Doubt and Bet's rows
        have a few hundred of 29,896), which gives the very floats of a
        cumulative sum over every action, illegal ones adding 0."""
        if self.heuristic is not None:  # Pub's and Over/Under's draw nothing from rng
            return self.heuristic(obs, mask, rng)
        at, legal = np.nonzero(mask)  # row by row, each row's legal moves ascending
        count = np.bincount(at, minlength=len(mask))
        col = np.arange(len(legal)) - np.repeat(np.cumsum(count) - count, count)
        if self.network is None:
            p = 1.0 / count[at]  # mask / mask.sum()
        else:
            probs = self.network.run(obs, mask.astype(np.float32))[1].astype(np.float64) * mask
            p = probs[at, legal] / probs.sum(axis=1)[at]
        probs = np.zeros((len(mask), count.max()))
        probs[at, col] = p
        moves = np.zeros(probs.shape, np.int64)
        moves[at, col] = legal
        cum = np.cumsum(probs, axis=1)
        u = rng.random(len(probs))[:, None] * cum[:, -1:]
        # rounding may leave u at the very end: the last legal move then
        picked = np.minimum((cum <= u).sum(axis=1), count - 1)
        return moves[np.arange(len(moves)), picked]


def batched_agents(specs: list[str], game) -> tuple[list[_Batched], str | None]:
    """The batched forms of ``specs`` and the one encoding their networks
    read (None: no network); ValueError naming the spec that has none, or
    when the networks read different encodings."""
    agents = [_Batched(spec, game) for spec in specs]
    encodings = {a.encoding for a in agents if a.encoding not in (None, POSITION)}
    if len(encodings) > 1:
        raise ValueError(f"the networks read different encodings ({', '.join(sorted(encodings))}); "
                         "the batched environment hands out one")
    return agents, (encodings.pop() if encodings else None)


def step_agents(env, agents: list[_Batched], seating: np.ndarray, rng: np.random.Generator,
                actions: np.ndarray) -> None:
    """One step of ``env``: each row's mover is the agent ``seating[row, player]``,
    each agent choosing once for all the rows where it moves."""
    mover = seating[np.arange(env.batch), env.player]
    for i, agent in enumerate(agents):
        at = np.flatnonzero(mover == i)
        if len(at):
            obs = env.pos[at] if agent.encoding == POSITION else env.obs[at]
            actions[at] = agent.choose(obs, env.mask[at], rng)
    env.step(actions)


def batched_match(game, specs: list[str], games: int, seed: int = 0, batch: int = 256) -> dict:
    """Plays ``games`` games among ``specs`` (see the module's doc); returns
    ``{"game", "games", "agents": [{"spec", "games", "mean", "ci95": [lo, hi]}]}``,
    each agent's mean payoff per game it sat in (the mean of its seats'
    returns), with Student's t interval."""
    if not specs:
        raise ValueError("specs: give at least one agent spec")
    if not isinstance(games, int) or games < 1:
        raise ValueError(f"games={games!r}; allowed: a whole number >= 1")
    agents, encoding = batched_agents(specs, game)
    n = game.num_players()
    seatings = np.array(arrangements(len(specs), n), dtype=np.int64)
    rows = min(batch, max(len(seatings), games))
    seating = seatings[np.arange(rows) % len(seatings)]  # row -> seat -> agent
    env = BatchedEnv(game, rows, seed=seed, observe=encoding is not None,
                     encoding=encoding or "observation_tensor")
    rng = np.random.default_rng(seed)
    returns: list[list[float]] = [[] for _ in specs]
    env.reset()
    done = 0
    actions = np.zeros(rows, dtype=np.int64)
    while done < games:
        step_agents(env, agents, seating, rng, actions)
        for b in np.flatnonzero(env.ended):
            if done == games:
                break
            done += 1
            for i in set(seating[b].tolist()):  # an agent's payoff: the mean of its seats' returns
                returns[i].append(float(env.returns[b][seating[b] == i].mean()))
    out = []
    for spec, values in zip(specs, returns):
        mean, lo, hi, _ = mean_interval(values)
        out.append({"spec": spec, "games": len(values), "mean": mean, "ci95": [lo, hi]})
    return {"game": str(game), "games": done, "agents": out}
