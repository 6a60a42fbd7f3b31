"""A rule-based Doubt and Bet player.

It reads only what its seat may see: its own cards, the number of cards
dealt, the current claim and showdown stakes, and everyone's chips and
slots. The unseen cards are a random draw from the deck without its own
cards, so the number of unseen cards that count for a claim follows a
hypergeometric law (rainbows count for every colour; a rainbow claim counts
only rainbows). From that it:

* claims the colour with the best chance at the quantity it needs (the
  opener claims the highest quantity that is at least 60% likely), with a
  stake of 1, or 2 chips when the claim is at least 80% likely;
* doubts a claim that is below 50% likely, or whose chance of being false
  beats its own best raise's chance of being true (and always when no
  higher claim is possible);
* in a showdown calls when the expected result of calling beats folding,
  raises by 1 when at least 80% sure, goes all in when it cannot afford a
  call and is at least 40% sure (or may not fold), and folds otherwise;
* buys a slot when it has 6 chips or more, sells one only with 0 chips and
  3 slots or more;
* pays stakes in chips first and risks slot chips only when it must.
"""

from __future__ import annotations

import bisect
import functools
import math

from kibitz.agents.base import Agent, deterministic
from kibitz.agents.heuristics import register
from kibitz.agents.heuristics.doubt_and_bet_belief import believed_draw  # noqa: F401  (IS-MCTS's belief)
from kibitz.games import doubt_and_bet as db

OPEN_CONFIDENCE = 0.6
DOUBT_BELOW = 0.5
BIG_STAKE_AT = 0.8
RAISE_AT = 0.8
ALL_IN_AT = 0.4
BUY_AT_CHIPS = 6


@functools.lru_cache(maxsize=1 << 16)
def tail_probability(need: int, deck: int, good: int, drawn: int) -> float:
    """P(X >= need) for X ~ Hypergeometric(deck, good, drawn).

    Cached: a game asks the same few hundred (need, deck, good, drawn)
    questions over and over, and each answer is a sum of big binomials."""
    if need <= 0:
        return 1.0
    total = math.comb(deck, drawn)
    if total == 0:
        return 0.0
    hits = sum(math.comb(good, x) * math.comb(deck - good, drawn - x)
               for x in range(need, min(good, drawn) + 1))
    return hits / total


# ------------------------------------------------------------ estimates
def claim_odds(state, me):
    """``(known, good, deck, drawn)``: what ``me`` knows of each colour's
    claim (per colour, the cards in ``me``'s hand that count for it and the
    unseen copies that would), the unseen cards and how many of them were
    dealt. A claim of ``q`` of colour ``k`` is true with probability
    ``tail_probability(q - known[k], deck, good[k], drawn)``; a decision
    asks many claims of one hand, so it reads the hand once."""
    game = state.get_game()
    k1, copies = game.k1, game.copies
    hand = state.hand(me)
    own = sum(hand)
    rb = k1 - 1
    rainbows = hand[rb]
    known = [hand[k] + rainbows for k in range(rb)]
    known.append(rainbows)
    good = [2 * copies - n for n in known[:rb]]
    good.append(copies - rainbows)
    return known, good, k1 * copies - own, state.cards_dealt - own


def claim_probability(state, me, q, k):
    """The chance, as ``me`` sees it, that at least ``q`` dealt cards count
    for colour ``k``."""
    known, good, deck, drawn = claim_odds(state, me)
    return tail_probability(q - known[k], deck, good[k], drawn)


def _stake(state, me, value):
    """Chips first; slot chips only for the part chips cannot pay."""
    chips, slots = state.chips[me], state.slots[me]
    value = min(value, chips + slots - 1)
    ch = min(value, chips)
    return ch, value - ch


# ------------------------------------------------------------- choices
def choose(state, legal):
    me = state.current_player()
    phase = state.phase
    if phase == "exchange":
        chips, slots = state.chips[me], state.slots[me]
        if db.BUY in legal and chips >= BUY_AT_CHIPS:
            return db.BUY
        if db.SELL in legal and chips == 0 and slots >= 3:
            return db.SELL
        return db.KEEP
    if phase == "claim":
        return _claim_or_doubt(state, me, legal)
    return _showdown(state, me, legal)


def _claim_or_doubt(state, me, legal):
    game = state.get_game()
    k1 = game.k1
    claim = state.claim
    dealt = state.cards_dealt
    lowest = 1 if claim is None else claim.quantity + 1
    known, good, deck, drawn = claim_odds(state, me)
    tail = tail_probability
    best = None  # (probability, quantity, colour)
    if claim is None:
        for k in range(k1):
            q = _opening(dealt, known[k], good[k], deck, drawn)
            p = tail(q - known[k], deck, good[k], drawn)
            if best is None or (p, q) > (best[0], best[1]):
                best = (p, q, k)
    elif lowest <= dealt:
        for k in range(k1):
            p = tail(lowest - known[k], deck, good[k], drawn)
            if best is None or p > best[0]:
                best = (p, lowest, k)
    if claim is not None:
        k = claim.colour
        p_prev = tail(claim.quantity - known[k], deck, good[k], drawn)
        if best is None or p_prev < DOUBT_BELOW or 1.0 - p_prev > best[0]:
            return db.DOUBT
    p, q, k = best
    big = p >= BIG_STAKE_AT and state.chips[me] >= 2
    ch, s = _stake(state, me, 2 if big else 1)
    action = _encode_claim(game, q, k, ch, s)
    # always legal: 1 <= q <= cards dealt, above the claim, and the stake
    # (worth 1 or 2, chips first) affordable by a player still in; ``legal``
    # None (the rollout hook) skips the check of a list of thousands
    return action if legal is None or action in legal else legal[-1]


