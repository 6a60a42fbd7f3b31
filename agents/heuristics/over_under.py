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
  smallest expected money claimed, then the lowest action number;
* giving a stack away (cut-throat tie, Pyramid, Eagle): it gives it to the
  player leading the tally (the lowest total), the lowest seat on a tie.
"""

from __future__ import annotations

from agents.base import Agent, deterministic
from agents.heuristics import register


def prediction_value(state, stack, over):
    """(chance of not claiming the stack, expected money claimed) for a prediction."""
    r = state.get_game().rules
    counts = state.deck_counts
    left = sum(counts)
    _, money, _ = state.stacks()[stack]
    top = state.top_value(stack)
    safe = 0.0
    cost = 0.0
    for k, n in enumerate(counts):
        if not n:
            continue
        p = n / left
        if k < r.K:
            v = r.vals[k]
            if v == top or (v > top) == over:
                safe += p
            else:
                cost += p * (money + v)
        elif k == r.K or r.n > 1:  # the $2 joker is safe; Pyramid/Eagle: give it away
            safe += p
        else:  # alone, the Pyramid/Eagle stack is claimed
            cost += p * money
    return safe, cost


def choose(state):
    """The heuristic's action in ``state`` (a decision node)."""
    legal = state.legal_actions()
    r = state.get_game().rules
    me = state.current_player()
    if legal[0] >= r.give_base:
        tally = state.tally
        others = [p for p in range(r.n) if p != me]
        target = min(others, key=lambda p: (tally[p], p))
        return r.give_base + target
    best, best_key = legal[0], None
    for a in legal:
        safe, cost = prediction_value(state, a >> 1, not a & 1)
        key = (-safe, cost, a)
        if best_key is None or key < best_key:
            best, best_key = a, key
    return best


@register("over_under")
class OverUnderHeuristic(Agent):
    name = "heuristic"

    def action_probabilities(self, state):
        legal = state.legal_actions()
        return deterministic(choose(state), legal)

    def step(self, state):
        return choose(state)

