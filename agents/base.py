"""The kibitz agent interface.

An :class:`Agent` is a ``pyspiel.Bot``, so OpenSpiel's ``evaluate_bots`` and
anything else that drives bots can run it. Subclasses implement
:meth:`action_probabilities` (a policy over the legal actions of the state,
from the acting player's point of view) and may override :meth:`step`.
Agents read only what the acting player may see: the information state,
the observation and the public API (legal actions, action names).

Randomness is passed in: every agent takes a ``seed`` and owns a
``numpy.random.Generator``; the same seed gives the same choices.
"""

from __future__ import annotations

import numpy as np
import pyspiel


class Agent(pyspiel.Bot):
    """Base class: seeded sampling from :meth:`action_probabilities`."""

    #: the name used in agent specs (``random``, ``heuristic``, ...)
    name = "agent"
    #: whether :meth:`step` draws its move from the policy that
    #: :meth:`step_and_policy` reports (AIVAT's action terms need it:
    #: solvers/aivat.py). True for the agents whose policy is a table or a
    #: network; a search or a human reports none.
    reports_policy = False

    def __init__(self, game: pyspiel.Game, player_id: int, seed: int | None = None):
        pyspiel.Bot.__init__(self)
        self.game = game
        self._player_id = player_id
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    # -- pyspiel.Bot API -------------------------------------------------
    def player_id(self):
        return self._player_id

    def restart_at(self, state):
        pass

    def inform_action(self, state, player_id, action):
        pass

    def provides_policy(self):
        return True

    def step_with_policy(self, state):
        probs = self.action_probabilities(state)
        policy = sorted(probs.items())
        return policy, self._sample(policy)

    def step(self, state):
        return self.step_with_policy(state)[1]

    def step_and_policy(self, state):
        """``(action, policy)``: the move exactly as :meth:`step` makes it
        (the same draws from the generator) and, if :attr:`reports_policy`,
        the ``[(action, probability)]`` it was drawn from (else None)."""
        if self.reports_policy and type(self).step is Agent.step:
            policy, action = self.step_with_policy(state)
            return action, policy
        return self.step(state), None

    # -- for subclasses --------------------------------------------------
    def action_probabilities(self, state) -> dict[int, float]:
        """{action: probability} over ``state.legal_actions()``."""
        raise NotImplementedError

    def _sample(self, policy):
        actions = [a for a, _ in policy]
        probs = np.array([p for _, p in policy], dtype=float)
        probs /= probs.sum()
        return int(actions[self.rng.choice(len(actions), p=probs)])


class RandomAgent(Agent):
    """Uniformly random over the legal actions."""

    name = "random"
    reports_policy = True

    def action_probabilities(self, state):
        legal = state.legal_actions()
        return {a: 1.0 / len(legal) for a in legal}

    def step_and_policy(self, state):
        legal = state.legal_actions()
        return int(legal[self.rng.integers(len(legal))]), [(a, 1.0 / len(legal)) for a in legal]

    def step(self, state):
        legal = state.legal_actions()
        return int(legal[self.rng.integers(len(legal))])


def deterministic(action: int, legal) -> dict[int, float]:
    """A policy that plays ``action`` with probability 1."""
    return {a: (1.0 if a == action else 0.0) for a in legal}


def check_turn_based(game) -> None:
    """ValueError unless ``game`` is played one move at a time. The agents,
    tournaments, the terminal table and the server ask the player to move
    (``state.current_player()``); a simultaneous-move game has no such
    player, so it must be wrapped to be played here."""
    if game.get_type().dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
        raise ValueError(f"{game} is a simultaneous-move game; kibitz plays one move at a time: "
                         f"wrap it, e.g. turn_based_simultaneous_game(game={game})")
