"""AIVAT: a game's payoffs corrected by control variates (Burch, Schmid,
Moravcik, Morrill and Bowling, 2018).

One game is a path ``h_0, h_1, ..., z`` of histories. At a node ``h`` where
the probabilities ``p(.|h)`` of the next action are known (every chance
node; a decision of an agent that samples from the policy it reports), and
with ``V`` any function of the history giving a value per player, the
term::

    c(h) = sum_b p(b|h) V(h.b) - V(h.a)        (a: the action taken)

has expectation zero given ``h``, whatever ``V`` is. So
``returns(z) + sum_h c(h)`` has the expectation of ``returns(z)``: an
unbiased estimate, and with a ``V`` close to the players' expected returns
most of the luck of the deal and of the agents' own dice cancels. Nodes whose
probabilities are unknown (IS-MCTS, a human) get no term; leaving a node out
never biases the estimate, it only keeps that node's variance.

What must hold for unbiasedness: the chance outcomes follow
``chance_outcomes()`` given the history (kibitz's duplicate deals do,
agents.tournament.DealChance), an agent's reported policy is the one its move
was drawn from, with randomness independent of ``V``, and ``V`` at a node
does not look at the outcome taken there (it is a function of ``h.b``
alone). ``V`` itself may be anything: a poor one costs variance, not bias.

A value function implements :class:`ValueFunction` (``child_values``: the
values of all children of a node at once, the cost that matters); one that
can also evaluate every node of a finished game in one call
(``game_child_values``) has :class:`Corrections` defer the terms to the
game's end. This
module has the generic ones: :class:`ZeroValue` (``zero``, the plain payoff),
:class:`StateValue` (any callable on states, children by clone and apply),
:class:`RolloutValue` (``rollout(N)``: uniformly random playouts),
:class:`ExactValue` (``exact``: the expected returns under the seated
agents' policies, small games). The value network is solvers/value_net.py.
"""

from __future__ import annotations

import hashlib
from typing import Callable, Protocol, Sequence

import numpy as np


class ValueFunction(Protocol):
    #: what results record: "zero", "rollout(8)", "net(FILE)", ...
    name: str

    def child_values(self, state, actions: Sequence[int]) -> np.ndarray:
        """``(len(actions), num_players)`` float64: the value of ``state``
        after each of ``actions`` (outcomes at a chance node, legal actions
        at a decision). Must not change ``state``."""


class ZeroValue:
    """``V = 0``: every term is zero, the estimate is the plain payoff."""

    name = "zero"

    def __init__(self, num_players: int):
        self.num_players = num_players

    def child_values(self, state, actions):
        return np.zeros((len(actions), self.num_players))


class StateValue:
    """A value function from ``values(states) -> (len(states), num_players)``:
    the children are made by cloning and applying each action (generic, and
    slow: tens of microseconds a child before ``values`` runs)."""

    def __init__(self, values: Callable[[list], np.ndarray], name: str = "callable"):
        self.values = values
        self.name = name

    def child_values(self, state, actions):
        children = []
        for a in actions:
            child = state.clone()
            child.apply_action(int(a))
            children.append(child)
        return np.asarray(self.values(children), dtype=np.float64)


def _history_seed(state) -> int:
    """A seed that is a function of the history alone (a state's, or a list
    of moves: so that a rollout's value is a function of ``h.b``, as
    unbiasedness needs)."""
    text = ",".join(map(str, state if isinstance(state, list) else state.history())).encode()
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little")


