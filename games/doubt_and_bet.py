"""Doubt and Bet: hidden coloured cards, claims with stakes, doubts and showdowns.

Implements the rules page ``docs/rules/doubt_and_bet.md``, which states the rules
and our own rulings (marked there) in our own words. The rules themselves
are written once, as compiled functions on an array position
(``_doubt_and_bet_rules``); this module declares the parameters and the
game, and plays those functions through the generic pyspiel adapter
(``kibitz.games.adapter``); the events, strings and observer are in
``_doubt_and_bet_strings`` (re-exported here). docs/adding-a-game.md
tells how.

A round: upkeep (rounds ``upkeep_start``, ``+upkeep_every``, ...), a seating
shuffle (a chance event, rounds ``1 + k * shuffle_every``), the exchange
phase (each player in turn order from the round's first player: ``keep``,
``buy slot`` or ``sell slot``), the deal (chance, one card per slot, seat by
seat from seat 0), then claims. The first player must claim; each next
player in turn order raises (a strictly higher quantity, any colour, a new
stake) or doubts. A doubt starts a showdown between the doubter and the
bettor (the last claimant, whose claim stake is its opening stake): the
doubter first, then alternately, each player calls (a stake of exactly the
opponent's value), raises (a higher value it can afford), goes ``all in``
(only when it cannot afford a call; the opponent's excess is returned, slot
chips first) or folds (loses its most recent stake; not the doubter's first
action). A call or an all-in reveals every hand: the claim is true when the
count of the claimed colour plus rainbows (rainbows only, for a rainbow
claim) reaches the quantity, and then the bettor wins. The loser loses its
stake (chips, and one slot per slot chip); the winner gains chips equal to
the stake's value. A player at 0 chips with 1 slot is out; the loser starts
the next round, or the player before it in the seating when it is out.

Rulings that are our own (also in the rules page):

* A player whose only exchange choice would be ``keep`` (only possible with
  ``slots=1``) is not asked.
* Upkeep: a player who loses a slot and is left with 0 chips and 1 slot is
  out at once; players eliminated at the same upkeep share their place.
  If the round's first player is eliminated at upkeep, the player before
  them in the seating starts.
* After a seating shuffle the designated first player (the last loser)
  still starts; turn order follows the new seating from them.
* Every round is dealt from the full deck.
* The shuffle is uniform over all orders of the remaining players
  (``k!`` chance outcomes, ordered lexicographically by the new order).
* ``max_rounds`` (default 100) caps the game: after that round's bet the
  game ends; ``win`` is shared by the remaining players with the most
  chips + slots. If an upkeep eliminates every remaining player, those
  players share the win.
* ``payoff=rank``: each player scores the number of players it outlasted
  (out later; among the remaining players at the cap, more chips + slots),
  minus the mean score.
* ``single_bet=true`` ends the game after the first settled bet; returns
  are the chips won or lost (the stake's value; others 0), zero-sum, so it
  needs ``payoff=win`` (the default); ``payoff=rank`` with it is an error.
* The stake's chip part is bounded by ``Cmax = players * (chips + slots)``
  (no player can ever hold more chips), which fixes the action count.

Encoding (S = ``slots``, K1 = ``colours + 1``, Q = ``players * slots``;
a stake pair is ``p = c * S + s`` for c chips in 0..Cmax and s slot chips in
0..S-1, so P = (Cmax + 1) * S pairs)::

    0 keep | 1 buy slot | 2 sell slot | 3 doubt | 4 all in | 5 fold
    6 + p                      call c+s
    6 + P + p                  raise c+s
    6 + 2P + p * Q * K1 + i    claim: i = (q - 1) * K1 + k, quantity q,
                               colour k (0 red .. K1-2, K1-1 rainbow)

Claims are stake-major so that the legal claims for one stake are one
contiguous run of codes.

For learning the game also offers the ``compact`` encoding
(:func:`compact_pieces`, ``DoubtAndBetState.compact_tensor(player)``: a
few hundred floats of the current round as one player sees it, written by
the compiled ``_doubt_and_bet_rules.compact``) and action
factors (:func:`action_factor_table`: each action's logit as a sum of at
most four of a few hundred factor logits); both are tabulated index by
index in the rules page.

``num_distinct_actions = 6 + 2P + Q * K1 * P``. Chance outcomes: in a deal,
``k`` is a card of colour ``k`` (``card red``); in a seating shuffle,
outcome ``i`` is the i-th order (lexicographic) of the remaining players
(``seating 2 0 1 3``). ``max_chance_outcomes = max(K1, players!)`` when a
shuffle can happen, else K1.

Events. ``DoubtAndBetState.log()`` is the game's events in order, the
named tuples of ``_doubt_and_bet_strings`` (``Round``, ``Upkeep``,
``Seating``, ``Start``, ``Exchange``, ``Deal``, ``Claim``, ``Doubt``,
``Call``, ``Raise``, ``AllIn``, ``Fold``, ``Reveal``, ``Settle``, ``Out``,
``End``); the information-state string is their lines (``event_text``).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pyspiel

from kibitz.games import _common, _doubt_and_bet_rules, _doubt_and_bet_strings, adapter, search
from kibitz.games._common import Param
from kibitz.games._doubt_and_bet_rules import (
    ALL_IN, BETTOR, BUY, CALL_BASE, CLAIM, CLAIMANT, DEAL, DOUBT, DOUBTER, EXCHANGE, FIRST, FOLD, KEEP, NDEAL,
    OVER, PHASE, QUANTITY, ROUND, SELL, SHOWDOWN, SHUFFLE, TURN, SD_TURN, UP_CHIP, UP_OUT, UP_SLOT, UP_SLOT_OUT)
from kibitz.games._doubt_and_bet_strings import (  # the events and strings, re-exported
    COLOUR_NAMES, EXCHANGE_WORDS, PHASE_NAMES, SD_ALL_IN, SD_CALL, SD_FOLD, SD_RAISE, AllIn, Call, Claim, Deal,
    DoubtAndBetObserver, Doubt, End, Exchange, Fold, Out, Raise, Reveal, Round, Seating, Settle, StandingClaim,
    Start, Upkeep, cached_event_text, colour_name, event_text)
from kibitz.games._doubt_and_bet_strings import _EVENT_TEXTS  # noqa: F401  (tests clear the text cache)
from kibitz.games.chance import draw

_new = tuple.__new__  # a named tuple made at half the cost (``_doubt_and_bet_strings``)

SHORT_NAME = "doubt_and_bet"

__all__ = ["action_factor_table", "ALL_IN", "AllIn", "BUY", "cached_event_text", "Call", "CALL_BASE", "Claim",
           "colour_name", "COLOUR_NAMES", "compact_pieces", "Deal", "DOUBT", "Doubt", "DoubtAndBetGame",
           "DoubtAndBetObserver", "DoubtAndBetState", "draw_colour", "End", "event_text", "Exchange",
           "EXCHANGE_WORDS", "FOLD", "Fold", "KEEP", "Out", "PARAMS", "PHASE_NAMES", "Raise", "Reveal",
           "Round", "SD_ALL_IN", "SD_CALL", "SD_FOLD", "SD_RAISE", "Seating", "seatings", "SELL", "Settle",
           "SHORT_NAME", "SPEC", "StandingClaim", "Start", "UP_CHIP", "UP_OUT", "UP_SLOT", "UP_SLOT_OUT",
           "Upkeep", "value_bucket", "VALUE_BUCKETS"]

PARAMS = (
    Param("players", 4, "number of players", "2..5", low=2, high=5),
    Param("chips", 7, "chips each player starts with", "0..30 (0 needs slots >= 2)",
          low=0, high=30),
    Param("slots", 5, "card slots each player starts with, also the maximum",
          "1..8 (2..8 when chips=0)", low=lambda v: 2 if v["chips"] == 0 else 1, high=8),
    Param("colours", 5, "colours besides rainbow (red yellow green blue purple, in that order)",
          "1..5", low=1, high=5),
    Param("copies", 0, "cards of each colour (0 = 2*players)",
          "0 (=2*players) or 1..30, with (colours+1)*copies >= players*slots",
          low=0, high=30),
    Param("upkeep_start", 15, "first upkeep round (0 = no upkeep)", "0..1000", low=0, high=1000),
    Param("upkeep_every", 5, "rounds between upkeeps", "1..100", low=1, high=100),
    Param("shuffle_every", 10, "seating shuffle at rounds 1+k*shuffle_every (0 = never)",
          "0..1000", low=0, high=1000),
    Param("max_rounds", 100, "cap on the number of rounds", "1..1000", low=1, high=1000),
    Param("single_bet", False, "end the game after the first settled bet (payoff: chips won or lost)",
          "true, false", choices=(True, False)),
    Param("payoff", "win", "win: last player (or most chips+slots at the cap) gets 1; "
          "rank: players outlasted minus the mean", "win, rank", choices=("win", "rank")),
)

SPEC = _common.GameSpec(
    short_name=SHORT_NAME,
    long_name="Doubt and Bet",
    summary="Hidden coloured cards: claim how many of a colour exist, raise or doubt, bet chips and slots.",
    params=PARAMS,
    small="doubt_and_bet(players=2,chips=2,slots=1,colours=1,copies=2,single_bet=true)",
    search=frozenset({search.DIRECT, search.SNAPSHOT, search.ROUNDS, search.VIEWS, search.RANDOM_ACTION,
                      search.RESAMPLE_MEMO, search.COMPILED}),
    encodings=("compact",),
    action_factors=True,
)

_GAME_TYPE = _common.game_type(SHORT_NAME, "Doubt and Bet", PARAMS, min_players=2, max_players=5)

_PERMS: dict = {}


def seatings(alive: tuple) -> list:
    """Every order of the players ``alive`` (sorted), lexicographic: the
    seating shuffle's outcomes."""
    p = _PERMS.get(alive)
    if p is None:
        p = _PERMS[alive] = list(itertools.permutations(alive))
    return p


