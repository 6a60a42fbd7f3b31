"""A rule-based Over/Under player.

Every card in Over/Under is face up, so the seat sees the whole table: the
stacks' top cards and money, the tally, and (by counting the flipped cards)
how many cards of each value are still in the deck. The agent reads those
through the state's public read-only API and:

* predicting: for every stack on the table and both directions it computes,
  from the cards still in the deck, the chance that the flip leaves it safe
  (a correct guess, a classic tie, the $2 joker; a cut-throat tie or a
  Pyramid/Eagle hands the stack to someone else, which is as good). It picks
  the most likely safe prediction; among equally safe ones the one with the
  smallest expected money claimed, then the lowest action number (the
  chances are compared as float64 sums, so two exactly equal ones may differ
  in the last bit and skip the money tie-break: about 1% of predictions at
  the default size; the batched form in agents/matches/batched_match.py
  reproduces the same sums);
* giving a stack away (cut-throat tie, Pyramid, Eagle): it gives it to the
  player leading the tally (the lowest total), the lowest seat on a tie.
"""

from __future__ import annotations

from kibitz.agents.base import Agent, deterministic
from kibitz.agents.heuristics import register


def prediction_value(state, stack, over):
    """(chance of not claiming the stack, expected money claimed) for a prediction
    (the game's ``OverUnderState.prediction_odds``)."""
    safe_o, cost_o, safe_u, cost_u = state.prediction_odds(stack)
    return (safe_o, cost_o) if over else (safe_u, cost_u)


def choose(state):
    """The heuristic's action in ``state`` (a decision node).

    Equal to ranking every legal prediction by :func:`prediction_value`
    (most likely safe, then least expected money, then lowest action), with
    one pass over the deck per stack (``OverUnderState.prediction_odds``, the
    state's public read-only API), fast enough for IS-MCTS to use it as a
    rollout policy (``rollout=heuristic``).
    Every card is face up, so nothing here is hidden from the seat.
    """
    r = state.rules
    me = state.current_player()
    if state.phase == "give":
        tally = state.tally
        target = min((p for p in range(r.n) if p != me), key=lambda p: (tally[p], p))
        return r.give_base + target
    best, best_key = -1, None
    for s, (kind, _, owner) in enumerate(state.stacks()):
        if kind < 0 or owner >= 0:
            continue
        safe_o, cost_o, safe_u, cost_u = state.prediction_odds(s)
        for key in ((-safe_o, cost_o, 2 * s), (-safe_u, cost_u, 2 * s + 1)):
            if best_key is None or key < best_key:
                best, best_key = key[2], key
    return best


def rollout_action(state, rand):
    """IS-MCTS rollout hook: the heuristic's move (deterministic; ``rand`` unused)."""
    return choose(state)


@register("over_under")
class OverUnderHeuristic(Agent):
    name = "heuristic"

    def action_probabilities(self, state):
        legal = state.legal_actions()
        return deterministic(choose(state), legal)

    def step(self, state):
        return choose(state)

