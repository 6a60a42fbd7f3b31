"""Over/Under: predict whether the next card is over or under a stack's top.

Implements the rules page ``docs/rules/over_under.md``, which states the rules
and our own rulings (marked there) in our own words.

A round: ``stacks`` cards are dealt face up, one per stack (chance, stack 0
first). From the player left of the dealer, clockwise, each player names a
stack still on the table and "over" or "under"; the next card of the deck is
flipped (chance) and goes on top of that stack. Correct (or a tie in the
classic version): safe. Wrong: the player claims the stack, flipped card
included, and it leaves the table. Cut-throat: on a tie the player chooses
another player, who claims the stack. Jokers: the $2 joker is always safe and
makes the top $2 (it counts $2); a Pyramid or Eagle makes the player choose
another player, who claims the stack (the joker counts 0; alone, the player
claims it). The round ends when every stack is claimed or the deck is empty;
unclaimed stacks are not scored. A new round deals a fresh deck; the deal
passes left. Lowest total over all rounds wins. The solo Donor version
(``players=1``) is one round whose payoff is the money left on the table.

Every card is face up; the only hidden information is the order of the deck,
which is chance. A flip is one chance outcome per card value still in the
deck, with probability count/remaining (suits of a standard deck never
matter), so the whole history is public and an information state is the
public history.

By OpenSpiel's terms that is a stochastic perfect-information game, but the
game type says ``IMPERFECT_INFORMATION``, on purpose. OpenSpiel's IS-MCTS,
the Python ``ISMCTSBot`` and the C++ ``pyspiel.ISMCTSBot`` alike, refuses
any other game type (an assertion, a ``SpielError``), and kibitz's strength
matches and speed benchmark search Over/Under with it beside the other
games. Declared imperfect, nothing is lost: each information state holds
exactly one history, so CFR's tree, tabular policies, exported agents and
``pyspiel.random_sim_test`` see the same information states either way (the
key is the information-state string, which does not depend on the
declaration), and ``resample_from_infostate`` returns a copy of the state,
which is what a perfect-information game's resample would be. Declaring it
perfect would only open OpenSpiel's ``value_iteration`` to it (one or two
players, zero-sum); its alpha-beta search needs a deterministic game anyway.

Rulings that are our own (also in the rules page):

* ``copies=0`` (default) means 8 of each bill for the cash deck (48 cards)
  and 4 of each rank for the standard deck (52 cards).
* The jokers are not dealt into the grid: the stacks are dealt from the
  bills, then the three jokers are shuffled into the dealer pile.
* The dealer predicts too, last in the round's turn order; round 1's dealer
  is the last seat, so seat 0 starts.
* After a give (cut-throat tie, Pyramid, Eagle) the turn passes on from the
  player who gave, as after any other flip.
* ``players=1`` is one round (``rounds`` 0 or 1); in both payoff modes its
  payoff is the money left in unclaimed stacks. Donor ranks: $1..$99 Lucky,
  $100..$499 Big, $500..$999 Wealthy, $1000 and up Mega (the text's ranges
  overlap at $500 and skip $99).
* ``stacks`` must leave at least one bill in the deck to flip.
* Default ``players`` is 4 (the text allows 2..8). Caps: ``rounds`` <= 16,
  ``stacks`` <= 20, ``copies`` <= 16 (cash) or 4 (standard); the standard
  deck is our own addition; cut-throat needs 2+ players.
* Round 1's dealer is the last seat (seat 0 starts); the deal passes left
  and the player left of the dealer starts; every round uses the full deck.
* The $2 joker counts $2 in its stack, a Pyramid or Eagle $0; the text's
  "hand it to any player" means another player (alone: the player claims it).
* ``payoff=win``: the lowest tallies share 1; ``payoff=score``: mean tally
  minus own tally.

Encoding. Player actions: ``2*s`` is ``stack s over``, ``2*s + 1`` is
``stack s under`` (stacks numbered from 0 as dealt), ``2*stacks + p`` is
``give to p``; ``num_distinct_actions = 2*stacks + players``. Chance outcomes:
``k`` is the k-th card value of the deck (cash: $1 $5 $10 $20 $50 $100;
standard: A 2 .. 10 J Q K), then with jokers ``K`` the $2 joker, ``K + 1``
Pyramid, ``K + 2`` Eagle, where K is the number of values (6 or 13).

Tensors (index tables in :class:`OverUnderObserver`). The information-state
tensor is ``observer n`` then, for each of R rounds, ``dealt S*K`` (the value
dealt to each stack) and, for each of at most ``D - S`` flips in order,
``seat n | stack S | over, under 2 | card KC | give n``. The observation
tensor is the current table: ``observer n | to_move n+1 | round R |
dealer n | tally n | top S*(K+1) | on_table S | claimed_by S*n | money S |
deck KC | pending S | direction 2 | phase 5``.

For learning the game also offers the ``compact`` encoding
(:class:`CompactEncoder`, ``OverUnderState.compact_tensor(player)``: 134
floats at the defaults): per stack, for each direction, the exact chance that
the next flip is safe and the expected money claimed
(``OverUnderState.prediction_odds``, what the heuristic plays by), the deck's
counts, and the seats in the viewer's order; its index table is the rules
page's section "Compact encoding".

Events. ``OverUnderState.log()`` is the game's events in order, each a named tuple
(``typing.NamedTuple``) whose first field ``kind`` names it, with these
fields after it: ``Round(round, dealer, starter, tally)``, ``Deal(stack, card)``,
``Predict(player, stack, over)``, ``Flip(card, stack, outcome)``,
``Give(player, to)``, ``Claim(player, stack, money)``,
``RoundEnd(round, why, unclaimed, tally)``, ``Donor(donated)``,
``Winners(players)``. The information-state string
is their lines (``event_text``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pyspiel

from kibitz.games import _common, search
from kibitz.games._common import Param

SHORT_NAME = "over_under"

CASH_VALUES = (1, 5, 10, 20, 50, 100)
CASH_NAMES = tuple(f"${v}" for v in CASH_VALUES)
STANDARD_VALUES = tuple(range(1, 14))
STANDARD_NAMES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
JOKER_NAMES = ("$2 joker", "pyramid", "eagle")
MAX_COPIES = {"cash": 16, "standard": 4}
DEFAULT_COPIES = {"cash": 8, "standard": 4}
MAX_STACKS = 20
MAX_ROUNDS = 16

# Phases.
DEAL, PREDICT, FLIP, GIVE, OVER = range(5)
PHASE_NAMES = ("deal", "predict", "flip", "give", "over")

# Donor ranks of the solo version: (lowest amount, name).
DONOR_RANKS = ((1000, "Mega Donor"), (500, "Wealthy Donor"), (100, "Big Donor"),
               (1, "Lucky Donor"))


# ------------------------------------------------------------------ events
# The game's log (``OverUnderState.log()``): one of these per event, in
# order. Each is a tuple whose first field is its kind; the
# information-state string has one line per event (``event_text``; the lines
# are in the rules page). A ``card`` is a card kind (chance outcome order).
#
# Events are built with ``_new(Kind, (kind, field, ...))``, the tuple
# constructor NamedTuple's own ``__new__`` ends in, at half its cost (the
# rules and a search's replays build one per move).
_new = tuple.__new__


class Round(NamedTuple):
    """``round R of N: dealer pD, pS starts, tally ...`` (tallies before it)."""
    kind: str  # "round"
    round: int
    dealer: int
    starter: int
    tally: tuple


class Deal(NamedTuple):
    """``stack S: card V``: ``card`` dealt face up to start ``stack``."""
    kind: str  # "deal"
    stack: int
    card: int


class Predict(NamedTuple):
    """``pP: stack S over`` (``over`` false: ``under``)."""
    kind: str  # "predict"
    player: int
    stack: int
    over: bool


class Flip(NamedTuple):
    """``card V on stack S: safe``; ``outcome`` is safe, bust, tie or joker."""
    kind: str  # "flip"
    card: int
    stack: int
    outcome: str


class Give(NamedTuple):
    """``pP: give to Q``: ``player`` hands the stack to ``to``."""
    kind: str  # "give"
    player: int
    to: int


class Claim(NamedTuple):
    """``pQ claims stack S ($M)``: the stack leaves the table."""
    kind: str  # "claim"
    player: int
    stack: int
    money: int


class RoundEnd(NamedTuple):
    """``round R over (all stacks claimed): $U unclaimed, tally ...``;
    ``why`` is "claimed" or "empty" (the deck)."""
    kind: str  # "end"
    round: int
    why: str
    unclaimed: int
    tally: tuple


class Donor(NamedTuple):
    """Solo version, at the end: ``donated $M: Big Donor``."""
    kind: str  # "donor"
    donated: int


class Winners(NamedTuple):
    """``game over: lowest tally pA pB``: the players with the lowest tally."""
    kind: str  # "winners"
    players: tuple


def _copies(v):
    return v["copies"] or DEFAULT_COPIES.get(v["deck"], 8)


def _bills(v):
    return _copies(v) * (6 if v["deck"] == "cash" else 13)


PARAMS = (
    Param("players", 4, "number of players (1 = the solo Donor version)", "1..8", low=1, high=8),
    Param("deck", "cash", "cash: $1 $5 $10 $20 $50 $100; standard: A=1 .. K=13",
          "cash, standard", choices=("cash", "standard")),
    Param("copies", 0, "cards of each value (0 = 8 for cash, 4 for standard)",
          "0, or 1..16 (cash), 1..4 (standard)", low=0,
          high=lambda v: MAX_COPIES.get(v["deck"], 16)),
    Param("stacks", 9, "stacks dealt face up at the start of a round",
          f"1..{MAX_STACKS}, fewer than the cards in the deck", low=1,
          high=lambda v: min(MAX_STACKS, _bills(v) - 1)),
    Param("rounds", 0, "rounds (0 = one per player: each player deals once)",
          f"0..{MAX_ROUNDS} (0 or 1 with players=1)", low=0,
          high=lambda v: 1 if v["players"] == 1 else MAX_ROUNDS),
    Param("variant", "classic", "classic: a tie is safe; cutthroat: a tie hands the stack on",
          "classic, cutthroat", choices=("classic", "cutthroat")),
    Param("jokers", False, "shuffle in a $2 joker, a Pyramid and an Eagle", "true, false",
          choices=(True, False)),
    Param("payoff", "win", "win: lowest total shares 1; score: mean total minus own total",
          "win, score", choices=("win", "score")),
)

SPEC = _common.GameSpec(
    short_name=SHORT_NAME,
    long_name="Over/Under",
    summary="Predict over or under a stack's top card; wrong guesses take the stack.",
    params=PARAMS,
    small="over_under(players=2,copies=1,stacks=1,rounds=1)",
    search=frozenset({search.DIRECT, search.SNAPSHOT, search.ROUNDS, search.PUBLIC_CHANCE,
                      search.COMPILED}),
    encodings=("compact",),
)

_GAME_TYPE = _common.game_type(SHORT_NAME, "Over/Under", PARAMS, min_players=1, max_players=8)


def donor_rank(amount: int) -> str:
    """The solo version's rank for the money left on the table."""
    for low, name in DONOR_RANKS:
        if amount >= low:
            return name
    return "no donation"