class RolloutValue(StateValue):
    """``rollout(N)``: the mean returns of ``N`` playouts, chance outcomes
    drawn by their probabilities and every player's move uniformly at
    random; seeded by the history, so the value is a function of the history.
    Each child plays ``N`` whole games: on the game's compiled rules where it
    has them (the kibitz games: the child's position made by the compiled
    ``apply``, the playouts in numba, ``kibitz.games.batched``), else
    through the pyspiel API (the same distribution, other draws)."""

    def __init__(self, game, playouts: int = 8):
        self.game = game
        self.playouts = int(playouts)
        super().__init__(self._values, name=f"rollout({self.playouts})")
        from kibitz.games import search
        self._rules = None
        if search.COMPILED in search.capabilities(game) and game.compiled_rules().position_of is not None:
            from kibitz.games.batched import compiled_loops
            self._rules = game.compiled_rules()
            self._playout = compiled_loops(self._rules).playout

    def child_values(self, state, actions):
        if self._rules is None:
            return super().child_values(state, actions)
        from kibitz.games.compiled_random import seeded_rng
        r, n = self._rules, self.game.num_players()
        parent = r.position_of(state)
        history = list(state.history())
        out = np.zeros((len(actions), n))
        ret = np.empty(n)
        for i, a in enumerate(actions):
            child = parent.copy()
            r.apply(child, r.params, int(a))
            rng = seeded_rng(_history_seed(history + [int(a)]))
            for _ in range(self.playouts):
                s = child.copy()
                self._playout(s, r.params, r.max_branch, rng, ret)
                out[i] += ret
        return out / self.playouts

    def _values(self, states):
        n = self.game.num_players()
        out = np.zeros((len(states), n))
        for i, state in enumerate(states):
            rng = np.random.default_rng(_history_seed(state))
            for _ in range(self.playouts):
                s = state.clone()
                while not s.is_terminal():
                    if s.is_chance_node():
                        outcomes = s.chance_outcomes()
                        k = rng.choice(len(outcomes), p=np.array([p for _, p in outcomes]))
                        s.apply_action(int(outcomes[k][0]))
                    else:
                        legal = s.legal_actions()
                        s.apply_action(int(legal[rng.integers(len(legal))]))
                out[i] += s.returns()
        return out / self.playouts


class ExactValue:
    """``exact``: the expected returns under given policies, every node's
    by enumerating the game from the root (small games only). With the
    policies of the agents seated, every game's AIVAT estimate is the exact
    expected value (the terms telescope): the check of the estimator.
    ``policies[p](state)``: player ``p``'s ``{action: probability}``."""

    name = "exact"

    def __init__(self, game, policies: Sequence[Callable], max_nodes: int = 1_000_000):
        self.table: dict[tuple, np.ndarray] = {}
        self.policies = policies
        self.max_nodes = max_nodes
        self._walk(game.new_initial_state())

    def _walk(self, state) -> np.ndarray:
        if len(self.table) >= self.max_nodes:
            raise ValueError(f"exact: the game has over {self.max_nodes:,} nodes; exact values are for small "
                             f"games")
        if state.is_terminal():
            value = np.asarray(state.returns(), dtype=np.float64)
        else:
            items = state.chance_outcomes() if state.is_chance_node() else \
                list(self.policies[state.current_player()](state).items())
            value = 0.0
            for a, p in items:
                child = state.clone()
                child.apply_action(int(a))
                value = value + float(p) * self._walk(child)
        self.table[tuple(state.history())] = value
        return value

    def child_values(self, state, actions):
        h = tuple(state.history())
        return np.array([self.table[h + (int(a),)] for a in actions])


