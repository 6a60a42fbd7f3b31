"""Over/Under: predict whether the next card is over or under a stack's top.

Implements the rules page ``docs/rules/over_under.md``, which states the rules
and our own rulings (marked there) in our own words. The rules themselves
are written once, as compiled functions on an array position
(``_over_under_rules``); this module declares the parameters and the game,
and plays those functions through the generic pyspiel adapter
(``kibitz.games.adapter``); the events, strings and observer are in
``_over_under_strings`` (re-exported here). docs/adding-a-game.md tells how.

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
(``OverUnderState.compact_tensor(player)``, written by the compiled
``compact``; pieces in ``_over_under_strings.compact_pieces``; 134 floats at
the defaults): per stack, for each direction, the exact chance that the next
flip is safe and the expected money claimed (``OverUnderState.prediction_odds``,
what the heuristic plays by), the deck's counts, and the seats in the
viewer's order; its index table is the rules page's section "Compact
encoding".

Events. ``OverUnderState.log()`` is the game's events in order, each a named tuple
(``typing.NamedTuple``) whose first field ``kind`` names it, with these
fields after it: ``Round(round, dealer, starter, tally)``, ``Deal(stack, card)``,
``Predict(player, stack, over)``, ``Flip(card, stack, outcome)``,
``Give(player, to)``, ``Claim(player, stack, money)``,
``RoundEnd(round, why, unclaimed, tally)``, ``Donor(donated)``,
``Winners(players)`` (in ``_over_under_strings``). The information-state
string is their lines (``event_text``).
"""

from __future__ import annotations

import numpy as np
import pyspiel

from kibitz.games import _common, _over_under_rules, _over_under_strings, adapter, search
from kibitz.games._common import Param
from kibitz.games._over_under_rules import (BILLS, CASH_VALUES, COPIES, CUT, DEAL, DONATED, FIRST_TALLY, FIRST_VALUE,
                                            FLIP, GIVE, JOKER_VALUES, JOKERS, OVER, PHASE, PREDICT, PSTACK, REM,
                                            ROUND, ROUNDS, STANDARD_VALUES, WIN)
from kibitz.games._over_under_strings import (CASH_NAMES, DONOR_RANKS, JOKER_NAMES, PHASE_NAMES, STANDARD_NAMES,
                                              Claim, Deal, Donor, Flip, Give, OverUnderObserver, Predict, Round,
                                              RoundEnd, Winners, donor_rank, donor_text, event_text)

__all__ = ["CASH_NAMES", "CASH_VALUES", "Claim", "DEAL", "DEFAULT_COPIES", "DONOR_RANKS", "Deal", "Donor", "FLIP",
           "Flip", "GIVE", "Give", "JOKER_NAMES", "MAX_COPIES", "MAX_ROUNDS", "MAX_STACKS", "OVER", "OverUnderGame",
           "OverUnderObserver", "OverUnderRules", "OverUnderState", "PARAMS", "PHASE_NAMES", "PREDICT", "Predict",
           "Round", "RoundEnd", "SHORT_NAME", "SPEC", "STANDARD_NAMES", "STANDARD_VALUES", "Winners", "donor_rank",
           "donor_text", "event_text"]

SHORT_NAME = "over_under"
MAX_COPIES = {"cash": 16, "standard": 4}
DEFAULT_COPIES = {"cash": 8, "standard": 4}
MAX_STACKS = 20
MAX_ROUNDS = 16


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
                      search.KNOWN_WORLD, search.COMPILED}),
    encodings=("compact",),
)

_GAME_TYPE = _common.game_type(SHORT_NAME, "Over/Under", PARAMS, min_players=1, max_players=8)


def _param(i: int, kind=int):
    return property(lambda r: kind(r.params[i]), doc=f"parameter {i} of the compiled rules")


class OverUnderRules(search.CompiledRules):
    """The compiled rules (``game.rules``), which also name the game's sizes
    as code above the games reads them (``rules.n``, ``rules.give_base``,
    ``rules.names``, ...), read from the parameters array."""

    __slots__ = ()
    n = _param(_over_under_rules.N)  #: players
    K = _param(_over_under_rules.K)  #: card values
    KC = _param(_over_under_rules.KC)  #: card kinds (the values, then the jokers if played)
    S = _param(_over_under_rules.S)  #: stacks
    copies = _param(COPIES)  #: cards of each value
    bills = _param(BILLS)  #: cards of the deck without the jokers
    rounds = _param(ROUNDS)
    cut = _param(CUT, bool)  #: the cut-throat variant
    jokers = _param(JOKERS, bool)

    @property
    def deck(self) -> str:
        return "cash" if self.K == len(CASH_VALUES) else "standard"

    @property
    def payoff(self) -> str:
        return "win" if self.params[WIN] else "score"

    @property
    def vals(self) -> tuple:
        """The value (and money) of each card kind, jokers included (2, 0, 0)."""
        return tuple(self.params[FIRST_VALUE:FIRST_VALUE + self.K].tolist()) + JOKER_VALUES

    @property
    def names(self) -> tuple:
        return (CASH_NAMES if self.deck == "cash" else STANDARD_NAMES) + JOKER_NAMES

    @property
    def D(self) -> int:
        """Cards in the deck after the deal's jokers are shuffled in."""
        return self.bills + (3 if self.jokers else 0)

    @property
    def give_base(self) -> int:
        """The action ``give to 0``."""
        return 2 * self.S

    @property
    def all_predictions(self) -> tuple:
        return tuple(range(2 * self.S))

    @property
    def total_money(self) -> int:
        """One deck's money, jokers included."""
        return self.copies * sum(self.vals[:self.K]) + (2 if self.jokers else 0)