class _Rules:
    """The game's constants, shared by every state (never copied)."""

    def __init__(self, p):
        n = p["players"]
        self.n = n
        self.deck = p["deck"]
        self.copies = _copies(p)
        base_vals = CASH_VALUES if self.deck == "cash" else STANDARD_VALUES
        base_names = CASH_NAMES if self.deck == "cash" else STANDARD_NAMES
        self.K = len(base_vals)
        self.jokers = p["jokers"]
        self.KC = self.K + (3 if self.jokers else 0)
        # value (and money) of each card kind; the $2 joker is worth 2, the
        # Pyramid and Eagle 0.
        self.vals = base_vals + (2, 0, 0)
        self.names = base_names + JOKER_NAMES
        self.S = p["stacks"]
        self.bills = self.copies * self.K
        self.D = self.bills + (3 if self.jokers else 0)
        self.rounds = p["rounds"] or n
        self.cut = p["variant"] == "cutthroat"
        self.payoff = p["payoff"]
        self.give_base = 2 * self.S
        self.all_predictions = tuple(range(2 * self.S))
        self.total_money = self.copies * sum(base_vals) + (2 if self.jokers else 0)

    def __deepcopy__(self, memo):
        return self


class OverUnderGame(pyspiel.Game):
    """Over/Under with validated parameters; sizes follow the parameters."""

    def __init__(self, params=None):
        p = _common.read_params(SHORT_NAME, PARAMS, params)
        if p["variant"] == "cutthroat" and p["players"] < 2:
            raise ValueError(
                f"{SHORT_NAME}: parameter variant='cutthroat' needs players >= 2 "
                f"(here players={p['players']}); allowed with players=1: classic")
        r = _Rules(p)
        self.rules = r
        self.num_seats = r.n
        self.payoff = r.payoff
        if r.n == 1:
            utility = pyspiel.GameType.Utility.GENERAL_SUM
            lo, hi, total_u = 0.0, float(r.total_money), None
        elif r.payoff == "win":
            utility = pyspiel.GameType.Utility.CONSTANT_SUM
            lo, hi, total_u = 0.0, 1.0, 1.0
        else:
            utility = pyspiel.GameType.Utility.ZERO_SUM
            most = r.rounds * r.total_money
            lo, hi, total_u = -most * (r.n - 1) / r.n, most / r.n, 0.0
        game_type = _common.game_type(SHORT_NAME, "Over/Under", PARAMS,
                                      min_players=1, max_players=8, utility=utility)
        info = pyspiel.GameInfo(
            num_distinct_actions=2 * r.S + r.n,
            max_chance_outcomes=r.KC,
            num_players=r.n,
            min_utility=lo,
            max_utility=hi,
            utility_sum=total_u,
            # per round: `stacks` deals, then at most D - stacks flips of two
            # moves each (prediction, card), plus at most one give per stack.
            max_game_length=r.rounds * 2 * r.D,
        )
        super().__init__(game_type, info, p)

    def new_initial_state(self):
        return OverUnderState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        return OverUnderObserver(iig_obs_type, self, params)

    def compiled_rules(self):
        """The rules compiled for the tree compiler (``search.COMPILED``:
        games/_over_under_rules.py)."""
        from kibitz.games import _over_under_rules
        return _over_under_rules.compiled_rules(self)

    # encodings for learning (kibitz.games.encoding)
    def _compact(self) -> "CompactEncoder":
        enc = self.__dict__.get("_compact_encoder")
        if enc is None:
            enc = self.__dict__["_compact_encoder"] = CompactEncoder(self.rules)
        return enc

    def compact_tensor_size(self) -> int:
        """Floats in the ``compact`` encoding (:class:`CompactEncoder`)."""
        return self._compact().size

    def compact_tensor_layout(self) -> list:
        """``[(piece, size, shape)]`` of the ``compact`` encoding, in order."""
        return list(self._compact().pieces)