class Corrections:
    """The terms of one game as it is played: :meth:`at_node` before each
    move with known probabilities, :meth:`finish` once the game has ended;
    ``chance`` and ``action`` are the sums of the terms at chance nodes and
    at decisions, per player.

    With a value function that evaluates a whole game at once (one with
    ``game_child_values(moves, steps, first, actions)``: the state-value
    network, solvers/state_value.py) the terms are deferred: :meth:`at_node`
    only records the node (its step in the game's moves, its actions and
    their probabilities, the one taken) and :meth:`finish` evaluates every
    node's children in one call, the same terms to rounding (``nodes``
    counts the nodes corrected once they are evaluated). Any other value
    function is called at each node."""

    def __init__(self, value: ValueFunction, num_players: int):
        self.value = value
        self._chance = np.zeros(num_players)
        self._action = np.zeros(num_players)
        self.nodes = 0
        #: deferred value functions: the nodes recorded, by field (their actions and probabilities one after
        #: the other); None: the terms are made at once
        self._pending: dict[str, list] | None = None
        if hasattr(value, "game_child_values"):
            self._pending = {k: [] for k in ("step", "size", "taken", "chance", "actions", "p")}

    @property
    def chance(self) -> np.ndarray:
        self._check_finished()
        return self._chance

    @property
    def action(self) -> np.ndarray:
        self._check_finished()
        return self._action

    def _check_finished(self) -> None:
        if self._pending and self._pending["step"]:
            raise RuntimeError(f"{len(self._pending['step'])} AIVAT nodes recorded and not evaluated: call "
                               "Corrections.finish(moves) when the game ends")

    def at_node(self, state, probabilities, taken: int, chance: bool) -> None:
        """``probabilities``: ``[(action, p)]`` (or a dict) of the node's
        next action, of which ``taken`` was drawn."""
        pending = self._pending
        if pending is not None:  # recorded as given: finish reads them all at once
            if isinstance(probabilities, dict):
                pending["actions"].extend(probabilities)
                pending["p"].extend(probabilities.values())
            elif len(probabilities):
                actions, p = zip(*probabilities)
                pending["actions"].extend(actions)
                pending["p"].extend(p)
            pending["size"].append(len(probabilities))
            pending["step"].append(len(state.history()))
            pending["taken"].append(taken)
            pending["chance"].append(chance)
            return
        items = list(probabilities.items()) if isinstance(probabilities, dict) else list(probabilities)
        items = [(int(a), float(p)) for a, p in items if p > 0.0]
        if len(items) < 2:  # one possible action: the term is zero
            return
        actions = [a for a, _ in items]
        p = np.array([q for _, q in items])
        p /= p.sum()
        values = self.value.child_values(state, actions)
        term = p @ values - values[actions.index(int(taken))]
        if chance:
            self._chance += term
        else:
            self._action += term
        self.nodes += 1

    def finish(self, moves: Sequence[int]) -> None:
        """Adds the terms of the nodes recorded since the last call (deferred
        value functions; nothing to do otherwise), the same nodes and terms
        as :meth:`at_node` makes at once: actions of probability 0 left out,
        nodes of one possible action skipped. ``moves``: every action of the
        game from its start, chance outcomes included."""
        pending = self._pending
        if not pending or not pending["step"]:
            return
        self._pending = {k: [] for k in pending}
        sizes = np.array(pending["size"], np.int64)
        node_of = np.repeat(np.arange(len(sizes)), sizes)
        actions, p = np.array(pending["actions"], np.int64), np.array(pending["p"], np.float64)
        possible = p > 0.0
        counts = np.bincount(node_of[possible], minlength=len(sizes))
        kept = counts >= 2  # one possible action: the term is zero
        if not kept.any():
            return
        rows = possible & kept[node_of]
        number = np.cumsum(kept) - 1  # the kept nodes' new numbers
        node_of, actions, p = number[node_of[rows]], actions[rows], p[rows]
        index = np.flatnonzero(kept)
        steps = np.array(pending["step"], np.int64)[index]
        taken = np.array(pending["taken"], np.int64)[index]
        at_chance = np.array(pending["chance"], np.bool_)[index]
        first = np.zeros(len(index) + 1, np.int64)
        np.cumsum(counts[kept], out=first[1:])
        hit = actions == taken[node_of]
        found = np.bincount(node_of[hit], minlength=len(index))
        if not (found == 1).all():
            bad = int(np.flatnonzero(found != 1)[0])
            raise ValueError(f"the action taken at step {steps[bad]}, {taken[bad]}, is not one of the node's "
                             f"actions of positive probability ({actions[node_of == bad].tolist()})")
        weights = p / np.add.reduceat(p, first[:-1])[node_of]  # p(b|h), summing to 1 at each node
        weights[hit] -= 1.0  # p(b|h) - [b taken]
        values = self.value.game_child_values(moves, steps, first, actions)
        terms = np.add.reduceat(weights[:, None] * values, first[:-1], axis=0)  # one row a node
        self._chance += terms[at_chance].sum(axis=0)
        self._action += terms[~at_chance].sum(axis=0)
        self.nodes += len(index)


def estimate(returns, chance_terms, action_terms) -> np.ndarray:
    """A game's AIVAT values per player: its returns plus its terms."""
    return np.asarray(returns, float) + np.asarray(chance_terms, float) + np.asarray(action_terms, float)
