"""Doubt and Bet: hidden coloured cards, claims with stakes, doubts and showdowns.

Implements the rules page ``docs/rules/doubt_and_bet.md``, which states the rules
and our own rulings (marked there) in our own words.

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
contiguous run of codes (they are built as ranges).

For learning the game also offers the ``compact`` encoding
(:class:`CompactEncoder`, ``DoubtAndBetState.compact_tensor(player)``: a
few hundred floats of the current round as one player sees it) and action
factors (:func:`action_factor_table`: each action's logit as a sum of at
most four of a few hundred factor logits); both are tabulated index by
index in the rules page.

``num_distinct_actions = 6 + 2P + Q * K1 * P``. Chance outcomes: in a deal,
``k`` is a card of colour ``k`` (``card red``); in a seating shuffle,
outcome ``i`` is the i-th order (lexicographic) of the remaining players
(``seating 2 0 1 3``). ``max_chance_outcomes = max(K1, players!)`` when a
shuffle can happen, else K1.

Events. ``DoubtAndBetState.log()`` is the game's events in order, each a named tuple
(``typing.NamedTuple``) whose first field ``kind`` names it, with these
fields after it: ``Round(round)``, ``Upkeep(effects)``, ``Seating(seating)``,
``Start(first, order, chips, slots)``, ``Exchange(player, choice)``,
``Deal(player, colour)``, ``Claim(player, quantity, colour, chips,
slot_chips)``, ``Doubt(player)``, ``Call(player, chips, slot_chips)``,
``Raise(player, chips, slot_chips)``, ``AllIn(player, chips, slot_chips,
opponent_chips, opponent_slot_chips)``, ``Fold(player)``,
``Reveal(hands, count)``, ``Settle(winner, loser, chips, slot_chips)``,
``Out(player)``, ``End(reason)``. The information-state string
is their lines (``event_text``).
"""

from __future__ import annotations

import copy
import itertools
import math
from typing import NamedTuple

import numpy as np
import pyspiel

from kibitz.games import _common, search
from kibitz.games._hypergeometric import tails as _tails
from kibitz.games.chance import draw
from kibitz.games._common import Param

SHORT_NAME = "doubt_and_bet"
COLOUR_NAMES = ("red", "yellow", "green", "blue", "purple")

KEEP, BUY, SELL, DOUBT, ALL_IN, FOLD = range(6)
CALL_BASE = 6

# Phases.
SHUFFLE, EXCHANGE, DEAL, CLAIM, SHOWDOWN, OVER = range(6)
PHASE_NAMES = ("shuffle", "exchange", "deal", "claim", "showdown", "over")

# Upkeep effects (in the log and the tensors).
UP_CHIP, UP_SLOT, UP_OUT, UP_SLOT_OUT = 1, 2, 3, 4
# Exchange choices and showdown moves in the log.
EXCHANGE_WORDS = ("keep", "buy slot", "sell slot")
SD_CALL, SD_RAISE, SD_ALL_IN, SD_FOLD = 1, 2, 3, 4


# ------------------------------------------------------------------ events
# The game's log (``DoubtAndBetState.log()``): one of these per event, in
# order. Each is a tuple whose first field is its kind; the information-state
# string has one line per event that its viewer sees (``event_text``; the
# lines are in the rules page). A stake is ``chips`` plus ``slot_chips``;
# colours are indices (rainbow last).
#
# Events are built with ``_new(Kind, (kind, field, ...))``, the tuple
# constructor NamedTuple's own ``__new__`` ends in, at half its cost (the
# rules and a search's replays build one per move).
_new = tuple.__new__


class Round(NamedTuple):
    """``round {r}``: a round starts."""
    kind: str  # "round"
    round: int


class Upkeep(NamedTuple):
    """``upkeep: p0 pays a chip, ...``: (seat, UP_CHIP .. UP_SLOT_OUT) per
    remaining player, in seat order."""
    kind: str  # "upkeep"
    effects: tuple


class Seating(NamedTuple):
    """``seating 1 0 2``: the new seating order after a shuffle."""
    kind: str  # "seating"
    seating: tuple


class Start(NamedTuple):
    """``p{f} starts, order ..., chips ..., slots ...``: the first player, the
    turn order, and every seat's chips and slots (out players' too)."""
    kind: str  # "start"
    first: int
    order: tuple
    chips: tuple
    slots: tuple


class Exchange(NamedTuple):
    """``p{s} keep`` / ``buy slot`` / ``sell slot`` (``choice``: KEEP, BUY, SELL)."""
    kind: str  # "exchange"
    player: int
    choice: int


class Deal(NamedTuple):
    """``you are dealt {colour}``: one card to ``player``."""
    kind: str  # "deal"
    player: int
    colour: int


class Claim(NamedTuple):
    """``p{s} claim {q} {colour} stake {c}+{s}``."""
    kind: str  # "claim"
    player: int
    quantity: int
    colour: int
    chips: int
    slot_chips: int


class StandingClaim(NamedTuple):
    """The claim a player may raise or doubt (state, not an event: ``DoubtAndBetState.claim``)."""
    player: int
    quantity: int
    colour: int
    chips: int
    slot_chips: int


class Doubt(NamedTuple):
    """``p{s} doubt``."""
    kind: str  # "doubt"
    player: int


class Call(NamedTuple):
    """``p{s} call {c}+{s}``."""
    kind: str  # "call"
    player: int
    chips: int
    slot_chips: int


class Raise(NamedTuple):
    """``p{s} raise {c}+{s}``."""
    kind: str  # "raise"
    player: int
    chips: int
    slot_chips: int


class AllIn(NamedTuple):
    """``p{s} all in {c}+{s}, opponent's stake now {c}+{s}``: what ``player``
    wagered, and the opponent's stake after its excess was returned."""
    kind: str  # "allin"
    player: int
    chips: int
    slot_chips: int
    opponent_chips: int
    opponent_slot_chips: int


class Fold(NamedTuple):
    """``p{s} fold``."""
    kind: str  # "fold"
    player: int


class Reveal(NamedTuple):
    """``reveal p0: red rainbow | ... | count 4``: (seat, counts per colour)
    of every remaining player, and the count for the claim."""
    kind: str  # "reveal"
    hands: tuple
    count: int


class Settle(NamedTuple):
    """``p{w} wins {v}, p{l} loses {c}+{s}``: the bet is settled."""
    kind: str  # "settle"
    winner: int
    loser: int
    chips: int
    slot_chips: int


class Out(NamedTuple):
    """``p{s} is out``: left with 0 chips and 1 slot after a bet."""
    kind: str  # "out"
    player: int


class End(NamedTuple):
    """``game over: ...``; ``reason`` is last, none, max_rounds or single_bet."""
    kind: str  # "end"
    reason: str


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
_PAIR_CACHE: dict = {}


def _perms(alive: tuple) -> list:
    p = _PERMS.get(alive)
    if p is None:
        p = _PERMS[alive] = list(itertools.permutations(alive))
    return p


def colour_name(k: int, k1: int) -> str:
    return "rainbow" if k == k1 - 1 else COLOUR_NAMES[k]