class _Core(_common.SlotsState):
    """All mutable state in one object that copies cheaply
    (``_common.SlotsState``; its lists hold ints and tuples)."""

    __slots__ = ("tally", "rnd", "dealer", "turn", "phase", "counts", "rem", "ndealt",
                 "top", "money", "owner", "open", "legal", "pstack", "pover", "log",
                 "donated")
    COPIED = ("tally", "counts", "top", "money", "owner", "legal", "log")


class OverUnderState(_common.CoreSnapshots, pyspiel.State):
    """A game of Over/Under; rules only (encoding lives in the observer)."""

    def __init__(self, game):
        super().__init__(game)
        r = game.rules
        self._r = r
        c = _Core()
        c.tally = [0] * r.n
        c.rnd = 0
        c.log = []
        c.donated = -1
        self._c = c
        self._new_round()

    # ---------------------------------------------------------------- rules
    def _new_round(self):
        c, r = self._c, self._r
        c.rnd += 1
        c.dealer = (c.rnd - 2) % r.n
        c.turn = (c.rnd - 1) % r.n
        c.phase = DEAL
        c.counts = [r.copies] * r.K + [0] * (r.KC - r.K)
        c.rem = r.bills
        c.ndealt = 0
        c.top = [-1] * r.S
        c.money = [0] * r.S
        c.owner = [-1] * r.S
        c.open = 0
        c.legal = []
        c.pstack = -1
        c.pover = True
        c.log.append(_new(Round, ("round", c.rnd, c.dealer, c.turn, tuple(c.tally))))

    def current_player(self):
        ph = self._c.phase
        if ph == PREDICT or ph == GIVE:
            return self._c.turn
        if ph == OVER:
            return pyspiel.PlayerId.TERMINAL
        return pyspiel.PlayerId.CHANCE

    def _legal_actions(self, player):
        c = self._c
        if c.phase == PREDICT:
            return c.legal[:]
        if c.phase == GIVE:
            base = self._r.give_base
            return [base + p for p in range(self._r.n) if p != c.turn]
        return []

    def chance_outcomes(self):
        c = self._c
        rem = c.rem
        return [(k, n / rem) for k, n in enumerate(c.counts) if n]

    def _apply_action(self, action):
        c, r = self._c, self._r
        ph = c.phase
        if ph == FLIP or ph == DEAL:
            if not (0 <= action < r.KC and c.counts[action]):
                raise _common.illegal(self, action, [o for o, _ in self.chance_outcomes()],
                                      "no such card left in the deck")
            c.counts[action] -= 1
            c.rem -= 1
            if ph == DEAL:
                self._deal(action)
            else:
                self._flip(action)
        elif ph == PREDICT:
            if not (0 <= action < r.give_base and c.top[action >> 1] >= 0
                    and c.owner[action >> 1] < 0):
                raise _common.illegal(self, action, self._legal_actions(c.turn),
                                      "name a stack still on the table, over or under")
            c.pstack = action >> 1
            c.pover = not action & 1
            c.phase = FLIP
            c.log.append(_new(Predict, ("predict", c.turn, c.pstack, c.pover)))
        elif ph == GIVE:
            to = action - r.give_base
            if not (0 <= to < r.n and to != c.turn):
                raise _common.illegal(self, action, self._legal_actions(c.turn),
                                      "give the stack to another player")
            c.log.append(_new(Give, ("give", c.turn, to)))
            self._claim(to)
            self._advance()
        else:
            raise _common.illegal(self, action, [], "the game is over")

    def _deal(self, k):
        c, r = self._c, self._r
        s = c.ndealt
        c.top[s] = k
        c.money[s] = r.vals[k]
        c.ndealt = s + 1
        c.log.append(_new(Deal, ("deal", s, k)))
        if c.ndealt == r.S:
            if r.jokers:
                c.counts[r.K] = c.counts[r.K + 1] = c.counts[r.K + 2] = 1
                c.rem += 3
            c.open = r.S
            c.legal = list(r.all_predictions)
            c.phase = PREDICT

    def _flip(self, k):
        c, r = self._c, self._r
        s = c.pstack
        vals = r.vals
        if k < r.K:
            v = vals[k]
            t = vals[c.top[s]]
            c.money[s] += v
            c.top[s] = k
            if v == t:
                outcome = "tie"
            elif (v > t) == c.pover:
                outcome = "safe"
            else:
                outcome = "bust"
        elif k == r.K:
            c.money[s] += 2
            c.top[s] = k
            outcome = "safe"
        else:
            outcome = "joker"
        if outcome == "safe" or (outcome == "tie" and not r.cut):
            c.log.append(_new(Flip, ("flip", k, s, outcome)))
            self._advance()
        elif outcome == "bust" or r.n == 1:
            c.log.append(_new(Flip, ("flip", k, s, outcome)))
            self._claim(c.turn)
            self._advance()
        else:
            c.log.append(_new(Flip, ("flip", k, s, outcome)))
            c.phase = GIVE

    def _claim(self, seat):
        c = self._c
        s = c.pstack
        c.owner[s] = seat
        c.tally[seat] += c.money[s]
        c.open -= 1
        c.legal.remove(2 * s)
        c.legal.remove(2 * s + 1)
        c.log.append(_new(Claim, ("claim", seat, s, c.money[s])))

    def _advance(self):
        c, r = self._c, self._r
        if c.open and c.rem:
            c.turn = (c.turn + 1) % r.n
            c.phase = PREDICT
            return
        left = sum(m for m, o in zip(c.money, c.owner) if o < 0)
        c.log.append(_new(RoundEnd, ("end", c.rnd, "claimed" if not c.open else "empty", left,
                              tuple(c.tally))))
        if c.rnd < r.rounds:
            self._new_round()
            return
        c.phase = OVER
        if r.n == 1:
            c.donated = left
            c.log.append(_new(Donor, ("donor", left)))
        else:
            best = min(c.tally)
            c.log.append(_new(Winners, ("winners", tuple(i for i, t in enumerate(c.tally) if t == best))))

    def is_terminal(self):
        return self._c.phase == OVER

    def returns(self):
        c, r = self._c, self._r
        if c.phase != OVER:
            return [0.0] * r.n
        if r.n == 1:
            return [float(c.donated)]
        return self.standing()

    # ----------------------------------- search contract (kibitz.games.search)
    def round_number(self):
        """Rounds begun so far (IS-MCTS ``rollout_rounds`` stops at a new one)."""
        return self._c.rnd

    def standing(self):
        """What a round-limited rollout backs up: the returns at the end. Before
        it, with one player, the money on the table in unclaimed stacks; with
        ``payoff=win``, each player's share of the money the *others* have
        claimed, ``(total - tally) / ((n - 1) * total)`` (1/n each while nobody
        has claimed any): lower tallies score higher and the shares sum to 1,
        like win shares, but without a winner-takes-all jump on a few dollars;
        with ``payoff=score``, the returns if the game ended now."""
        c, r = self._c, self._r
        if r.n == 1:
            return [float(c.donated if c.phase == OVER else
                          sum(m for m, o in zip(c.money, c.owner) if o < 0))]
        if r.payoff == "win" and c.phase != OVER:
            total = sum(c.tally)
            if not total:
                return [1.0 / r.n] * r.n
            return [(total - t) / ((r.n - 1) * total) for t in c.tally]
        if r.payoff == "win":
            return _common.win_shares(c.tally, higher_is_better=False)
        mean = sum(c.tally) / r.n
        return [mean - t for t in c.tally]

    # ---------------------------------------------------------- read-only API
    @property
    def rules(self):
        """The game's constants (``OverUnderGame.rules``, shared by its states)."""
        return self._r

    @property
    def deck_size(self):
        """Cards still in the deck (the sum of ``deck_counts``)."""
        return self._c.rem

    @property
    def tally(self):
        """Each player's money claimed so far, all rounds."""
        return tuple(self._c.tally)

    @property
    def round(self):
        return self._c.rnd

    @property
    def dealer(self):
        return self._c.dealer

    @property
    def phase(self):
        return PHASE_NAMES[self._c.phase]

    def stacks(self):
        """Per stack: (top card kind or -1, money in it, claimer or -1)."""
        c = self._c
        return tuple(zip(c.top, c.money, c.owner))

    def on_table(self):
        """Stacks dealt and not claimed, ascending."""
        c = self._c
        return tuple(s for s in range(self._r.S) if c.top[s] >= 0 and c.owner[s] < 0)

    def top_value(self, s):
        """The value a prediction on stack ``s`` compares with."""
        return self._r.vals[self._c.top[s]]

    def prediction_odds(self, s):
        """``(safe_over, cost_over, safe_under, cost_under)`` of the next flip
        for a prediction on stack ``s`` (on the table, the deck not empty),
        exact over the cards left in the deck (``deck_counts``).

        ``safe_X`` is the chance that the player who says X does not claim
        the stack: the flipped value is on the said side of the top value,
        or equal to it (a classic tie is safe; a cut-throat tie hands the
        stack to another player), or the card is the $2 joker, or (with 2+
        players) a Pyramid or Eagle, which is handed on too. ``cost_X`` is
        the expected money the player claims: for each card that busts, its
        chance times the stack's money plus the card's value (alone, a
        Pyramid or Eagle: the stack's money). The rules page's section
        "Compact encoding" gives the formulas.
        """
        c, r = self._c, self._r
        vals, K, left, money = r.vals, r.K, c.rem, c.money[s]
        top = vals[c.top[s]]
        odd_safe = r.n > 1
        safe_o = safe_u = cost_o = cost_u = 0.0
        for k, n in enumerate(c.counts):
            if not n:
                continue
            p = n / left
            if k < K:
                v = vals[k]
                if v == top:
                    safe_o += p
                    safe_u += p
                elif v > top:
                    safe_o += p
                    cost_u += p * (money + v)
                else:
                    cost_o += p * (money + v)
                    safe_u += p
            elif k == K or odd_safe:
                safe_o += p
                safe_u += p
            else:
                cost_o += p * money
                cost_u += p * money
        return safe_o, cost_o, safe_u, cost_u

    @property
    def deck_counts(self):
        """Cards of each kind still in the deck (chance outcome order)."""
        return tuple(self._c.counts)

    @property
    def pending_stack(self):
        """The stack named by the prediction being resolved (-1 if none)."""
        return self._c.pstack if self._c.phase in (FLIP, GIVE) else -1

    @property
    def donated(self):
        """Solo version: money left on the table at the end (-1 before)."""
        return self._c.donated

    def log(self):
        """The game's events, in order: the named tuples of the module docstring."""
        return tuple(self._c.log)

    def compact_tensor(self, player):
        """``player``'s ``compact`` encoding (:class:`CompactEncoder`): a
        float32 array of ``compact_tensor_size()`` floats."""
        if not 0 <= player < self._r.n:
            raise ValueError(f"player {player} is not a seat of this game (0..{self._r.n - 1})")
        return self.get_game()._compact().encode(self, player)

    def card_name(self, k):
        return self._r.names[k]

    def _action_to_string(self, player, action):
        r = self._r
        if player == pyspiel.PlayerId.CHANCE:
            return f"card {r.names[action]}" if 0 <= action < r.KC else f"card ?{action}"
        if 0 <= action < r.give_base:
            return f"stack {action >> 1} {'under' if action & 1 else 'over'}"
        return f"give to {action - r.give_base}"

    def __str__(self):
        c, r = self._c, self._r
        names = r.names
        head = f"round {c.rnd} of {r.rounds}, dealer p{c.dealer}"
        if c.phase == PREDICT:
            head += f", p{c.turn} to predict"
        elif c.phase == FLIP:
            head += f", p{c.turn} said stack {c.pstack} {'over' if c.pover else 'under'}"
        elif c.phase == GIVE:
            head += f", p{c.turn} gives stack {c.pstack} away"
        lines = [head]
        for s in range(r.S):
            if c.top[s] < 0:
                lines.append(f"stack {s}: not dealt")
            elif c.owner[s] >= 0:
                lines.append(f"stack {s}: claimed by p{c.owner[s]} (${c.money[s]})")
            else:
                lines.append(f"stack {s}: top {names[c.top[s]]}, ${c.money[s]} in it")
        deck = " ".join(f"{names[k]}x{n}" for k, n in enumerate(c.counts) if n)
        lines.append(f"deck {c.rem}: {deck or 'empty'}")
        lines.append("tally " + " ".join(f"p{i} ${t}" for i, t in enumerate(c.tally)))
        if c.phase == OVER:
            if r.n == 1:
                lines.append(donor_text(c.donated))
            lines.append("game over: returns " + " ".join(f"{x:g}" for x in self.returns()))
        return "\n".join(lines)

    # ------------------------------------------------------------ resampling
    def resample_from_infostate(self, player_id, probability_sampler, internal=False, check=None):
        """A state drawn from ``player_id``'s information state.

        Every card is face up and each chance outcome is a card value, so the
        information state determines the history: the only consistent state
        is this one. The deck order, the only hidden thing, is not part of a
        state (it is drawn at the chance nodes still to come), so a copy is an
        exact sample; ``probability_sampler`` is not needed.

        ``internal`` (kibitz's searches pass it to the other games, which then
        replay without pyspiel's history bookkeeping) changes nothing here,
        nor does ``check`` (no move is replayed).
        """
        return self.clone()


