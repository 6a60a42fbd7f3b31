"""A rule-based pub player.

It reads only what its seat may see: its own hand, every collection, the
face-up card and the card it has just drawn. It values a set of cards by an
estimated final score: for each suit, the ranks it holds in that suit times
the chance that it will NOT hold a suit majority (ties count as a majority),
judged from its lead over the largest visible opponent collection in that
suit (opponents' hidden hands add their expected share). Then:

* take or draw: the cost of taking the face-up card (how much the estimate
  rises) against the expected cost of a draw, averaged over the cards it has
  not seen (a lower card of another suit may be kept alone, anything else
  comes with the face-up card). A low face-up card is taken, a high one is
  risked, and a card of a suit it can win costs nothing;
* keep drawn or take both: whichever raises the estimate less.

The estimate is ``kibitz.games.pub.ScoreEstimate`` (the game's ``compact``
encoding shows the same numbers).
"""

from __future__ import annotations

from kibitz.agents.base import Agent, deterministic
from kibitz.agents.heuristics import register
from kibitz.games import pub


@register("pub")
class PubHeuristic(Agent):
    name = "heuristic"

    def action_probabilities(self, state):
        legal = state.legal_actions()
        return deterministic(self._choose(state, legal), legal)

    def _choose(self, state, legal):
        view = pub.ScoreEstimate(state, state.current_player())
        face = state.face_up
        if legal == [pub.KEEP_DRAWN, pub.TAKE_BOTH]:
            drawn = state.drawn_card
            keep = view.cost((drawn,))
            both = view.cost((face, drawn))
            return pub.TAKE_BOTH if both < keep else pub.KEEP_DRAWN
        # take or draw
        draw = view.draw_cost(face)
        if draw is None:
            return pub.TAKE
        return pub.TAKE if view.cost((face,)) <= draw else pub.DRAW


def policy_key(state, player):
    """What this heuristic's move for ``player`` depends on (IS-MCTS caches
    the model's moves by it instead of the information-state string): the
    seat's hand as a set, every collection, the face-up and the drawn card.
    The cards it has not seen, and so whether the deck is empty, follow
    from these."""
    return (tuple(sorted(state.hands[player])), state.collections, state.face_up, state.drawn_card)