class DoubtAndBetGame(pyspiel.Game):
    """Doubt and Bet with validated parameters; sizes follow the parameters."""

    def __init__(self, params=None):
        p = _common.read_params(SHORT_NAME, PARAMS, params)
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
        self.num_seats = n
        self.colours = p["colours"]
        self.k1 = p["colours"] + 1
        self.copies = p["copies"] or 2 * n
        self.start_chips = p["chips"]
        self.max_slots = p["slots"]
        self.upkeep_start = p["upkeep_start"]
        self.upkeep_every = p["upkeep_every"]
        self.shuffle_every = p["shuffle_every"]
        self.max_rounds = p["max_rounds"]
        self.single_bet = p["single_bet"]
        self.payoff = p["payoff"]
        S = self.max_slots
        total = n * (p["chips"] + S)
        self.cmax = total
        self.pairs = (total + 1) * S
        self.qmax = n * S
        self.raise_base = CALL_BASE + self.pairs
        self.claim_base = CALL_BASE + 2 * self.pairs
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

    def new_initial_state(self):
        return DoubtAndBetState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        return DoubtAndBetObserver(iig_obs_type, self, params)

    # encodings for learning (kibitz.games.encoding)
    def _compact(self) -> "CompactEncoder":
        enc = self.__dict__.get("_compact_encoder")
        if enc is None:
            enc = self.__dict__["_compact_encoder"] = CompactEncoder(self)
        return enc

    def compact_tensor_size(self) -> int:
        """Floats in the ``compact`` encoding (:class:`CompactEncoder`)."""
        return self._compact().size

    def compact_tensor_layout(self) -> list:
        """``[(piece, size, shape)]`` of the ``compact`` encoding, in order."""
        return list(self._compact().pieces)

    def action_factors(self) -> tuple:
        """``(index, F)``: the factors of each action (:func:`action_factor_table`),
        made once per game; the array is read-only."""
        table = self.__dict__.get("_action_factors")
        if table is None:
            index, count = action_factor_table(self)
            index.setflags(write=False)
            table = self.__dict__["_action_factors"] = (index, count)
        return table

    def compiled_rules(self):
        """The rules compiled for the tree compiler (``search.COMPILED``: games/_doubt_and_bet_rules.py)."""
        from kibitz.games import _doubt_and_bet_rules
        return _doubt_and_bet_rules.compiled_rules(self)


class _Core(_common.SlotsState):
    """All mutable state of a game in one object that copies cheaply
    (``_common.SlotsState``: its lists hold ints or tuples only).

    Two caches ride along, neither part of the game (not pickled): ``snap``,
    the round-start snapshot of the internal resample
    (:meth:`DoubtAndBetState._round_snapshot`), and ``istr``, the observer's
    perfect-recall strings built event by event
    (:meth:`DoubtAndBetObserver.string_from`).
    """

    __slots__ = ("chips", "slots", "out", "nout", "rnd", "first", "seating", "order",
                 "phase", "pos", "deal_seats", "deck", "ndeck", "hand", "claim", "turn",
                 "bettor", "doubter", "bstake", "dstake", "sd_turn", "sd_moves", "bet",
                 "log", "snap", "istr")
    # ``snap`` is shared by copies: nothing changes it after it is made
    COPIED = ("chips", "slots", "out", "deck", "hand", "log", "istr")

    def __getstate__(self):
        d = super().__getstate__()
        d["snap"] = None  # a cache, not part of the game
        d["istr"] = {}  # likewise
        return d


