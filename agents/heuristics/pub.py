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
"""

from __future__ import annotations

from kibitz.agents.base import Agent, deterministic
from kibitz.agents.heuristics import register
from kibitz.games import pub

# Chance of ending with a suit majority, by the lead over the best opponent
# (leads -2, -1, 0, 1, 2; linear in between, flat outside).
MAJORITY_CHANCE = (0.05, 0.3, 0.8, 0.95, 1.0)


def majority_chance(lead: float) -> float:
    x = min(max(lead + 2, 0.0), 4.0)
    i = min(int(x), 3)
    return MAJORITY_CHANCE[i] + (x - i) * (MAJORITY_CHANCE[i + 1] - MAJORITY_CHANCE[i])


@register("pub")
class PubHeuristic(Agent):
    name = "heuristic"

    def action_probabilities(self, state):
        legal = state.legal_actions()
        return deterministic(self._choose(state, legal), legal)

    def _choose(self, state, legal):
        me = state.current_player()
        game = state.get_game()
        view = _View(state, me)
        face = state.face_up
        if legal == [pub.KEEP_DRAWN, pub.TAKE_BOTH]:
            drawn = state.drawn_card
            keep = view.cost((drawn,))
            both = view.cost((face, drawn))
            return pub.TAKE_BOTH if both < keep else pub.KEEP_DRAWN
        # take or draw
        take = view.cost((face,))
        unseen = [x for x in range(game.num_cards) if x not in view.seen]
        if not unseen:
            return pub.TAKE
        ranks = game.num_ranks
        total = 0.0
        for x in unseen:
            both = view.cost((face, x))
            if x % ranks < face % ranks and x // ranks != face // ranks:
                total += min(both, view.cost((x,)))
            else:
                total += both
        return pub.TAKE if take <= total / len(unseen) else pub.DRAW


class _View:
    """What seat ``me`` knows, and its score estimate of added cards."""

    def __init__(self, state, me):
        game = state.get_game()
        self.suits, self.ranks = game.num_suits, game.num_ranks
        colls = state.collections
        mine = colls[me] + state.hands[me]
        self.seen = set(mine)
        for c in colls:
            self.seen.update(c)
        if state.face_up >= 0:
            self.seen.add(state.face_up)
        if state.drawn_card >= 0:
            self.seen.add(state.drawn_card)
        self.count = [0] * self.suits
        self.sum = [0] * self.suits
        for x in mine:
            self.count[x // self.ranks] += 1
            self.sum[x // self.ranks] += x % self.ranks + 1
        hidden = game.hand_size / self.suits  # expected cards of a suit in a hidden hand
        self.rival = [0.0] * self.suits
        for s, c in enumerate(colls):
            if s == me:
                continue
            per_suit = [hidden] * self.suits
            for x in c:
                per_suit[x // self.ranks] += 1
            for suit in range(self.suits):
                self.rival[suit] = max(self.rival[suit], per_suit[suit])
        self.base = self._estimate(self.count, self.sum)

    def _estimate(self, count, sums):
        return sum(sums[s] * (1.0 - majority_chance(count[s] - self.rival[s]))
                   for s in range(self.suits) if count[s])

    def cost(self, cards):
        """How much adding ``cards`` raises the estimated final score."""
        count, sums = self.count[:], self.sum[:]
        for x in cards:
            count[x // self.ranks] += 1
            sums[x // self.ranks] += x % self.ranks + 1
        return self._estimate(count, sums) - self.base