def donor_text(amount: int) -> str:
    if amount <= 0:
        return "every stack claimed: nothing donated"
    return f"donated ${amount}: {donor_rank(amount)}"


def event_text(e, names, rounds) -> str:
    """One log event as one line of the information-state string."""
    kind = e.kind
    if kind == "round":
        return (f"round {e.round} of {rounds}: dealer p{e.dealer}, p{e.starter} starts, "
                f"tally {' '.join(map(str, e.tally))}")
    if kind == "deal":
        return f"stack {e.stack}: card {names[e.card]}"
    if kind == "predict":
        return f"p{e.player}: stack {e.stack} {'over' if e.over else 'under'}"
    if kind == "flip":
        return f"card {names[e.card]} on stack {e.stack}: {e.outcome}"
    if kind == "give":
        return f"p{e.player}: give to {e.to}"
    if kind == "claim":
        return f"p{e.player} claims stack {e.stack} (${e.money})"
    if kind == "end":
        why = "all stacks claimed" if e.why == "claimed" else "deck empty"
        return (f"round {e.round} over ({why}): ${e.unclaimed} unclaimed, "
                f"tally {' '.join(map(str, e.tally))}")
    if kind == "donor":
        return donor_text(e.donated)
    if kind == "winners":
        return "game over: lowest tally " + " ".join(f"p{s}" for s in e.players)
    raise ValueError(f"unknown event {e!r}")


