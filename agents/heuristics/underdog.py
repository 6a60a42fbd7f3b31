"""A rule-based Underdog player.

It reads only what its seat may see: its own card (and the card it drew),
every underdog card turned this round, the cards laid face up, the fight
decisions so far, chips and bank. From that it estimates, by sampling the
unseen cards for the opponents still in the round, the chance that a card
of its own would win the showdown, and then:

* draw step: a high card with a high underdog card turns a new underdog
  (a low underdog protects a high card); a low card with a low underdog card
  turns a new one (hoping to raise it); otherwise it swaps;
* keep: the card with the higher estimated chance to win;
* fight: when the expected gain (chips bet by others plus the bank prize,
  times the chance to win) exceeds the expected loss of its stake.
"""

from __future__ import annotations

import numpy as np

from kibitz.agents.base import Agent, deterministic
from kibitz.agents.heuristics import register
from kibitz.games import underdog as ud

SAMPLES = 200
FIGHT_RATE = 0.5  # assumed chance that an undecided opponent fights


@register("underdog")
class UnderdogHeuristic(Agent):
    name = "heuristic"

    def action_probabilities(self, state):
        legal = state.legal_actions()
        return deterministic(self._choose(state, legal), legal)

    def _choose(self, state, legal):
        me = state.current_player()
        game = state.get_game()
        C = game.num_cards
        view = _RoundView(state, me)
        unseen = np.array([v for v in range(1, C + 1) if v not in view.seen], dtype=int)
        if legal == [ud.SWAP, ud.NEW_UNDERDOG]:
            c, u = view.hand, view.underdog
            mean = float(unseen.mean()) if len(unseen) else u
            if c >= 0.7 * C and u > mean:
                return ud.NEW_UNDERDOG
            if c <= 0.3 * C and u < mean:
                return ud.NEW_UNDERDOG
            return ud.SWAP
        if legal == [ud.FIGHT, ud.PASS]:
            p = self._win_probability(view, view.hand, unseen)
            stake = min(game.last_round_stake, view.chips[me]) if state.is_last_round else 1
            prize = state.bank if state.is_last_round else min(1, state.bank)
            others = sum(view.stakes.values()) + FIGHT_RATE * len(view.undecided) * (
                game.last_round_stake if state.is_last_round else 1)
            return ud.FIGHT if p * (prize + others) > (1 - p) * stake else ud.PASS
        # keep: the two legal actions name the two cards
        cards = [a - ud.KEEP_BASE + 1 for a in legal]
        probs = [self._win_probability(view, v, unseen[unseen != (cards[0] + cards[1] - v)])
                 for v in cards]
        return legal[int(np.argmax(probs))]

    def _win_probability(self, view, card, unseen):
        """Chance that ``card`` wins the showdown, by sampling the unseen cards.

        ``SAMPLES`` deals at once: each rival still in gets a distinct unseen
        card, an undecided rival fights with chance ``FIGHT_RATE``; the
        lowest fighter's card adds the underdog card, the highest total wins
        and a tie goes to the fighter first in turn order.
        """
        rivals = view.fought + view.undecided
        if not rivals:
            return 1.0
        rng = self.rng
        r = len(rivals)
        # r distinct unseen cards per sample: the first r of a random order
        order = np.argsort(rng.random((SAMPLES, len(unseen))), axis=1)[:, :r]
        cards = unseen[order]
        fights = rng.random((SAMPLES, r)) < FIGHT_RATE
        fights[:, [i for i, seat in enumerate(rivals) if seat in view.fought]] = True
        big = 10 ** 6  # a non-fighter's card: never the lowest, never the best
        low = np.minimum(card, np.where(fights, cards, big).min(axis=1))
        mine = card + np.where(low == card, view.underdog, 0)
        theirs = np.where(cards == low[:, None], cards + view.underdog, cards)
        theirs = np.where(fights, theirs, -big)
        pos = np.array([view.order_index[seat] for seat in rivals])
        me_first = view.order_index[view.me] < pos  # a tie goes to the earlier fighter
        beaten = (theirs < mine[:, None]) | ((theirs == mine[:, None]) & me_first)
        return float(beaten.all(axis=1).mean())


def policy_key(state, player):
    """What this heuristic's move for ``player`` depends on: the seat's view
    of the current round, whose "round" event holds the chips, bank and
    start player it began with (IS-MCTS caches the heuristic's moves by
    this instead of the whole information-state string)."""
    return state.view_since(player, state.round_mark())


class _RoundView:
    """What seat ``me`` knows of the current round, read from its own view."""

    def __init__(self, state, me):
        self.me = me
        log = state.log()
        start = max(i for i, e in enumerate(log) if e.kind == "round")
        self.seen = set()
        self.hand = state.hands[me]
        self.underdog = state.underdog
        self.chips = state.chips
        self.stakes = {}
        decided = set()
        for e in log[start:]:
            kind = e.kind
            if kind in ("underdog", "flip"):
                self.seen.add(e.card)
            elif kind in ("deal", "draw") and e.player == me:
                self.seen.add(e.card)
            elif kind == "keep":
                self.seen.add(e.laid)
            elif kind == "fight":
                self.stakes[e.player] = e.stake
                decided.add(e.player)
            elif kind == "pass":
                decided.add(e.player)
        begun = log[start]
        n = len(begun.chips)
        order = [(begun.start + i) % n for i in range(n) if begun.chips[(begun.start + i) % n] > 0]
        self.order_index = {seat: i for i, seat in enumerate(order)}
        self.fought = [s for s in order if s in self.stakes and s != me]
        self.undecided = [s for s in order if s not in decided and s != me]