class OverUnderGame(adapter.Game):
    """Over/Under with validated parameters; sizes follow the parameters."""

    def __init__(self, params=None):
        p = _common.read_params(SHORT_NAME, PARAMS, params)
        if p["variant"] == "cutthroat" and p["players"] < 2:
            raise ValueError(
                f"{SHORT_NAME}: parameter variant='cutthroat' needs players >= 2 "
                f"(here players={p['players']}); allowed with players=1: classic")
        n = self.num_seats = p["players"]
        cash = p["deck"] == "cash"
        self.copies = _copies(p)
        self.values = (CASH_VALUES if cash else STANDARD_VALUES) + JOKER_VALUES
        self.card_names = (CASH_NAMES if cash else STANDARD_NAMES) + JOKER_NAMES
        K = self.num_values = len(CASH_VALUES if cash else STANDARD_VALUES)
        self.jokers = p["jokers"]
        KC = self.num_kinds = K + (3 if self.jokers else 0)
        S = self.num_stacks = p["stacks"]
        self.deck_cards = self.copies * K + (3 if self.jokers else 0)
        self.num_rounds = p["rounds"] or n
        self.cutthroat = p["variant"] == "cutthroat"
        self.payoff = p["payoff"]
        self.layout = _over_under_strings.Layout.of(n, KC, S)
        total_money = self.copies * sum(self.values[:K]) + (2 if self.jokers else 0)
        if n == 1:
            utility = pyspiel.GameType.Utility.GENERAL_SUM
            lo, hi, total_u = 0.0, float(total_money), None
        elif self.payoff == "win":
            utility = pyspiel.GameType.Utility.CONSTANT_SUM
            lo, hi, total_u = 0.0, 1.0, 1.0
        else:
            utility = pyspiel.GameType.Utility.ZERO_SUM
            most = self.num_rounds * total_money
            lo, hi, total_u = -most * (n - 1) / n, most / n, 0.0
        game_type = _common.game_type(SHORT_NAME, "Over/Under", PARAMS,
                                      min_players=1, max_players=8, utility=utility)
        info = pyspiel.GameInfo(
            num_distinct_actions=2 * S + n,
            max_chance_outcomes=KC,
            num_players=n,
            min_utility=lo,
            max_utility=hi,
            utility_sum=total_u,
            # per round: `stacks` deals, then at most D - stacks flips of two
            # moves each (prediction, card), plus at most one give per stack.
            max_game_length=self.num_rounds * 2 * self.deck_cards,
        )
        self._compact_pieces = _over_under_strings.compact_pieces(n, KC, S)
        super().__init__(game_type, info, p)

    def compiled_rules(self):
        """The rules (``search.COMPILED``: games/_over_under_rules.py)."""
        return OverUnderRules(*_over_under_rules.compiled_rules(self))

    def begin_log(self, log, position):
        log.append(_over_under_strings.round_event(position, self.num_seats))

    def record(self, log, before, action, after):
        _over_under_strings.record(log, before, action, after, self.rules.params, self.layout)

    # encodings for learning (kibitz.games.encoding)
    def compact_tensor_size(self) -> int:
        """Floats in the ``compact`` encoding (``_over_under_strings.compact_pieces``)."""
        return sum(size for _, size, _ in self._compact_pieces)

    def compact_tensor_layout(self) -> list:
        """``[(piece, size, shape)]`` of the ``compact`` encoding, in order."""
        return list(self._compact_pieces)