def _opening(dealt, known, good, deck, drawn):
    """The highest quantity of a colour, from 1 up to the cards dealt, whose
    claim is at least OPEN_CONFIDENCE likely (1 if none is)."""
    q = 1
    while q < dealt and tail_probability(q + 1 - known, deck, good, drawn) >= OPEN_CONFIDENCE:
        q += 1
    return q


def _encode_claim(game, q, k, ch, s):
    pair = ch * game.max_slots + s
    return game.claim_base + pair * game.qmax * game.k1 + (q - 1) * game.k1 + k


def _showdown(state, me, legal):
    game = state.get_game()
    bettor, _, bstake, dstake = state.showdown
    claim = state.claim
    p_true = claim_probability(state, me, claim.quantity, claim.colour)
    p = p_true if me == bettor else 1.0 - p_true
    mine = bstake if me == bettor else dstake
    opp = dstake if me == bettor else bstake
    v = opp[0] + opp[1]
    can_fold = db.FOLD in legal
    if db.ALL_IN in legal:
        return db.ALL_IN if (p >= ALL_IN_AT or not can_fold) else db.FOLD
    chips = state.chips[me]
    if p >= RAISE_AT and chips >= v + 1:
        return game.raise_base + (v + 1) * game.max_slots
    mine_v = 0 if mine is None else mine[0] + mine[1]
    if not can_fold or (2 * p - 1) * v > -mine_v:
        ch, s = _stake(state, me, v)
        return db.CALL_BASE + ch * game.max_slots + s
    return db.FOLD


def shortlist(state, legal):
    """The few moves IS-MCTS searches with ``moves=shortlist``: the moves
    this heuristic weighs, at the stakes it would pay, instead of every
    quantity, colour and stake.

    Claims: for every colour, the lowest quantity allowed and the one above
    (the opener: the quantity the heuristic would open with for that colour
    and the ones either side), each with a stake worth 1 and 2 chips, paid
    as ``_stake`` pays (chips first); doubting. Showdowns: folding, going all
    in, calling, and raising by 1 and by 2. A decision with 8 legal moves or
    fewer (every exchange) keeps them all. The heuristic's own move is
    always in. Depends only on what the player
    to move sees, so every determinization of one search gets the same list.
    """
    if len(legal) <= 8:
        return legal
    me = state.current_player()
    game = state.get_game()
    want = {choose(state, legal)}
    if state.phase == "claim":
        k1, dealt = game.k1, state.cards_dealt
        claim = state.claim
        want.add(db.DOUBT)
        known, good, deck, drawn = claim_odds(state, me)
        for k in range(k1):
            if claim is None:
                q = _opening(dealt, known[k], good[k], deck, drawn)
                quantities = (q - 1, q, q + 1)
            else:
                quantities = (claim.quantity + 1, claim.quantity + 2)
            for q in quantities:
                if 1 <= q <= dealt:
                    for value in (1, 2):
                        want.add(_encode_claim(game, q, k, *_stake(state, me, value)))
    else:  # showdown
        bettor, _, bstake, dstake = state.showdown
        opp = dstake if me == bettor else bstake
        v = opp[0] + opp[1]
        want.update((db.FOLD, db.ALL_IN, db.CALL_BASE + _pair(game, *_stake(state, me, v))))
        for extra in (1, 2):
            want.add(game.raise_base + _pair(game, *_stake(state, me, v + extra)))
    # ``legal`` ascends (OpenSpiel's contract): a dozen look-ups by bisection
    # instead of a set of thousands of claims
    n = len(legal)
    return [a for a in sorted(want) if (i := bisect.bisect_left(legal, a)) < n and legal[i] == a]


def _pair(game, ch, s):
    return ch * game.max_slots + s


def rollout_action(state, rand):
    """IS-MCTS rollout hook: the heuristic's move (deterministic; ``rand``
    unused), with the legal moves read from the game's rules directly, and
    at a claim decision not listed at all (its claim is always legal)."""
    player = state.current_player()
    if state.phase == "claim":
        return _claim_or_doubt(state, player, None)
    return choose(state, state._legal_actions(player))


@register("doubt_and_bet")
class DoubtAndBetHeuristic(Agent):
    name = "heuristic"

    def action_probabilities(self, state):
        legal = state.legal_actions()
        return deterministic(choose(state, legal), legal)

    def step(self, state):
        # the policy is one move: skip building (and sampling) a dict over
        # thousands of legal claims; the generator is not used by this agent
        return choose(state, state.legal_actions())