class OverUnderObserver(_common.Observer):
    """Observation and information-state encodings for Over/Under.

    With n players, S stacks, K card values, KC = K (+3 with jokers) card
    kinds, D cards in the deck, F = D - S flips at most per round and
    R rounds.

    Information state (perfect recall; every event is public), tensor::

        observer            n     one-hot: whose view this is
        per round r (R times):
          dealt             S*K   one-hot value dealt to each stack
          per flip f (F times, in order):
            seat            n     one-hot: who predicted
            stack           S     one-hot: the stack named
            over, under     2     the direction
            card            KC    one-hot: the card flipped
            give            n     one-hot: who was handed the stack

    Observation (current view), tensor::

        observer n | to_move n+1 (last: chance/terminal) | round R | dealer n |
        tally n (money) | top S*(K+1) (last: the $2 joker) | on_table S |
        claimed_by S*n | money S | deck KC (cards left of each kind) |
        pending S (stack being resolved) | direction 2 | phase 5

    Strings: the information-state string is ``p{player}`` then one line
    per event (see ``event_text`` and the rules page); the observation
    string is one line of ``|``-separated fields.
    """

    def __init__(self, iig_obs_type, game, params):
        super().__init__(iig_obs_type, params)
        r = game.rules
        self.r = r
        n, S, K, KC, R = r.n, r.S, r.K, r.KC, r.rounds
        F = r.D - S
        self.F = F
        if self.perfect_recall:
            self.flip_size = 2 * n + S + 2 + KC
            self.round_size = S * K + F * self.flip_size
            pieces = [("observer", n, (n,)),
                      ("rounds", R * self.round_size, (R, self.round_size))]
        else:
            pieces = [("observer", n, (n,)), ("to_move", n + 1, (n + 1,)),
                      ("round", R, (R,)), ("dealer", n, (n,)), ("tally", n, (n,)),
                      ("top", S * (K + 1), (S, K + 1)), ("on_table", S, (S,)),
                      ("claimed_by", S * n, (S, n)), ("money", S, (S,)),
                      ("deck", KC, (KC,)), ("pending", S, (S,)), ("direction", 2, (2,)),
                      ("phase", 5, (5,))]
        self.set_pieces(pieces)

    def _set_history(self, state, player):
        r = self.r
        n, S, K = r.n, r.S, r.K
        rounds = self.dict["rounds"]
        fs = self.flip_size
        row = None
        base = 0
        f = -1
        for e in state._c.log:
            kind = e.kind
            if kind == "round":
                row = rounds[e.round - 1]
                f = -1
            elif kind == "deal":
                row[e.stack * K + e.card] = 1
            elif kind == "predict":
                f += 1
                base = S * K + f * fs
                row[base + e.player] = 1
                row[base + n + e.stack] = 1
                row[base + n + S + (0 if e.over else 1)] = 1
            elif kind == "flip":
                row[base + n + S + 2 + e.card] = 1
            elif kind == "give":
                row[base + n + S + 2 + r.KC + e.to] = 1

    def _set_current(self, state, player):
        c, r, d = state._c, self.r, self.dict
        n, K = r.n, r.K
        cur = state.current_player()
        d["to_move"][cur if 0 <= cur < n else n] = 1
        d["round"][c.rnd - 1] = 1
        d["dealer"][c.dealer] = 1
        d["tally"][:] = c.tally
        for s in range(r.S):
            k = c.top[s]
            if k < 0:
                continue
            if c.owner[s] >= 0:
                d["claimed_by"][s, c.owner[s]] = 1
            else:
                d["on_table"][s] = 1
                d["top"][s, min(k, K)] = 1
            d["money"][s] = c.money[s]
        d["deck"][:] = c.counts
        if c.phase in (FLIP, GIVE):
            d["pending"][c.pstack] = 1
            d["direction"][0 if c.pover else 1] = 1
        d["phase"][c.phase] = 1

    def string_from(self, state, player):
        c, r = state._c, self.r
        if self.perfect_recall:
            names, rounds = r.names, r.rounds
            return "\n".join([f"p{player}"] + [event_text(e, names, rounds) for e in c.log])
        names = r.names
        bits = [f"p{player}", f"round {c.rnd} of {r.rounds}", f"dealer p{c.dealer}",
                "tally " + " ".join(map(str, c.tally))]
        table = []
        for s in range(r.S):
            k = c.top[s]
            if k < 0:
                continue
            if c.owner[s] >= 0:
                table.append(f"{s}:p{c.owner[s]}/${c.money[s]}")
            else:
                table.append(f"{s}:{names[k]}/${c.money[s]}")
        bits.append("stacks " + (" ".join(table) if table else "-"))
        bits.append("deck " + (" ".join(f"{names[k]}x{m}" for k, m in enumerate(c.counts) if m)
                               or "empty"))
        if c.phase == PREDICT:
            bits.append(f"p{c.turn} predicts")
        elif c.phase == FLIP:
            bits.append(f"p{c.turn}: stack {c.pstack} {'over' if c.pover else 'under'}")
        elif c.phase == GIVE:
            bits.append(f"p{c.turn} gives stack {c.pstack} (said {'over' if c.pover else 'under'})")
        elif c.phase == OVER:
            bits.append("game over")
        return " | ".join(bits)