class OverUnderState(adapter.State):
    """A game of Over/Under on the compiled rules; its log is the game's events."""

    def _why_illegal(self):
        return _over_under_strings.why_illegal(int(self._c.s[PHASE]))

    def _action_to_string(self, player, action):
        g = self._c.game
        return _over_under_strings.action_name(g.card_names, g.num_kinds, g.num_stacks, player, action)

    def __str__(self):
        c = self._c
        g = c.game
        return _over_under_strings.state_string(c.s.tolist(), g.layout, g.card_names, g.num_rounds, self.returns())

    # ----------------------------------- search contract (kibitz.games.search)
    def round_number(self):
        """Rounds begun so far (IS-MCTS ``rollout_rounds`` stops at a new one)."""
        return int(self._c.s[ROUND])

    def standing(self):
        """What a round-limited rollout backs up: the returns at the end. Before
        it, with one player, the money on the table in unclaimed stacks; with
        ``payoff=win``, each player's share of the money the *others* have
        claimed, ``(total - tally) / ((n - 1) * total)`` (1/n each while nobody
        has claimed any): lower tallies score higher and the shares sum to 1,
        like win shares, but without a winner-takes-all jump on a few dollars;
        with ``payoff=score``, the returns if the game ended now."""
        c = self._c
        n, over = c.game.num_seats, c.s[PHASE] == OVER
        if n == 1:
            return [float(c.s[DONATED] if over else _over_under_rules.unclaimed(c.s, c.rules.params))]
        tally = self._tally()
        if c.game.payoff == "win" and not over:
            total = sum(tally)
            if not total:
                return [1.0 / n] * n
            return [(total - t) / ((n - 1) * total) for t in tally]
        if c.game.payoff == "win":
            return _common.win_shares(tally, higher_is_better=False)
        mean = sum(tally) / n
        return [mean - t for t in tally]

    def resample_from_infostate(self, player_id, probability_sampler, internal=False, check=None):
        """A state drawn from ``player_id``'s information state.

        Every card is face up and each chance outcome is a card value, so the
        information state determines the history: the only consistent state
        is this one. The deck order, the only hidden thing, is not part of a
        state (it is drawn at the chance nodes still to come), so a copy is an
        exact sample; ``probability_sampler`` is not needed.

        With ``internal`` (kibitz's own searches only) the copy is a new
        state holding a copy of this one's position and log but no pyspiel
        history (cheaper than ``clone()``, which copies it); ``check``
        changes nothing (no move is replayed).
        """
        if not internal:
            return self.clone()
        world = self._c.game.new_initial_state()
        world.restore(self.snapshot())
        return world

    # ---------------------------------------------------------- read-only API
    def _tally(self) -> list:
        return self._c.s[FIRST_TALLY:FIRST_TALLY + self._c.game.num_seats].tolist()

    @property
    def rules(self):
        """The game's compiled rules, with its sizes by name (:class:`OverUnderRules`)."""
        return self._c.rules

    @property
    def deck_size(self):
        """Cards still in the deck (the sum of ``deck_counts``)."""
        return int(self._c.s[REM])

    @property
    def tally(self):
        """Each player's money claimed so far, all rounds."""
        return tuple(self._tally())

    @property
    def round(self):
        return int(self._c.s[ROUND])

    @property
    def dealer(self):
        return (int(self._c.s[ROUND]) - 2) % self._c.game.num_seats

    @property
    def phase(self):
        return PHASE_NAMES[self._c.s[PHASE]]

    def stacks(self):
        """Per stack: (top card kind or -1, money in it, claimer or -1)."""
        return tuple(self._c.game.layout.stacks_of(self._c.s.tolist()))

    def on_table(self):
        """Stacks dealt and not claimed, ascending."""
        return tuple(s for s, (top, _, owner) in enumerate(self.stacks()) if top >= 0 and owner < 0)

    def top_value(self, s):
        """The value a prediction on stack ``s`` compares with."""
        c = self._c
        return c.game.values[int(c.s[c.game.layout.top + s])]

    def prediction_odds(self, s):
        """``(safe_over, cost_over, safe_under, cost_under)`` of the next flip
        for a prediction on stack ``s`` (on the table, the deck not empty):
        the compiled rules' ``odds``, whose docstring tells what they are."""
        c = self._c
        return _over_under_rules.odds(c.s, c.rules.params, s)

    @property
    def deck_counts(self):
        """Cards of each kind still in the deck (chance outcome order)."""
        lay = self._c.game.layout
        return tuple(self._c.s[lay.counts:lay.counts + lay.kinds].tolist())

    @property
    def pending_stack(self):
        """The stack named by the prediction being resolved (-1 if none)."""
        s = self._c.s
        return int(s[PSTACK]) if s[PHASE] in (FLIP, GIVE) else -1

    @property
    def donated(self):
        """Solo version: money left on the table at the end (-1 before)."""
        return int(self._c.s[DONATED])

    def log(self):
        """The game's events, in order: the named tuples of ``_over_under_strings``."""
        return tuple(self._c.log())

    def compact_tensor(self, player):
        """``player``'s ``compact`` encoding (the compiled ``compact``): a
        float32 array of ``compact_tensor_size()`` floats."""
        c = self._c
        n = c.game.num_seats
        if not 0 <= player < n:
            raise ValueError(f"player {player} is not a seat of this game (0..{n - 1})")
        out = np.empty(c.game.compact_tensor_size(), dtype=np.float32)
        c.rules.compact(c.s, c.rules.params, player, out)
        return out

    def card_name(self, k):
        return self._c.game.card_names[k]


OverUnderGame.state_class = OverUnderState
OverUnderGame.observer_class = OverUnderObserver
_common.register(SPEC, _GAME_TYPE, OverUnderGame)