def _check_params(p: dict) -> None:
    if p["single_bet"] and p["payoff"] == "rank":
        raise ValueError(
            f"{SHORT_NAME}: parameter payoff='rank' is not allowed with single_bet=true "
            "(a single bet pays the chips won or lost); allowed: payoff=win")
    n = p["players"]
    copies = p["copies"] or 2 * n
    if (p["colours"] + 1) * copies < n * p["slots"]:
        need = -(-n * p["slots"] // (p["colours"] + 1))
        raise ValueError(
            f"{SHORT_NAME}: parameter copies={p['copies']} gives a deck of "
            f"{(p['colours'] + 1) * copies} cards, too small to deal {n}*{p['slots']}; "
            f"allowed: 0 (=2*players) or 1..30, with (colours+1)*copies >= players*slots "
            f"(here copies >= {need})")


# ------------------------------------------------- encodings for learning
#: the smallest stake value of each bucket of the (quantity, stake value)
#: claim factor; the last bucket is open (9 and more)
VALUE_BUCKETS = (1, 2, 3, 4, 6, 9)


def value_bucket(value: int) -> int:
    """The bucket of a stake value in :data:`VALUE_BUCKETS`."""
    b = 0
    while b + 1 < len(VALUE_BUCKETS) and value >= VALUE_BUCKETS[b + 1]:
        b += 1
    return b
def compact_pieces(n: int, k1: int, S: int) -> list:
    """``[(piece, size, shape)]`` of the ``compact`` encoding, in order (the
    compiled ``_doubt_and_bet_rules.compact`` writes it): a few hundred
    floats for learning, the current round as one player sees it (not
    perfect recall). The index table, with what each number is, is the
    section "Compact encoding" of docs/rules/doubt_and_bet.md; in short (n
    players, K1 colours, S slots, Q = n*S, T = chips + slots at the start)::

        phase       4        one-hot: exchange | claim (cards being dealt, or claims) | showdown | over
        schedule    5        round/R, rounds to the next upkeep/upkeep_every (<= 1), no more upkeep,
                             rounds to the next shuffle/shuffle_every (<= 1), no more shuffle
        own_hand    K1       own cards per colour / S
        own_support K1       own cards that count for a claim of each colour / S
        dealt       1        cards dealt this round / Q
        expected    K1       own support + expected support in the others' cards, / Q
        chance      Q x K1   P(at least q cards count for colour k), given the own cards
        seats       n x (13+K1)  per player, the viewer first, then the others in seating
                             order after it, then those out: out, chips/T, slots/S,
                             wager/T, first, exchange (3), claims/S, last claim
                             (present, q/Q, colour K1, chips/T, slot chips/S)
        claim       6+n+Q+K1 present, claimant (position), quantity one-hot, colour,
                             chips/T, slot chips/S, value/T, chance of being true, claims/Q
        showdown    11+2n    active, viewer is bettor, viewer is doubter, bettor and doubter
                             (positions), bettor's stake (chips/T, slot chips/S, value/T),
                             doubter's stake (staked, chips/T, slot chips/S, value/T), bettor to act

    Everything is a function of the viewer's information state (its
    string): public chips, slots, seating, claims and showdown moves, the
    parameters, and its own cards.
    """
    Q, seat = n * S, 13 + k1
    return [("phase", 4, (4,)), ("schedule", 5, (5,)), ("own_hand", k1, (k1,)),
            ("own_support", k1, (k1,)), ("dealt", 1, (1,)), ("expected", k1, (k1,)),
            ("chance", Q * k1, (Q, k1)), ("seats", n * seat, (n, seat)),
            ("claim", 6 + n + Q + k1, (6 + n + Q + k1,)), ("showdown", 11 + 2 * n, (11 + 2 * n,))]



class DoubtAndBetGame(adapter.Game):
    """Doubt and Bet with validated parameters; sizes follow the parameters."""

    def __init__(self, params=None):
        p = _common.read_params(SHORT_NAME, PARAMS, params)
        _check_params(p)
        n = p["players"]
        self.num_seats = n
        self.colours = p["colours"]
        self.k1 = p["colours"] + 1
        self.copies = p["copies"] or 2 * n
        self.start_chips = p["chips"]
        self.max_slots = S = p["slots"]
        self.upkeep_start = p["upkeep_start"]
        self.upkeep_every = p["upkeep_every"]
        self.shuffle_every = p["shuffle_every"]
        self.max_rounds = p["max_rounds"]
        self.single_bet = p["single_bet"]
        self.payoff = p["payoff"]
        total = n * (p["chips"] + S)
        self.cmax = total
        self.pairs = (total + 1) * S
        self.qmax = n * S
        self.raise_base = CALL_BASE + self.pairs
        self.claim_base = CALL_BASE + 2 * self.pairs
        self.offsets = _doubt_and_bet_rules.offsets(n, self.k1)
        self.table = _doubt_and_bet_strings.Table(self)
        self.compact_layout = compact_pieces(n, self.k1, S)
        rounds = 1 if self.single_bet else self.max_rounds
        shuffles = self.shuffle_every > 0 and rounds >= 1 + self.shuffle_every
        if self.single_bet:
            utility = pyspiel.GameType.Utility.ZERO_SUM
            v = p["chips"] + S - 1
            lo, hi, total_u = -float(v), float(v), 0.0
        elif self.payoff == "win":
            utility = pyspiel.GameType.Utility.CONSTANT_SUM
            lo, hi, total_u = 0.0, 1.0, 1.0
        else:
            utility = pyspiel.GameType.Utility.ZERO_SUM
            lo, hi, total_u = -(n - 1) / 2, (n - 1) ** 2 / n, 0.0
        game_type = _common.game_type(SHORT_NAME, "Doubt and Bet", PARAMS,
                                      min_players=2, max_players=5, utility=utility)
        # Per round: a shuffle, n exchange choices, n*S cards, at most Q claims
        # and a doubt, and a showdown of at most Cmax + S raises and a close.
        per_round = 1 + n + 2 * self.qmax + 1 + total + 2
        info = pyspiel.GameInfo(
            num_distinct_actions=self.claim_base + self.qmax * self.k1 * self.pairs,
            max_chance_outcomes=max(self.k1, math.factorial(n) if shuffles else 0),
            num_players=n,
            min_utility=lo,
            max_utility=hi,
            utility_sum=total_u,
            max_game_length=rounds * per_round,
        )
        super().__init__(game_type, info, p)

    def compiled_rules(self):
        """The rules (``search.COMPILED``: games/_doubt_and_bet_rules.py)."""
        return _doubt_and_bet_rules.compiled_rules(self)

    def begin_log(self, log, position):
        _doubt_and_bet_strings.begin_log(log, position, self.table)

    def record(self, log, before, action, after):
        _doubt_and_bet_strings.record(log, before, action, after, self.table)

    @staticmethod
    def seatings(alive: tuple) -> list:
        return seatings(alive)

    # encodings for learning (kibitz.games.encoding)
    def compact_tensor_size(self) -> int:
        """Floats in the ``compact`` encoding (:func:`compact_pieces`)."""
        return sum(size for _, size, _ in self.compact_layout)

    def compact_tensor_layout(self) -> list:
        """``[(piece, size, shape)]`` of the ``compact`` encoding, in order."""
        return list(self.compact_layout)

    def action_factors(self) -> tuple:
        """``(index, F)``: the factors of each action (:func:`action_factor_table`),
        made once per game; the array is read-only."""
        table = self.__dict__.get("_action_factors")
        if table is None:
            index, count = action_factor_table(self)
            index.setflags(write=False)
            table = self.__dict__["_action_factors"] = (index, count)
        return table


_apply = adapter.State._apply_action


class DoubtAndBetState(adapter.State):
    """A game of Doubt and Bet on the compiled rules; its log is the game's events."""

    def _p(self) -> list:
        """The position as a list, kept until the next move."""
        return self._derived("p", self._c.s.tolist)

    def _seat_values(self, name: str) -> list:
        c = self._c
        return c.game.table.seats(self._p(), name)

    # ------------------------------------------------------------- the rules
    def _apply_action(self, action):
        """The adapter's move, with the reason for this action in an illegal
        one's message; the information-state strings so far are carried to
        the next position (``DoubtAndBetObserver.string_from``)."""
        c = self._c
        derived = c.derived
        try:
            _apply(self, action)
        except _common.IllegalActionError:
            raise _common.illegal(self, action, self.legal_moves(), self._why(action)) from None
        if derived is not None:
            texts = derived.get("texts")
            if texts:  # a copy: the texts of a log this position's log extends
                c.derived = {"texts": dict(texts)}

    def _why(self, action: int) -> str:
        """Why ``action``, not legal here, is not (the rules page's words)."""
        p, game = self._p(), self._c.game
        ph = p[PHASE]
        if ph == CLAIM:
            return _why_not_claim(p, game, action)
        if ph == SHOWDOWN:
            return _why_not_showdown(p, game, action)
        return _WHY[ph]

    def random_action(self, player, u):
        """``legal[int(u * len(legal))]`` of ``_legal_actions(player)``
        without listing the legal moves at a claim decision (thousands of
        claims): the same move for the same ``u`` (capability
        ``RANDOM_ACTION`` of ``kibitz.games.search``; IS-MCTS's random
        rollouts call it)."""
        p, game = self._p(), self._c.game
        if p[PHASE] != CLAIM:
            legal = self._legal_actions(player)
            return legal[int(u * len(legal))]
        k1, at = game.k1, game.offsets
        claimed = p[CLAIMANT] >= 0
        lead = 1 if claimed else 0  # DOUBT first after a claim
        start = p[QUANTITY] * k1 if claimed else 0
        width = p[NDEAL] * k1 - start
        slots = p[at["slots"] + player]
        pairs = (p[at["chips"] + player] + 1) * slots - 1 if width > 0 else 0  # every stake c+s >= 1
        i = int(u * (lead + pairs * width))
        if i < lead:
            return DOUBT
        o, j = divmod(i - lead, width)
        ch, s = divmod(o + 1, slots)  # the stakes in order, without 0+0
        return game.claim_base + (ch * game.max_slots + s) * game.qmax * k1 + start + j

    # ------------------------------------------------------------ the strings
    def _action_to_string(self, player, action):
        p = self._p()
        game = self._c.game
        seating = game.table.seating(p) if p[PHASE] == SHUFFLE else None
        return _doubt_and_bet_strings.action_name(player, action, game, seating)

    def __str__(self):
        return _doubt_and_bet_strings.state_string(self._p(), self._c.game.table, self.returns())

    # ----------------------------------- search contract (kibitz.games.search)
    def _event_text(self, event, player):
        return cached_event_text(event, player, self._c.game.k1)

    def round_number(self):
        """Rounds begun so far (IS-MCTS ``rollout_rounds`` stops at a new one)."""
        return int(self._c.s[ROUND])

    def standing(self):
        """What a round-limited rollout backs up: the returns at the end; before
        it, with ``payoff=win``, each player's share of the chips + slots of
        the players still in (the chance to win of a player with that share
        when the rest of the game is fair, even bets; players out get 0); with
        ``payoff=rank``, the ranks if the game ended now (players out by when
        they went out, the others by chips + slots, as at the round cap)."""
        game = self._c.game
        n, over = game.num_seats, self._c.kind == adapter.TERMINAL
        if over and game.single_bet:
            return self.returns()
        chips, slots, out = self._seat_values("chips"), self._seat_values("slots"), self._seat_values("out")
        if game.payoff == "win" and not over:
            held = [chips[s] + slots[s] if out[s] < 0 else 0 for s in range(n)]
            total = sum(held)
            if total:
                return [h / total for h in held]
        big = 1 << 30  # later out is better; at the cap, chips + slots
        keys = [(out[s], 0) if out[s] >= 0 else (big, chips[s] + slots[s]) for s in range(n)]
        if game.payoff == "win":
            return _common.win_shares(keys)
        scores = [sum(1 for j in range(n) if keys[j] < keys[s]) for s in range(n)]
        mean = sum(scores) / n
        return [x - mean for x in scores]

    # ---------------------------------------------------------- read-only API
    @property
    def chips(self):
        return tuple(self._seat_values("chips"))

    @property
    def slots(self):
        return tuple(self._seat_values("slots"))

    @property
    def alive(self):
        return tuple(o < 0 for o in self._seat_values("out"))

    @property
    def round(self):
        return int(self._c.s[ROUND])

    @property
    def first_player(self):
        return int(self._c.s[FIRST])

    @property
    def seating(self):
        return self._c.game.table.seating(self._p())

    @property
    def turn_order(self):
        return self._c.game.table.order(self._p())

    @property
    def phase(self):
        return PHASE_NAMES[self._c.s[PHASE]]

    @property
    def claim(self):
        """The standing claim (:class:`StandingClaim`) or None."""
        return self._c.game.table.claim(self._p())

    @property
    def cards_dealt(self):
        p = self._p()
        return p[NDEAL] if p[PHASE] in (CLAIM, SHOWDOWN) else 0

    @property
    def showdown(self):
        """(bettor, doubter, bettor's stake, doubter's stake or None) or None."""
        p = self._p()
        if p[PHASE] != SHOWDOWN:
            return None
        return (p[BETTOR], p[DOUBTER], *self._c.game.table.stakes(p))

    def hand(self, player):
        """Counts per colour (rainbow last) of ``player``'s cards this round."""
        return self._c.game.table.hand(self._p(), player)

    def log(self):
        """The game's events, in order: the named tuples of ``_doubt_and_bet_strings``."""
        return tuple(self._c.log())

    def compact_tensor(self, player):
        """``player``'s ``compact`` encoding (:func:`compact_pieces`): a
        float32 array of ``compact_tensor_size()`` floats."""
        c = self._c
        n = c.game.num_seats
        if not 0 <= player < n:
            raise ValueError(f"player {player} is not a seat of this game (0..{n - 1})")
        out = np.empty(c.game.compact_tensor_size(), np.float32)
        c.rules.compact(c.s, c.rules.params, player, out)
        return out

    # ------------------------------------------------------------ resampling
    def resample_from_infostate(self, player_id, probability_sampler, internal=False, check=None,
                                memo=None, cards=None):
        """A state drawn from ``player_id``'s information state.

        In every round whose cards were not revealed, the other players'
        cards are dealt again from the deck without ``player_id``'s own
        cards, card by card with each colour's chance proportional to the
        copies left, which is the exact conditional distribution of the deal
        given what the player saw (opponents' strategies are not modelled).
        In revealed rounds only the order in which each other player's known
        cards were dealt is drawn again (uniformly).
        The game is then replayed with those cards; every action is checked.

        With ``internal=True`` (kibitz's own searches only) only the current
        round is replayed, through ``_apply_action``, from the position at
        the round's start (``round_start``) with a log whose earlier rounds'
        cards are drawn as above: the same state as the full replay, but its
        pyspiel history is not kept; use it only inside a search.
        ``check(state, player, action)`` is called before each other
        player's move of the replay and may raise to abandon it
        (``_common.replay_applier``).

        ``memo`` (internal only): a dict the caller keeps for one search.
        The earlier rounds' cards are then drawn at the first call and
        shared by every later world drawn with the same memo; only the
        current round is drawn afresh. Each world is still an exact draw:
        every round is dealt from the full deck, so the earlier rounds'
        hidden cards are independent of this round's given what the player
        saw, and nothing from this round on reads them (the search's
        opponent model checks only this round's moves).

        ``cards`` (internal only): this round's cards in the order dealt,
        drawn by the caller (a search's belief draws them seat by seat) in
        place of the sampler's draw; the replay checks them like any move.
        """
        c = self._c
        game = c.game
        state = game.new_initial_state()
        start = 0
        if internal:
            # what every world of this state shares: the round's start, its deals so far, the history since
            shared = None if memo is None else memo.get(("db-root", c.s.tobytes()))
            if shared is None:
                start, position, begun, earlier = self._round_snapshot()
                shared = (start, position, begun, earlier, _deal_rounds(c.log()[len(begun):], opened=True),
                          self.history()[start:])
                if memo is not None:
                    memo["db-root", c.s.tobytes()] = shared
            start, position, begun, earlier, rounds, rest = shared
            key = ("db-earlier", player_id, int(c.s[ROUND]), start)
            world = None if memo is None else memo.get(key)
            if world is None:
                world = _redraw_earlier(position, begun, earlier, player_id, probability_sampler, game)
                if memo is not None:
                    memo[key] = world
            state._set_position(world[0].copy(), list(world[1]))
        else:
            rounds = _deal_rounds(c.log())
            rest = self.history()
        new_cards = cards
        if new_cards is None:
            new_cards = []
            for _, deals, revealed in rounds:
                _redraw_round(deals, revealed, player_id, probability_sampler, game.copies, game.k1, new_cards)
        if internal and check is None:  # the deal moves' places known: one compiled replay
            key = ("db-deals", start, len(rest))
            places = None if memo is None else memo.get(key)
            if places is None:
                places = self._deal_places(start, rest)
                if memo is not None:
                    memo[key] = places
            actions = list(rest)
            for i, card in zip(places, new_cards):
                actions[i] = card
            _common.replay(state, actions, internal, player_id, check)
            return state
        apply = _common.replay_applier(state, internal, player_id, check)
        dealt = iter(new_cards)
        for a in rest:
            apply(next(dealt) if state._c.s[PHASE] == DEAL else a)
        return state

    def _deal_places(self, start, rest):
        """The indices in ``rest`` (the history from ``start``, the current
        round's start) of the deal's moves: where a world's redrawn cards go."""
        _, position, begun, _ = self._round_snapshot()
        state = self._c.game.new_initial_state()
        state._set_position(position.copy(), list(begun))
        places = []
        for i, a in enumerate(rest):
            if state._c.s[PHASE] == DEAL:
                places.append(i)
            state._apply_unchecked(a)
        return places

    def round_start(self):
        """(history index, state) at the start of this round, for searches:
        the number of moves of the history before the round began, and a
        new state right after them (its upkeep done, nothing of its
        exchange or deal yet), from which replaying the rest of the history
        with ``_apply_action`` reaches this state. A search's own world (an
        internal resample) has no history: ask the real state."""
        start, position, begun, _ = self._round_snapshot()
        state = self._c.game.new_initial_state()
        state._set_position(position.copy(), list(begun))
        return start, state

    def _round_snapshot(self):
        """(history index, position, log, earlier rounds' deals) at this
        round's start, kept until the next move (nothing changes them).

        The position is the one right after the move that began this round
        (its upkeep done, nothing of its exchange or deal yet), replayed on
        the compiled rules; ``history index`` is the number of moves that
        led there, the log is the game's up to that move, and the deals are
        ``_deal_rounds`` of that log without this round, each as (log
        indices, deals, ``_by_seat`` of them if revealed else None).
        """
        return self._derived("round start", self._make_round_snapshot)

    def _make_round_snapshot(self):
        c = self._c
        rules, history = c.rules, self.history()
        rnd = c.s[ROUND]
        s = rules.initial.copy()
        i = 0
        while s[ROUND] != rnd:
            if i == len(history):
                raise ValueError("the state's history does not reach its round (a search's own "
                                 "world has none: resample the real state)")
            rules.apply(s, rules.params, history[i])
            i += 1
        log = c.log()
        j = max(k for k, e in enumerate(log) if e.kind == "round") + 1
        while j < len(log) and log[j].kind in ("upkeep", "start", "end"):  # written by that move too
            j += 1
        begun = tuple(log[:j])
        earlier = _deal_rounds(begun)
        assert not earlier[-1][1], "a round's start has no deal yet"
        earlier = tuple((w, d, _by_seat(w, d) if revealed else None) for w, d, revealed in earlier[:-1])
        return i, s, begun, earlier


#: why a move is not legal, in the phases where that does not depend on the move
_WHY = {DEAL: "no card of that colour is left in the deck",
        SHUFFLE: "not a seating order of the remaining players",
        EXCHANGE: "it is the exchange step", OVER: "the game is over"}


def _why_not_claim(p: list, game, action: int) -> str:
    claimed = p[CLAIMANT] >= 0
    rel = action - game.claim_base
    if rel < 0:
        return "claim or doubt" if claimed else "the opener must claim"
    pair, i = divmod(rel, game.qmax * game.k1)
    q = i // game.k1 + 1
    ch, s = divmod(pair, game.max_slots)
    me, at = p[TURN], game.offsets
    chips, slots = p[at["chips"] + me], p[at["slots"] + me]
    if q > p[NDEAL]:
        return f"the quantity is at most the {p[NDEAL]} cards dealt"
    if claimed and q <= p[QUANTITY]:
        return f"a raise needs a quantity above {p[QUANTITY]}"
    if ch + s < 1:
        return "a stake is at least 1"
    return f"the stake {ch}+{s} is not affordable ({chips} chips, {slots - 1} slot chips)"


def _why_not_showdown(p: list, game, action: int) -> str:
    me, at = p[SD_TURN], game.offsets
    bstake, dstake = game.table.stakes(p)
    mine, opp = (bstake, dstake) if me == p[BETTOR] else (dstake, bstake)
    v = opp[0] + opp[1]
    chips, slots = p[at["chips"] + me], p[at["slots"] + me]
    if action == ALL_IN:
        return f"all in only when a call of {v} is unaffordable"
    if action == FOLD:
        return "the doubter cannot fold on its first action"
    if not CALL_BASE <= action < game.claim_base:
        return "not a showdown move"
    is_raise = action >= game.raise_base
    ch, s = divmod(action - (game.raise_base if is_raise else CALL_BASE), game.max_slots)
    if ch > chips or s > slots - 1:
        return f"the stake {ch}+{s} is not affordable ({chips} chips, {slots - 1} slot chips)"
    if is_raise:
        return f"a raise must exceed the opponent's stake of {v}"
    return f"a call matches the opponent's stake of {v}"


# ------------------------------------------------------------ resampling
def _deal_rounds(events, opened: bool = False) -> list:
    """Per round of ``events`` (a log or a stretch of one): the log indices
    of its deals, the deals as (seat, colour), and whether its hands were
    revealed. ``opened``: the stretch starts inside a round (no "round"
    event first)."""
    rounds = [([], [], False)] if opened else []
    for i, e in enumerate(events):
        kind = e.kind
        if kind == "round":
            rounds.append(([], [], False))
        elif kind == "deal":
            rounds[-1][0].append(i)
            rounds[-1][1].append((e.player, e.colour))
        elif kind == "reveal":
            rounds[-1] = rounds[-1][:2] + (True,)
    return rounds


def _by_seat(where, deals) -> list:
    """(seat, positions, colours) of each seat's deals, seats in the order
    they were first dealt to; positions taken from ``where``."""
    seats = {}
    for j, (s, k) in zip(where, deals):
        at, cards = seats.setdefault(s, ([], []))
        at.append(j)
        cards.append(k)
    return [(s, at, cards) for s, (at, cards) in seats.items()]


def _redraw_earlier(position, begun, earlier, me, sampler, game) -> tuple:
    """(position, log) at this round's start with the earlier rounds' cards
    that ``me`` has not seen drawn again (``_redraw_round``) into the log;
    before this round's deal the position's hands and deck are still the
    last round's: they become those of the cards just drawn."""
    log = list(begun)
    for where, deals, seats in earlier:
        if seats is not None:  # revealed
            for s, at, known in seats:
                if s != me:
                    known = known[:]
                    _shuffle(known, sampler)
                    for j, k in zip(at, known):
                        log[j] = _new(Deal, ("deal", s, k))
            continue
        drawn = []
        _redraw_round(deals, False, me, sampler, game.copies, game.k1, drawn)
        for j, (s, _), k in zip(where, deals, drawn):
            log[j] = _new(Deal, ("deal", s, k))
    s = position
    if earlier and position[PHASE] != DEAL:
        s = position.copy()
        at, k1, copies = game.offsets, game.k1, game.copies
        hands, deck = at["hands"], at["deck"]
        s[hands:hands + game.num_seats * k1] = 0
        s[deck:deck + k1] = copies
        deals = [log[j] for j in earlier[-1][0]]
        for e in deals:
            s[hands + e.player * k1 + e.colour] += 1
            s[deck + e.colour] -= 1
        s[_doubt_and_bet_rules.NDECK] = copies * k1 - len(deals)
    return s, tuple(log)


def _shuffle(cards: list, sampler) -> None:
    """Shuffles ``cards`` in place, uniformly, with ``sampler``'s numbers."""
    for i in range(len(cards) - 1, 0, -1):
        j = min(int(sampler() * (i + 1)), i)
        cards[i], cards[j] = cards[j], cards[i]


def _redraw_round(deals, revealed, me, sampler, copies, k1, out) -> None:
    """Appends to ``out`` one round's cards drawn again from ``me``'s view.

    Unrevealed: each other player's cards are dealt again, card by card,
    from the deck without ``me``'s cards, each colour with chance
    proportional to its copies left (the exact conditional distribution of
    the deal). Revealed: the hands are known, so only the order in which
    each other player's cards were dealt is drawn again (uniformly).
    """
    if revealed:
        drawn = [0] * len(deals)
        for s, at, cards in _by_seat(range(len(deals)), deals):
            if s != me:
                cards = cards[:]
                _shuffle(cards, sampler)
            for j, k in zip(at, cards):
                drawn[j] = k
        out.extend(drawn)
        return
    left = [copies] * k1
    for s, k in deals:
        if s == me:
            left[k] -= 1
    total = sum(left)
    for s, k in deals:
        if s == me:
            out.append(k)
            continue
        out.append(draw_colour(left, total, sampler))
        total -= 1


def draw_colour(left, total, sampler) -> int:
    """One card from a deck of ``left[k]`` cards of each colour (``total``
    in all), each colour with chance proportional to its copies left; the
    card is taken out of ``left``."""
    j = draw(enumerate(left), sampler() * total)
    left[j] -= 1
    return j


def action_factor_table(game) -> tuple[np.ndarray, int]:
    """``(index, F)``: the factors of every action (``kibitz.games.encoding``;
    the table is the section "Action factors" of docs/rules/doubt_and_bet.md).

    With ``V = Cmax + S`` stake values (0..Cmax+S-1) and B =
    ``len(VALUE_BUCKETS)``, the factor logits are, in order::

        simple      6        keep, buy slot, sell slot, doubt, all in, fold
        call_slot   S        a call's slot chips s (its value is the opponent's)
        raise_value V        a raise's value c+s
        raise_slot  S        a raise's slot chips s
        claim_qk    Q*K1     a claim's quantity and colour, (q-1)*K1 + k
        claim_value V        a claim's stake value c+s
        claim_slot  S        a claim's slot chips s
        claim_qv    Q*B      a claim's quantity and stake bucket, (q-1)*B + bucket(c+s)

    and each action sums (R = 4 columns, F = nothing): a simple move its
    own factor; ``call c+s`` call_slot[s]; ``raise c+s`` raise_value[c+s] +
    raise_slot[s]; ``claim q k stake c+s`` claim_qk + claim_value +
    claim_slot + claim_qv.
    """
    S, k1, Q = game.max_slots, game.k1, game.qmax
    V, B = game.cmax + S, len(VALUE_BUCKETS)
    offsets, at = {}, 0
    for name, size in (("simple", 6), ("call_slot", S), ("raise_value", V), ("raise_slot", S),
                       ("claim_qk", Q * k1), ("claim_value", V), ("claim_slot", S), ("claim_qv", Q * B)):
        offsets[name] = at
        at += size
    F = at
    A = game.num_distinct_actions()
    index = np.full((A, 4), F, np.int32)
    index[:CALL_BASE, 0] = np.arange(CALL_BASE)
    pair = np.arange(game.pairs)
    ch, sl = pair // S, pair % S
    value = ch + sl
    bucket = np.array([value_bucket(int(x)) for x in value])
    calls = CALL_BASE + pair
    index[calls, 0] = offsets["call_slot"] + sl
    raises = game.raise_base + pair
    index[raises, 0] = offsets["raise_value"] + value
    index[raises, 1] = offsets["raise_slot"] + sl
    qk = Q * k1
    i = np.arange(qk)
    q0 = i // k1  # quantity - 1
    claims = (game.claim_base + pair[:, None] * qk + i[None, :]).ravel()
    index[claims, 0] = np.broadcast_to(offsets["claim_qk"] + i[None, :], (game.pairs, qk)).ravel()
    index[claims, 1] = np.broadcast_to(offsets["claim_value"] + value[:, None], (game.pairs, qk)).ravel()
    index[claims, 2] = np.broadcast_to(offsets["claim_slot"] + sl[:, None], (game.pairs, qk)).ravel()
    index[claims, 3] = (offsets["claim_qv"] + q0[None, :] * B + bucket[:, None]).ravel()
    return index, F


DoubtAndBetGame.state_class = DoubtAndBetState
DoubtAndBetGame.observer_class = DoubtAndBetObserver
_common.register(SPEC, _GAME_TYPE, DoubtAndBetGame)