class CompactEncoder:
    """The ``compact`` encoding: a hundred-odd floats for learning, the
    current table as one player sees it, with the numbers the heuristic
    plays by computed exactly. The index table is the section "Compact
    encoding" of docs/rules/over_under.md; in short (n players, S stacks,
    KC card kinds, M = one deck's money, V = the highest card value,
    R = rounds)::

        phase     5          one-hot: deal | predict | flip | give | over
        schedule  3          round/R, rounds after this one/R, last round
        stacks    S x 11     per stack: on table, claimed, top value/V, top is
                             the $2 joker, money/M, pending over, pending under,
                             P(safe | over), P(safe | under),
                             expected money claimed | over /M, | under /M
        deck      KC + 1     cards left of each kind / its count in a full
                             deck, then cards left / cards in a full deck
        seats     n x 5      per seat, the viewer first, then the next seats
                             in turn order: tally/M, rank (seats with a lower
                             tally)/(n-1), (tally - lowest tally)/M, dealer,
                             its turn

    Every card is face up, so all of it is public; only the seats' order
    depends on the viewer.
    """

    STACK_ITEMS = 11
    SEAT_ITEMS = 5

    def __init__(self, rules):
        r = rules
        self.r = r
        self.pieces = [("phase", 5, (5,)), ("schedule", 3, (3,)),
                       ("stacks", r.S * self.STACK_ITEMS, (r.S, self.STACK_ITEMS)),
                       ("deck", r.KC + 1, (r.KC + 1,)),
                       ("seats", r.n * self.SEAT_ITEMS, (r.n, self.SEAT_ITEMS))]
        self.size = sum(size for _, size, _ in self.pieces)
        self.top_scale = max(r.vals[:r.K])
        self.full = [r.copies] * r.K + [1] * (r.KC - r.K)

    def positions(self, me: int) -> list:
        """The seats in the viewer's order: ``me``, then ``me + 1``, ... (mod n)."""
        n = self.r.n
        return [(me + j) % n for j in range(n)]

    def encode(self, state, me: int) -> np.ndarray:
        c, r = state._c, self.r
        n, M, R = r.n, r.total_money, r.rounds
        tensor, v = _common.tensor_views(self.pieces)
        v["phase"][c.phase] = 1
        v["schedule"][:] = (c.rnd / R, (R - c.rnd) / R, c.rnd == R)
        stacks = v["stacks"]
        odds = c.phase in (PREDICT, FLIP, GIVE) and c.rem > 0
        resolving = c.pstack if c.phase in (FLIP, GIVE) else -1
        for s in range(r.S):
            k = c.top[s]
            if k < 0:
                continue
            row = stacks[s]
            row[4] = c.money[s] / M
            if c.owner[s] >= 0:
                row[1] = 1
                continue
            row[0] = 1
            row[2] = r.vals[k] / self.top_scale
            row[3] = k == r.K
            if s == resolving:
                row[5 if c.pover else 6] = 1
            if odds:
                safe_o, cost_o, safe_u, cost_u = state.prediction_odds(s)
                row[7:11] = (safe_o, safe_u, cost_o / M, cost_u / M)
        deck = v["deck"]
        deck[:r.KC] = [m / f for m, f in zip(c.counts, self.full)]
        deck[r.KC] = c.rem / r.D
        seats = v["seats"]
        tally = c.tally
        low = min(tally)
        turn = c.turn if c.phase in (PREDICT, FLIP, GIVE) else -1
        for j, p in enumerate(self.positions(me)):
            t = tally[p]
            seats[j] = (t / M, sum(u < t for u in tally) / max(n - 1, 1), (t - low) / M,
                        p == c.dealer, p == turn)
        return tensor


_common.register(SPEC, _GAME_TYPE, OverUnderGame)