class DoubtAndBetState(_common.CoreSnapshots, pyspiel.State):
    """A game of Doubt and Bet; rules only (encoding lives in the observer)."""

    def __init__(self, game):
        super().__init__(game)
        n = game.num_seats
        self._n = n
        self._k1 = game.k1
        self._S = game.max_slots
        self._raise_base = game.raise_base
        self._claim_base = game.claim_base
        self._qk = game.qmax * game.k1
        c = _Core()
        c.chips = [game.start_chips] * n
        c.slots = [game.max_slots] * n
        c.out = [-1] * n
        c.nout = 0
        c.rnd = 0
        c.first = 0
        c.seating = tuple(range(n))
        c.order = c.seating
        c.phase = SHUFFLE
        c.pos = 0
        c.deal_seats = ()
        c.hand = [0] * (n * game.k1)
        c.deck = [game.copies] * game.k1
        c.ndeck = game.copies * game.k1
        c.claim = None
        c.turn = -1
        c.bettor = c.doubter = -1
        c.bstake = c.dstake = None
        c.sd_turn = -1
        c.sd_moves = 0
        c.bet = None
        c.log = []
        c.snap = None  # the resample's (round, history index, core, earlier deals): _round_snapshot
        c.istr = {}  # the observer's (player, viewer) -> (events read, text): string_from
        self._c = c
        self._start_round()

    # ---------------------------------------------------------------- rounds
    def _start_round(self):
        c, g = self._c, self.get_game()
        c.rnd += 1
        c.log.append(_new(Round, ("round", c.rnd)))
        r = c.rnd
        if g.upkeep_start and r >= g.upkeep_start and (r - g.upkeep_start) % g.upkeep_every == 0:
            self._upkeep()
            if c.phase == OVER:
                return
        if g.shuffle_every and r > 1 and (r - 1) % g.shuffle_every == 0:
            c.phase = SHUFFLE
        else:
            self._begin_exchange()

    def _upkeep(self):
        c = self._c
        effects = []
        gone = []
        for s in range(self._n):
            if c.out[s] >= 0:
                continue
            if c.chips[s] >= 2:
                c.chips[s] -= 1
                effects.append((s, UP_CHIP))
            elif c.slots[s] >= 2:
                c.slots[s] -= 1
                if c.chips[s] == 0 and c.slots[s] == 1:
                    effects.append((s, UP_SLOT_OUT))
                    gone.append(s)
                else:
                    effects.append((s, UP_SLOT))
            else:
                effects.append((s, UP_OUT))
                gone.append(s)
        c.log.append(_new(Upkeep, ("upkeep", tuple(effects))))
        if gone:
            for s in gone:
                c.out[s] = c.nout
            c.nout += 1
            c.first = self._starter(c.first)
            c.seating = tuple(s for s in c.seating if c.out[s] < 0)
            if len(c.seating) <= 1:
                self._end("last" if c.seating else "none")

    def _starter(self, seat):
        """``seat`` if still in, else the nearest player before it in the seating."""
        c = self._c
        if c.out[seat] < 0:
            return seat
        seating = c.seating
        i = seating.index(seat)
        for k in range(1, len(seating)):
            s = seating[i - k]
            if c.out[s] < 0:
                return s
        return seat

    def _begin_exchange(self):
        c = self._c
        i = c.seating.index(c.first)
        c.order = c.seating[i:] + c.seating[:i]
        c.log.append(_new(Start, ("start", c.first, c.order, tuple(c.chips), tuple(c.slots))))
        c.phase = EXCHANGE
        c.pos = -1
        self._next_exchanger()

    def _exchange_options(self, s):
        c = self._c
        opts = [KEEP]
        if c.chips[s] >= 1 and c.slots[s] < self._S:
            opts.append(BUY)
        if c.slots[s] >= 2:
            opts.append(SELL)
        return opts

    def _next_exchanger(self):
        c = self._c
        c.pos += 1
        S = self._S
        while c.pos < len(c.order):
            s = c.order[c.pos]
            if (c.chips[s] >= 1 and c.slots[s] < S) or c.slots[s] >= 2:
                return
            c.pos += 1
        self._begin_deal()

    def _begin_deal(self):
        c, g = self._c, self.get_game()
        seats = []
        for s in range(self._n):
            if c.out[s] < 0:
                seats.extend([s] * c.slots[s])
        c.deal_seats = tuple(seats)
        c.deck = [g.copies] * self._k1
        c.ndeck = g.copies * self._k1
        c.hand = [0] * (self._n * self._k1)
        c.pos = 0
        c.phase = DEAL

    # ------------------------------------------------------------- pyspiel API
    def current_player(self):
        c = self._c
        ph = c.phase
        if ph == CLAIM:
            return c.turn
        if ph == SHOWDOWN:
            return c.sd_turn
        if ph == EXCHANGE:
            return c.order[c.pos]
        if ph == OVER:
            return pyspiel.PlayerId.TERMINAL
        return pyspiel.PlayerId.CHANCE

    def chance_outcomes(self):
        c = self._c
        if c.phase == DEAL:
            nd = c.ndeck
            return [(k, x / nd) for k, x in enumerate(c.deck) if x]
        if c.phase == SHUFFLE:
            m = math.factorial(len(c.seating))
            return [(i, 1.0 / m) for i in range(m)]
        return []

    def legal_actions(self, player=None):
        """Same result as pyspiel's ``State.legal_actions``, computed in Python.

        Claim decisions have thousands of legal actions at the defaults;
        answering Python callers here skips pyspiel's two list conversions
        (Python to C++ and back). C++ callers (solvers, random_sim_test) use
        ``_legal_actions`` through pyspiel as usual; a test checks both agree.
        """
        cur = self.current_player()
        if cur == pyspiel.PlayerId.CHANCE:  # pyspiel answers so for any player
            return [o for o, _ in self.chance_outcomes()]
        if cur < 0 or (player is not None and player != cur):
            return []
        return self._legal_actions(cur)

    def _legal_actions(self, player):
        c = self._c
        ph = c.phase
        if ph == CLAIM:
            return self._claim_actions(player)
        if ph == SHOWDOWN:
            return self._showdown_actions(player)
        if ph == EXCHANGE:
            return self._exchange_options(player)
        return []

    def _claim_actions(self, player):
        c = self._c
        k1 = self._k1
        # a raise needs a strictly higher quantity: claim index q * K1 is the
        # first colour of quantity q + 1
        if c.claim is None:
            acts = []
            start = 0
        else:
            acts = [DOUBT]
            start = c.claim.quantity * k1
        end = len(c.deal_seats) * k1
        if start < end:
            qk = self._qk
            base = self._claim_base
            ext = acts.extend
            for o in self._stake_pairs(c.chips[player], c.slots[player], 1, None):
                b = base + o * qk
                ext(range(b + start, b + end))
        return acts

    def random_action(self, player, u):
        """``legal[int(u * len(legal))]`` of ``_legal_actions(player)``
        without listing the legal moves at a claim decision (thousands of
        claims): the same move for the same ``u`` (capability
        ``RANDOM_ACTION`` of ``kibitz.games.search``; IS-MCTS's random
        rollouts call it)."""
        c = self._c
        if c.phase != CLAIM:
            legal = self._legal_actions(player)
            return legal[int(u * len(legal))]
        k1 = self._k1
        lead = 0 if c.claim is None else 1  # DOUBT first after a claim
        start = 0 if c.claim is None else c.claim.quantity * k1
        width = len(c.deal_seats) * k1 - start
        pairs = self._stake_pairs(c.chips[player], c.slots[player], 1, None) if width > 0 else ()
        i = int(u * (lead + len(pairs) * width))
        if i < lead:
            return DOUBT
        o, j = divmod(i - lead, width)
        return self._claim_base + pairs[o] * self._qk + start + j

    def _stake_pairs(self, chips, slots, lo, hi):
        """Pair indices c*S+s of affordable stakes with lo <= value <= hi."""
        key = (self._S, chips, slots, lo, hi)
        out = _PAIR_CACHE.get(key)
        if out is None:
            S = self._S
            out = [ch * S + s for ch in range(chips + 1) for s in range(slots)
                   if ch + s >= lo and (hi is None or ch + s <= hi)]
            if len(_PAIR_CACHE) >= 4096:
                _PAIR_CACHE.clear()
            _PAIR_CACHE[key] = out
        return out

    def _showdown_actions(self, player):
        c = self._c
        mine, opp = (c.bstake, c.dstake) if player == c.bettor else (c.dstake, c.bstake)
        v = opp[0] + opp[1]
        chips, slots = c.chips[player], c.slots[player]
        if chips + slots - 1 < v:
            return [ALL_IN] if mine is None else [ALL_IN, FOLD]
        acts = [FOLD] if mine is not None else []
        acts += [CALL_BASE + o for o in self._stake_pairs(chips, slots, v, v)]
        rb = self._raise_base
        acts += [rb + o for o in self._stake_pairs(chips, slots, v + 1, None)]
        return acts

    def _apply_action(self, action):
        c = self._c
        ph = c.phase
        if ph == DEAL:
            if not (0 <= action < self._k1) or c.deck[action] == 0:
                raise _common.illegal(self, action, [o for o, _ in self.chance_outcomes()],
                                      "no card of that colour is left in the deck")
            self._deal(action)
        elif ph == SHUFFLE:
            perms = _perms(tuple(sorted(c.seating)))
            if not (0 <= action < len(perms)):
                raise _common.illegal(self, action, list(range(len(perms))),
                                      "not a seating order of the remaining players")
            c.seating = perms[action]
            c.log.append(_new(Seating, ("seating", c.seating)))
            self._begin_exchange()
        elif ph == CLAIM:
            self._apply_claim(action)
        elif ph == SHOWDOWN:
            self._apply_showdown(action)
        elif ph == EXCHANGE:
            s = c.order[c.pos]
            legal = self._exchange_options(s)
            if action not in legal:
                raise _common.illegal(self, action, legal, "it is the exchange step")
            if action == BUY:
                c.chips[s] -= 1
                c.slots[s] += 1
            elif action == SELL:
                c.chips[s] += 1
                c.slots[s] -= 1
            c.log.append(_new(Exchange, ("exchange", s, action)))
            self._next_exchanger()
        else:
            raise _common.illegal(self, action, [], "the game is over")

    def _deal(self, k):
        c = self._c
        s = c.deal_seats[c.pos]
        c.deck[k] -= 1
        c.ndeck -= 1
        c.hand[s * self._k1 + k] += 1
        c.log.append(_new(Deal, ("deal", s, k)))
        c.pos += 1
        if c.pos == len(c.deal_seats):
            c.phase = CLAIM
            c.claim = None
            c.turn = c.order[0]
            c.bettor = c.doubter = -1
            c.bstake = c.dstake = None

    def _decode_pair(self, p):
        return divmod(p, self._S)

    def _apply_claim(self, action):
        c = self._c
        me = c.turn
        k1 = self._k1
        if action == DOUBT and c.claim is not None:
            c.doubter = me
            c.bettor = c.claim.player
            c.bstake = (c.claim.chips, c.claim.slot_chips)
            c.dstake = None
            c.sd_turn = me
            c.sd_moves = 0
            c.phase = SHOWDOWN
            c.log.append(_new(Doubt, ("doubt", me)))
            return
        rel = action - self._claim_base
        why = ""
        if rel < 0:
            why = "the opener must claim" if c.claim is None else "claim or doubt"
        else:
            p, i = divmod(rel, self._qk)
            q, k = divmod(i, k1)
            q += 1
            ch, s = self._decode_pair(p)
            if q > len(c.deal_seats):
                why = f"the quantity is at most the {len(c.deal_seats)} cards dealt"
            elif c.claim is not None and q <= c.claim.quantity:
                why = f"a raise needs a quantity above {c.claim.quantity}"
            elif ch + s < 1:
                why = "a stake is at least 1"
            elif ch > c.chips[me] or s > c.slots[me] - 1:
                why = f"the stake {ch}+{s} is not affordable ({c.chips[me]} chips, {c.slots[me] - 1} slot chips)"
            else:
                c.claim = _new(StandingClaim, (me, q, k, ch, s))
                c.log.append(_new(Claim, ("claim", me, q, k, ch, s)))
                order = c.order
                c.turn = order[(order.index(me) + 1) % len(order)]
                return
        raise self._illegal(action, why)

    def _illegal(self, action, why):
        return _common.illegal(self, action, self.legal_actions(), why)

    def _apply_showdown(self, action):
        c = self._c
        me = c.sd_turn
        is_bettor = me == c.bettor
        mine, opp = (c.bstake, c.dstake) if is_bettor else (c.dstake, c.bstake)
        v = opp[0] + opp[1]
        chips, slots = c.chips[me], c.slots[me]
        can = chips + slots - 1
        why = ""
        if action == ALL_IN:
            if can >= v:
                why = f"all in only when a call of {v} is unaffordable"
            else:
                own = (chips, slots - 1)
                excess = v - can
                back_s = min(excess, opp[1])
                new_opp = (opp[0] - (excess - back_s), opp[1] - back_s)
                c.log.append(_new(AllIn, ("allin", me, *own, *new_opp)))
                if is_bettor:
                    c.bstake, c.dstake = own, new_opp
                else:
                    c.dstake, c.bstake = own, new_opp
                self._reveal()
                return
        elif action == FOLD:
            if mine is None:
                why = "the doubter cannot fold on its first action"
            else:
                c.log.append(_new(Fold, ("fold", me)))
                self._settle(c.doubter if is_bettor else c.bettor, me, mine)
                return
        elif CALL_BASE <= action < self._claim_base:
            is_raise = action >= self._raise_base
            ch, s = self._decode_pair(action - (self._raise_base if is_raise else CALL_BASE))
            val = ch + s
            if ch > chips or s > slots - 1:
                why = f"the stake {ch}+{s} is not affordable ({chips} chips, {slots - 1} slot chips)"
            elif not is_raise and val != v:
                why = f"a call matches the opponent's stake of {v}"
            elif is_raise and val <= v:
                why = f"a raise must exceed the opponent's stake of {v}"
            else:
                c.sd_moves += 1
                if is_bettor:
                    c.bstake = (ch, s)
                else:
                    c.dstake = (ch, s)
                if is_raise:
                    c.log.append(_new(Raise, ("raise", me, ch, s)))
                    c.sd_turn = c.doubter if is_bettor else c.bettor
                else:
                    c.log.append(_new(Call, ("call", me, ch, s)))
                    self._reveal()
                return
        else:
            why = "not a showdown move"
        raise self._illegal(action, why)

    def _reveal(self):
        c = self._c
        k1 = self._k1
        hands = tuple((s, tuple(c.hand[s * k1:(s + 1) * k1])) for s in range(self._n)
                      if c.out[s] < 0)
        _, q, k, _, _ = c.claim
        rb = k1 - 1
        count = sum(h[k] + (h[rb] if k != rb else 0) for _, h in hands)
        c.log.append(_new(Reveal, ("reveal", hands, count)))
        if count >= q:
            self._settle(c.bettor, c.doubter, c.dstake)
        else:
            self._settle(c.doubter, c.bettor, c.bstake)

    def _settle(self, winner, loser, stake):
        c, g = self._c, self.get_game()
        ch, s = stake
        c.chips[loser] -= ch
        c.slots[loser] -= s
        c.chips[winner] += ch + s
        c.bet = (winner, loser, ch + s)
        c.log.append(_new(Settle, ("settle", winner, loser, ch, s)))
        c.claim = None
        c.bettor = c.doubter = -1
        c.bstake = c.dstake = None
        if c.chips[loser] == 0 and c.slots[loser] == 1:
            c.out[loser] = c.nout
            c.nout += 1
            c.log.append(_new(Out, ("out", loser)))
        c.first = self._starter(loser)
        c.seating = tuple(x for x in c.seating if c.out[x] < 0)
        if g.single_bet:
            self._end("single_bet")
        elif len(c.seating) <= 1:
            self._end("last")
        elif c.rnd >= g.max_rounds:
            self._end("max_rounds")
        else:
            self._start_round()

    def _end(self, reason):
        c = self._c
        c.phase = OVER
        c.log.append(_new(End, ("end", reason)))

    def is_terminal(self):
        return self._c.phase == OVER

    def _place_keys(self):
        """Per player a sortable key: later out is better; at the cap, chips + slots."""
        c = self._c
        big = 1 << 30
        return [(c.out[s], 0) if c.out[s] >= 0 else (big, c.chips[s] + c.slots[s])
                for s in range(self._n)]

    def returns(self):
        c, g = self._c, self.get_game()
        n = self._n
        if c.phase != OVER:
            return [0.0] * n
        if g.single_bet:
            out = [0.0] * n
            if c.bet is not None:
                w, l, v = c.bet
                out[w], out[l] = float(v), -float(v)
            return out
        return self.standing()

    # ----------------------------------- search contract (kibitz.games.search)
    def log_mark(self):
        return len(self._c.log)

    def view_since(self, player, mark):
        """What ``player`` saw since ``mark`` (``_common.view_since``)."""
        k1 = self._k1
        return _common.view_since(self._c.log, mark, lambda e: cached_event_text(e, player, k1))

    def round_number(self):
        """Rounds begun so far (IS-MCTS ``rollout_rounds`` stops at a new one)."""
        return self._c.rnd

    def standing(self):
        """What a round-limited rollout backs up: the returns at the end; before
        it, with ``payoff=win``, each player's share of the chips + slots of
        the players still in (the chance to win of a player with that share
        when the rest of the game is fair, even bets; players out get 0); with
        ``payoff=rank``, the ranks if the game ended now (players out by when
        they went out, the others by chips + slots, as at the round cap)."""
        n, g, c = self._n, self.get_game(), self._c
        if g.payoff == "win" and c.phase != OVER:
            held = [c.chips[s] + c.slots[s] if c.out[s] < 0 else 0 for s in range(n)]
            total = sum(held)
            if total:
                return [h / total for h in held]
        keys = self._place_keys()
        if g.payoff == "win":
            return _common.win_shares(keys)
        scores = [sum(1 for j in range(n) if keys[j] < keys[s]) for s in range(n)]
        mean = sum(scores) / n
        return [x - mean for x in scores]

    # ---------------------------------------------------------- read-only API
    @property
    def chips(self):
        return tuple(self._c.chips)

    @property
    def slots(self):
        return tuple(self._c.slots)

    @property
    def alive(self):
        return tuple(o < 0 for o in self._c.out)

    @property
    def round(self):
        return self._c.rnd

    @property
    def first_player(self):
        return self._c.first

    @property
    def seating(self):
        return self._c.seating

    @property
    def turn_order(self):
        return self._c.order

    @property
    def phase(self):
        return PHASE_NAMES[self._c.phase]

    @property
    def claim(self):
        """The standing claim (:class:`StandingClaim`) or None."""
        return self._c.claim

    @property
    def cards_dealt(self):
        return len(self._c.deal_seats) if self._c.phase in (CLAIM, SHOWDOWN) else 0

    @property
    def showdown(self):
        """(bettor, doubter, bettor's stake, doubter's stake or None) or None."""
        c = self._c
        if c.phase != SHOWDOWN:
            return None
        return (c.bettor, c.doubter, c.bstake, c.dstake)

    def hand(self, player):
        """Counts per colour (rainbow last) of ``player``'s cards this round."""
        k1 = self._k1
        return tuple(self._c.hand[player * k1:(player + 1) * k1])

    def log(self):
        """The game's events, in order: the named tuples of the module docstring."""
        return tuple(self._c.log)

    def compact_tensor(self, player):
        """``player``'s ``compact`` encoding (:class:`CompactEncoder`): a
        float32 array of ``compact_tensor_size()`` floats."""
        if not 0 <= player < self._n:
            raise ValueError(f"player {player} is not a seat of this game (0..{self._n - 1})")
        return self.get_game()._compact().encode(self, player)

    def _action_to_string(self, player, action):
        k1 = self._k1
        if player == pyspiel.PlayerId.CHANCE:
            if self._c.phase == SHUFFLE:
                perms = _perms(tuple(sorted(self._c.seating)))
                if 0 <= action < len(perms):
                    return "seating " + " ".join(map(str, perms[action]))
                return f"seating #{action}"
            return f"card {colour_name(action, k1)}" if 0 <= action < k1 else f"card #{action}"
        if action < CALL_BASE:
            return ("keep", "buy slot", "sell slot", "doubt", "all in", "fold")[action]
        if action < self._raise_base:
            ch, s = self._decode_pair(action - CALL_BASE)
            return f"call {ch}+{s}"
        if action < self._claim_base:
            ch, s = self._decode_pair(action - self._raise_base)
            return f"raise {ch}+{s}"
        p, i = divmod(action - self._claim_base, self._qk)
        q, k = divmod(i, k1)
        ch, s = self._decode_pair(p)
        return f"claim {q + 1} {colour_name(k, k1)} stake {ch}+{s}"

    def __str__(self):
        c = self._c
        k1 = self._k1
        lines = [f"round {c.rnd}, {PHASE_NAMES[c.phase]}, first player p{c.first}, "
                 f"seating {' '.join(map(str, c.seating))}"]
        for s in range(self._n):
            bits = [f"p{s}: chips {c.chips[s]}, slots {c.slots[s]}"]
            if c.out[s] >= 0:
                bits.append("out")
            elif c.phase in (DEAL, CLAIM, SHOWDOWN):
                bits.append("hand " + (_hand_text(c.hand[s * k1:(s + 1) * k1], k1) or "-"))
            lines.append(", ".join(bits))
        if c.claim is not None:
            w, q, k, ch, s = c.claim
            lines.append(f"claim: p{w} {q} {colour_name(k, k1)} stake {ch}+{s}")
        if c.phase == SHOWDOWN:
            d = "-" if c.dstake is None else f"{c.dstake[0]}+{c.dstake[1]}"
            lines.append(f"showdown: bettor p{c.bettor} {c.bstake[0]}+{c.bstake[1]}, "
                         f"doubter p{c.doubter} {d}, p{c.sd_turn} to act")
        if c.phase == OVER:
            lines.append("game over: returns " + " ".join(f"{r:g}" for r in self.returns()))
        return "\n".join(lines)

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
        round is replayed, through the game's Python rules directly, from a
        snapshot of the round's start (``_round_snapshot``) whose log gets
        the earlier rounds' cards drawn as above: the same state as the full
        replay, but its pyspiel history is not kept; use it only inside a
        search.
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
        opponent model checks only this round's moves). Late in a game,
        drawing them once per search rather than once per world saves most
        of a simulation's time (a shuffle per revealed hand of every earlier
        round).

        ``cards`` (internal only): this round's cards in the order dealt,
        drawn by the caller (a search's belief draws them seat by seat) in
        place of the sampler's draw; the replay checks them like any move.
        """
        g = self.get_game()
        c = self._c
        if internal:
            # The search's copy starts from the state at this round's start
            # (made once per round by replaying, then shared), with the
            # earlier rounds' deals in its log drawn again: the same state
            # as a full replay, which only this round is replayed to reach.
            start, core, earlier = self._round_snapshot()
            rounds = _deal_rounds(c.log[len(core.log):], opened=True)
        else:
            start, core, earlier = 0, None, ()
            rounds = _deal_rounds(c.log)
        state = g.new_initial_state()
        key = ("db-earlier", player_id, c.rnd, start)
        if core is not None and memo is not None and key in memo:
            state._c = copy.deepcopy(memo[key])
        elif core is not None:
            # the earlier rounds' deals are drawn into the copy's log directly
            state._c = copy.deepcopy(core)
            state._c.istr = {}  # its log is rewritten below
            log = state._c.log
            for where, deals, seats in earlier:
                if seats is not None:  # revealed
                    for s, at, known in seats:
                        if s != player_id:
                            known = known[:]
                            _shuffle(known, probability_sampler)
                            for j, k in zip(at, known):
                                log[j] = _new(Deal, ("deal", s, k))
                    continue
                drawn = []
                _redraw_round(deals, False, player_id, probability_sampler, g.copies, self._k1, drawn)
                for j, (s, _), k in zip(where, deals, drawn):
                    log[j] = _new(Deal, ("deal", s, k))
            if earlier and state._c.phase != DEAL:
                # before this round's deal the hands and deck are still the
                # last round's: make them those of the cards just drawn
                _redeal(state._c, [log[j] for j in earlier[-1][0]], g.copies, self._k1)
            if memo is not None:
                memo[key] = copy.deepcopy(state._c)
        new_cards = cards
        if new_cards is None:
            new_cards = []
            for where, deals, revealed in rounds:
                _redraw_round(deals, revealed, player_id, probability_sampler, g.copies, self._k1, new_cards)
        apply = _common.replay_applier(state, internal, player_id, check)
        dealt = iter(new_cards)
        for a in self.history()[start:]:
            if state._c.phase == DEAL:
                apply(next(dealt))
            else:
                apply(a)
        return state

    def round_start(self):
        """(history index, state) at the start of this round, for searches:
        the number of moves of the history before the round began, and a
        new state right after them (its upkeep done, nothing of its
        exchange or deal yet), from which replaying the rest of the history
        with ``_apply_action`` reaches this state. A search's own world (an
        internal resample) has no history: ask the real state."""
        start, core, _ = self._round_snapshot()
        state = self.get_game().new_initial_state()
        state._c = copy.deepcopy(core)
        return start, state

    def _round_snapshot(self):
        """(history index, core, earlier rounds' deals) at this round's start.

        The core is the state right after the move that began this round
        (its upkeep done, nothing of its exchange or deal yet), ``history
        index`` the number of moves that led there, and the deals are
        ``_deal_rounds`` of the core's log without this round, each as
        (log indices, deals, ``_by_seat`` of them if revealed else None). Made by
        replaying the history once per round and kept on the core, where
        clones share it (nothing changes it afterwards).
        """
        c = self._c
        if c.snap is not None and c.snap[0] == c.rnd:
            return c.snap[1:]
        replay = self.get_game().new_initial_state()
        r = replay._c
        for i, a in enumerate(self.history()):
            if r.rnd == c.rnd:
                break
            replay._apply_action(a)
        else:
            i = len(self.history())
            if r.rnd != c.rnd:
                raise ValueError("the state's history does not reach its round (a search's own "
                                 "world has none: resample the real state)")
        core = copy.deepcopy(r)
        earlier = _deal_rounds(core.log)
        assert not earlier[-1][1], "a round's start has no deal yet"
        earlier = [(w, d, _by_seat(w, d) if revealed else None) for w, d, revealed in earlier[:-1]]
        c.snap = (c.rnd, i, core, earlier)
        return c.snap[1:]


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


def _redeal(core, deals, copies: int, k1: int) -> None:
    """Sets ``core``'s hands and deck to what dealing ``deals`` (``Deal``
    events) from a full deck leaves, as ``_deal`` does card by card."""
    core.hand = [0] * len(core.hand)
    core.deck = [copies] * k1
    for e in deals:
        core.hand[e.player * k1 + e.colour] += 1
        core.deck[e.colour] -= 1
    core.ndeck = copies * k1 - len(deals)


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


def _hand_text(counts, k1):
    return " ".join(" ".join([colour_name(k, k1)] * x) for k, x in enumerate(counts) if x)


def _stake_text(ch, s):
    return f"{ch}+{s}"


_EVENT_TEXTS: dict = {}  # (event, viewer, K1) -> event_text
_MISSING = object()


def cached_event_text(e, me: int, k1: int) -> str | None:
    """``event_text``, cached: every event is a tuple of ints and tuples,
    and its text depends only on it, the viewer and K1."""
    key = (e, me, k1)
    t = _EVENT_TEXTS.get(key, _MISSING)
    if t is _MISSING:
        if len(_EVENT_TEXTS) > 200_000:
            _EVENT_TEXTS.clear()
        t = _EVENT_TEXTS[key] = event_text(e, me, k1)
    return t


def event_text(e, me: int, k1: int) -> str | None:
    """One log event as ``me`` sees it (``me=-1``: public only), or None."""
    kind = e.kind
    if kind == "round":
        return f"round {e.round}"
    if kind == "upkeep":
        words = {UP_CHIP: "pays a chip", UP_SLOT: "loses a slot", UP_OUT: "is out",
                 UP_SLOT_OUT: "loses a slot and is out"}
        return "upkeep: " + ", ".join(f"p{s} {words[x]}" for s, x in e.effects)
    if kind == "seating":
        return "seating " + " ".join(map(str, e.seating))
    if kind == "start":
        first, order, chips, slots = e.first, e.order, e.chips, e.slots
        n = len(chips)
        ch = " ".join(str(chips[s]) if s in order else "-" for s in range(n))
        sl = " ".join(str(slots[s]) if s in order else "-" for s in range(n))
        return f"p{first} starts, order {' '.join(map(str, order))}, chips {ch}, slots {sl}"
    if kind == "exchange":
        return f"p{e.player} {EXCHANGE_WORDS[e.choice]}"
    if kind == "deal":
        return f"you are dealt {colour_name(e.colour, k1)}" if e.player == me else None
    if kind == "claim":
        return (f"p{e.player} claim {e.quantity} {colour_name(e.colour, k1)} "
                f"stake {e.chips}+{e.slot_chips}")
    if kind == "doubt":
        return f"p{e.player} doubt"
    if kind == "call":
        return f"p{e.player} call {e.chips}+{e.slot_chips}"
    if kind == "raise":
        return f"p{e.player} raise {e.chips}+{e.slot_chips}"
    if kind == "allin":
        return (f"p{e.player} all in {e.chips}+{e.slot_chips}, "
                f"opponent's stake now {e.opponent_chips}+{e.opponent_slot_chips}")
    if kind == "fold":
        return f"p{e.player} fold"
    if kind == "reveal":
        hands = " | ".join(f"p{s}: {_hand_text(h, k1) or '-'}" for s, h in e.hands)
        return f"reveal {hands} | count {e.count}"
    if kind == "settle":
        return (f"p{e.winner} wins {e.chips + e.slot_chips}, "
                f"p{e.loser} loses {e.chips}+{e.slot_chips}")
    if kind == "out":
        return f"p{e.player} is out"
    if kind == "end":
        return {"last": "game over: one player left", "none": "game over: nobody left",
                "max_rounds": "game over: max rounds reached",
                "single_bet": "game over: the single bet is settled"}[e.reason]
    raise ValueError(f"unknown event {e!r}")


class DoubtAndBetObserver(_common.Observer):
    """Observation and information-state encodings for Doubt and Bet.

    n players, K1 colours (rainbow last), S = slots, Q = n*S, R = max_rounds
    (1 with single_bet), L = Cmax + S + 2 showdown moves. Numbers are stored
    as they are (counts, chips), seats and colours as index+1 where a slot
    may be empty (0).

    Perfect recall (information state)::

        observer              n      one-hot: whose view this is
        per round (R times, ``round_size`` each):
          present             1      1 once the round has started
          upkeep              n      per seat: 0 none, 1 pays a chip, 2 loses a
                                     slot, 3 out, 4 loses a slot and is out
          seating             n      new order (seat+1 per position) if shuffled
          first               n      one-hot first player
          chips, slots        2n     at the start of the exchange
          exchange            n      per seat: 1 keep, 2 buy, 3 sell (0 not asked)
          own_hand            K1     own cards (private), counts per colour
          own_cards           S      own cards (private) in the order dealt,
                                     colour+1 each (the string shows that order)
          claims              Q*5    per claim: claimant+1, quantity, colour+1,
                                     stake chips, stake slot chips
          doubter             n      one-hot
          showdown            L*4    per move: player+1, kind (1 call, 2 raise,
                                     3 all in, 4 fold), chips, slot chips
          revealed            1+n*K1 1 if revealed, then every hand (counts)
          result              2n+2   one-hot winner, one-hot loser, chips, slot chips
          out                 n      1 for a player out after this bet

    Observation (current round only)::

        observer n | to_move n+1 (last: chance/none) | phase 6 | round 1 |
        chips n | slots n | out n | first n | own_hand K1 | dealt 1 |
        claimant n | quantity 1 | colour K1 | claim_stake 2 | doubter n |
        bettor_stake 2 | doubter_stake 2 | doubter_staked 1 |
        revealed n*K1 (the last reveal of this round)

    The observation string (docs/rules/doubt_and_bet.md) says what this
    tensor shows: ``chips`` and ``slots`` are every seat's, out players'
    too (``-`` for an out player's 1 slot, and for its chips unless it kept
    one at an upkeep); ``first`` is the ``order``'s first player, except
    during a seating shuffle and at the end, where the string adds it
    (``first p1``).
    """

    def __init__(self, iig_obs_type, game, params):
        super().__init__(iig_obs_type, params)
        n, k1 = game.num_seats, game.k1
        self.n, self.k1 = n, k1
        self.Q = game.qmax
        self.L = game.cmax + game.max_slots + 2
        self.R = 1 if game.single_bet else game.max_rounds
        if self.perfect_recall:
            sizes = [("present", 1), ("upkeep", n), ("seating", n), ("first", n),
                     ("chips", n), ("slots", n), ("exchange", n), ("own_hand", k1),
                     ("own_cards", game.max_slots),
                     ("claims", self.Q * 5), ("doubter", n), ("showdown", self.L * 4),
                     ("revealed", 1 + n * k1), ("result", 2 * n + 2), ("out", n)]
            self.offsets = {}
            i = 0
            for name, size in sizes:
                self.offsets[name] = i
                i += size
            self.round_size = i
            pieces = [("observer", n, (n,)),
                      ("rounds", self.R * self.round_size, (self.R, self.round_size))]
        else:
            pieces = [("observer", n, (n,)), ("to_move", n + 1, (n + 1,)), ("phase", 6, (6,)),
                      ("round", 1, (1,)), ("chips", n, (n,)), ("slots", n, (n,)),
                      ("out", n, (n,)), ("first", n, (n,)), ("own_hand", k1, (k1,)),
                      ("dealt", 1, (1,)), ("claimant", n, (n,)), ("quantity", 1, (1,)),
                      ("colour", k1, (k1,)), ("claim_stake", 2, (2,)), ("doubter", n, (n,)),
                      ("bettor_stake", 2, (2,)), ("doubter_stake", 2, (2,)),
                      ("doubter_staked", 1, (1,)), ("revealed", n * k1, (n, k1))]
        self.set_pieces(pieces)

    def _set_history(self, state, me):
        n, k1, off = self.n, self.k1, self.offsets
        rounds = self.dict["rounds"]
        row = None
        r = -1
        nclaims = nsd = nown = 0
        for e in state._c.log:
            kind = e.kind
            if kind == "round":
                r += 1
                row = rounds[r]
                row[off["present"]] = 1
                nclaims = nsd = nown = 0
            elif kind == "upkeep":
                for s, x in e.effects:
                    row[off["upkeep"] + s] = x
            elif kind == "seating":
                for i, s in enumerate(e.seating):
                    row[off["seating"] + i] = s + 1
            elif kind == "start":
                row[off["first"] + e.first] = 1
                row[off["chips"]:off["chips"] + n] = e.chips
                row[off["slots"]:off["slots"] + n] = e.slots
            elif kind == "exchange":
                row[off["exchange"] + e.player] = e.choice + 1
            elif kind == "deal":
                if e.player == me and self.private:
                    row[off["own_hand"] + e.colour] += 1
                    row[off["own_cards"] + nown] = e.colour + 1
                    nown += 1
            elif kind == "claim":
                b = off["claims"] + 5 * nclaims
                row[b:b + 5] = (e.player + 1, e.quantity, e.colour + 1, e.chips, e.slot_chips)
                nclaims += 1
            elif kind == "doubt":
                row[off["doubter"] + e.player] = 1
            elif kind in ("call", "raise", "allin", "fold"):
                b = off["showdown"] + 4 * nsd
                code = {"call": SD_CALL, "raise": SD_RAISE, "allin": SD_ALL_IN, "fold": SD_FOLD}[kind]
                row[b] = e.player + 1
                row[b + 1] = code
                if kind != "fold":
                    row[b + 2], row[b + 3] = e.chips, e.slot_chips
                nsd += 1
            elif kind == "reveal":
                b = off["revealed"]
                row[b] = 1
                for s, h in e.hands:
                    row[b + 1 + s * k1:b + 1 + (s + 1) * k1] = h
            elif kind == "settle":
                b = off["result"]
                row[b + e.winner] = 1
                row[b + n + e.loser] = 1
                row[b + 2 * n] = e.chips
                row[b + 2 * n + 1] = e.slot_chips
            elif kind == "out":
                row[off["out"] + e.player] = 1

    def _set_current(self, state, me):
        c, d, n, k1 = state._c, self.dict, self.n, self.k1
        cur = state.current_player()
        d["to_move"][cur if 0 <= cur < n else n] = 1
        d["phase"][c.phase] = 1
        d["round"][0] = c.rnd
        d["chips"][:] = c.chips
        d["slots"][:] = c.slots
        d["out"][:] = [1 if o >= 0 else 0 for o in c.out]
        d["first"][c.first] = 1
        in_round = c.phase in (CLAIM, SHOWDOWN) or (c.phase == DEAL)
        if self.private and in_round:
            d["own_hand"][:] = c.hand[me * k1:(me + 1) * k1]
        if c.phase in (CLAIM, SHOWDOWN):
            d["dealt"][0] = len(c.deal_seats)
        if c.claim is not None:
            w, q, k, ch, s = c.claim
            d["claimant"][w] = 1
            d["quantity"][0] = q
            d["colour"][k] = 1
            d["claim_stake"][:] = (ch, s)
        if c.phase == SHOWDOWN:
            d["doubter"][c.doubter] = 1
            d["bettor_stake"][:] = c.bstake
            if c.dstake is not None:
                d["doubter_stake"][:] = c.dstake
                d["doubter_staked"][0] = 1
        for s, h in _revealed(c):
            d["revealed"][s, :] = h

    def string_from(self, state, player):
        c = state._c
        k1 = self.k1
        if self.perfect_recall:
            who = player if self.private else -1
            # OpenSpiel's ISMCTSBot asks for this string about five times per
            # simulation. The log only grows, so the string so far is kept on
            # the state (copied with it) and extended by the events since.
            log = c.log
            key = (player, who)
            n, text = c.istr.get(key) or (0, f"p{player}")
            if n < len(log):
                parts = [text]
                for e in itertools.islice(log, n, None):
                    t = cached_event_text(e, who, k1)
                    if t is not None:
                        parts.append(t)
                text = "\n".join(parts)
                c.istr[key] = (len(log), text)
            return text
        n = self.n
        bits = [f"p{player}", f"round {c.rnd}", PHASE_NAMES[c.phase],
                # an out player's chips are "-" unless it kept some (knocked out
                # by an upkeep holding a chip); its slots (always 1) are "-"
                "chips " + " ".join(str(c.chips[s]) if c.out[s] < 0 or c.chips[s] else "-"
                                    for s in range(n)),
                "slots " + " ".join(str(c.slots[s]) if c.out[s] < 0 else "-" for s in range(n)),
                "order " + " ".join(map(str, c.order))]
        if c.phase in (SHUFFLE, OVER):
            # the order above is the last round's; who starts the next round
            # (in the others it is the order's first player)
            bits.append(f"first p{c.first}")
        if self.private and c.phase in (DEAL, CLAIM, SHOWDOWN):
            bits.append("hand " + (_hand_text(c.hand[player * k1:(player + 1) * k1], k1) or "-"))
        if c.phase in (CLAIM, SHOWDOWN):
            bits.append(f"dealt {len(c.deal_seats)}")
        if c.claim is not None:
            w, q, k, ch, s = c.claim
            bits.append(f"claim p{w} {q} {colour_name(k, k1)} stake {ch}+{s}")
        if c.phase == SHOWDOWN:
            d = "-" if c.dstake is None else _stake_text(*c.dstake)
            bits.append(f"showdown bettor p{c.bettor} {_stake_text(*c.bstake)} "
                        f"doubter p{c.doubter} {d}")
        revealed = _revealed(c)
        if revealed:
            bits.append("revealed " + " ".join(
                f"p{s}:{_hand_text(h, k1).replace(' ', ',') or '-'}" for s, h in revealed))
        if c.phase != OVER:
            cur = state.current_player()
            bits.append(f"to move p{cur}" if cur >= 0 else "to move chance")
        return " | ".join(bits)


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


class CompactEncoder:
    """The ``compact`` encoding: a few hundred floats for learning, the
    current round as one player sees it (not perfect recall). The index
    table, with what each number is, is the section "Compact encoding" of
    docs/rules/doubt_and_bet.md; in short (n players, K1 colours, S slots,
    Q = n*S, T = chips + slots at the start)::

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

    def __init__(self, game):
        n, k1, S, Q = game.num_seats, game.k1, game.max_slots, game.qmax
        self.n, self.k1, self.S, self.Q = n, k1, S, Q
        self.T = game.start_chips + S
        self.seat_size = 13 + k1
        self.pieces = [("phase", 4, (4,)), ("schedule", 5, (5,)), ("own_hand", k1, (k1,)),
                       ("own_support", k1, (k1,)), ("dealt", 1, (1,)), ("expected", k1, (k1,)),
                       ("chance", Q * k1, (Q, k1)), ("seats", n * self.seat_size, (n, self.seat_size)),
                       ("claim", 6 + n + Q + k1, (6 + n + Q + k1,)), ("showdown", 11 + 2 * n, (11 + 2 * n,))]
        self.size = sum(size for _, size, _ in self.pieces)
        self.rounds = 1 if game.single_bet else game.max_rounds
        self.copies = game.copies
        self.upkeep = (game.upkeep_start, game.upkeep_every)
        self.shuffle_every = game.shuffle_every

    def _next_upkeep(self, r: int):
        start, every = self.upkeep
        if not start:
            return None
        u = start if r < start else start + ((r - start) // every + 1) * every
        return u if u <= self.rounds else None

    def _next_shuffle(self, r: int):
        every = self.shuffle_every
        if not every:
            return None
        u = 1 + ((r - 1) // every + 1) * every
        return u if u <= self.rounds else None

    def positions(self, c, me: int) -> list:
        """The seats in the viewer's order: ``me``, the remaining players
        in seating order after ``me`` (from the seating's start if ``me``
        is out), then the players out by seat number after ``me``."""
        n, seating = self.n, c.seating
        if me in seating:
            i = seating.index(me)
            others = list(seating[i + 1:] + seating[:i])
        else:
            others = list(seating)
        return [me, *others, *((me + d) % n for d in range(1, n) if c.out[(me + d) % n] >= 0)]

    def encode(self, state, me: int) -> np.ndarray:
        c = state._c
        n, k1, S, Q, T = self.n, self.k1, self.S, self.Q, self.T
        tensor, v = _common.tensor_views(self.pieces)
        ph = c.phase
        if ph in (EXCHANGE, DEAL, CLAIM, SHOWDOWN, OVER):
            v["phase"][{EXCHANGE: 0, DEAL: 1, CLAIM: 1, SHOWDOWN: 2, OVER: 3}[ph]] = 1
        r = c.rnd
        up, sh = self._next_upkeep(r), self._next_shuffle(r)
        v["schedule"][:] = (r / self.rounds,
                            min(up - r, self.upkeep[1]) / self.upkeep[1] if up else 1.0, 0.0 if up else 1.0,
                            min(sh - r, self.shuffle_every) / self.shuffle_every if sh else 1.0,
                            0.0 if sh else 1.0)
        pos = self.positions(c, me)
        where = {s: j for j, s in enumerate(pos)}
        chance = v["chance"]
        if ph in (DEAL, CLAIM, SHOWDOWN):
            hand = c.hand[me * k1:(me + 1) * k1]
            rb = k1 - 1
            support = [hand[k] + hand[rb] for k in range(rb)] + [hand[rb]]
            v["own_hand"][:] = hand
            v["own_hand"] /= S
            v["own_support"][:] = support
            v["own_support"] /= S
            dealt = len(c.deal_seats)
            v["dealt"][0] = dealt / Q
            mine = sum(hand)
            if mine == c.deal_seats.count(me):  # all own cards are dealt
                population, draws = self.copies * k1 - mine, dealt - mine
                for k in range(k1):
                    good = 2 * self.copies - hand[k] - hand[rb] if k < rb else self.copies - hand[rb]
                    tails = _tails(population, good, draws)
                    a = support[k]
                    chance[:, k] = [1.0 if q <= a else tails[q - a] if q - a <= draws else 0.0
                                    for q in range(1, Q + 1)]
                    v["expected"][k] = (a + (draws * good / population if population else 0.0)) / Q
        seats = v["seats"]
        for j, s in enumerate(pos):
            row = seats[j]
            if c.out[s] >= 0:
                row[0] = 1
            else:
                row[3] = (c.chips[s] + c.slots[s] - 1) / T
            row[1] = c.chips[s] / T
            row[2] = c.slots[s] / S
            row[4] = s == c.first
        claims = 0
        counted = [0] * n
        for e in reversed(c.log):
            kind = e.kind
            if kind == "round":
                break
            if kind == "exchange":
                seats[where[e.player], 5 + e.choice] = 1
            elif kind == "claim":
                claims += 1
                row = seats[where[e.player]]
                if not counted[e.player]:  # the newest claim of that player
                    row[9] = 1
                    row[10] = e.quantity / Q
                    row[11 + e.colour] = 1
                    row[11 + k1] = e.chips / T
                    row[12 + k1] = e.slot_chips / S
                counted[e.player] += 1
        for s in range(n):
            seats[where[s], 8] = counted[s] / S
        if c.claim is not None:
            w, q, k, ch, sc = c.claim
            cl = v["claim"]
            cl[0] = 1
            cl[1 + where[w]] = 1
            cl[n + q] = 1
            cl[1 + n + Q + k] = 1
            b = 1 + n + Q + k1
            cl[b:b + 5] = (ch / T, sc / S, (ch + sc) / T, chance[q - 1, k], claims / Q)
        if ph == SHOWDOWN:
            sd = v["showdown"]
            sd[0] = 1
            sd[1] = me == c.bettor
            sd[2] = me == c.doubter
            sd[3 + where[c.bettor]] = 1
            sd[3 + n + where[c.doubter]] = 1
            ch, sc = c.bstake
            sd[3 + 2 * n:6 + 2 * n] = (ch / T, sc / S, (ch + sc) / T)
            if c.dstake is not None:
                ch, sc = c.dstake
                sd[6 + 2 * n:10 + 2 * n] = (1, ch / T, sc / S, (ch + sc) / T)
            sd[10 + 2 * n] = c.sd_turn == c.bettor
        return tensor


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


def _revealed(c):
    """(seat, hand) of every hand revealed in this round, or (): only the
    last round's can be seen (any other is followed at once by a new round)."""
    for e in reversed(c.log):
        if e.kind == "reveal":
            return e.hands
        if e.kind == "round":
            return ()
    return ()


_common.register(SPEC, _GAME_TYPE, DoubtAndBetGame)
