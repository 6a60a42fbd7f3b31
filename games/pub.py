"""A Little Pub Card Game ("pub"): take the face-up card or risk a draw.

Implements the rules page ``docs/rules/pub.md``, which states the rules
and our own rulings (marked there) in our own words.

Set-up (all chance, in this order): ``removed`` cards are set aside face
down, unseen by everyone; each seat from seat 0 is dealt its whole hand of
``hand`` cards (seat 0's cards first, then seat 1's, ...); the top card of
the deck is turned face up. Seat 0 starts; turns go clockwise.

A turn always has a face-up card and at least one card in the deck; when
there is no face-up card, the top card is revealed first (a chance node).
The player either ``take``s the face-up card into their collection (public)
or ``draw``s (a chance node). If the drawn card is of lower rank AND a
different suit than the face-up card the player chooses ``keep drawn``
(only the drawn card goes to the collection; the face-up card stays for the
next player) or ``take both``; otherwise both cards go to the collection
automatically (no decision node; the event is logged as a forced take).

The game ends the moment the deck is empty: after a draw of the last card
(a face-up card left on the table is discarded), or when a reveal would take
the last card (that card is discarded unseen). Hands join collections. For
each suit, every player holding the largest number of that suit (at least
one) turns those cards face down: they score 0. A player's score is the sum
of the remaining ranks; the lowest score wins, ties share.

Rulings that are our own (also in the rules page):

* J, Q, K are worth 11, 12, 13 (A = 1).
* After a qualifying draw the player chooses; taking both is allowed.
* "If there is not a face-up card on the table, draw a new card first": the
  top card is turned face up (a public chance move) and the turn goes on.
* The hand is dealt seat by seat, a whole hand at a time, from seat 0.
* A drawn card that must be taken with the face-up card is taken without a
  decision node (there is nothing to choose).
* ``hand=0`` means the text's hand size by player count (3 for 3-4 players,
  2 for 5-6, 1 for 7-8). The deck must hold ``removed + players*hand + 2``
  cards or more, so that the first turn has a face-up card and a card to
  draw.
* Seat 0 (the "player to the left of the dealer") takes the first turn.
* The end, made exact: the game ends the moment the deck is empty, after a
  draw of the last card (a face-up card left is discarded) or when a reveal
  would take the last card (discarded unseen).
* Payoff ``win``: the lowest scores share 1. ``score``: mean score of all
  players minus own score (zero-sum).

Encoding. Cards: ``card = suit * ranks + rank - 1`` with suits in the order
S H D C (``suit`` 0..suits-1) and ranks A=1 .. ranks; chance outcome ``c``
is card ``c``, named ``card QH``. Player actions: ``0 take``, ``1 draw``,
``2 keep drawn``, ``3 take both``; ``num_distinct_actions = 4``,
``max_chance_outcomes = suits * ranks``; ``max_game_length = removed +
players*hand + 3*D - 2`` with ``D`` the deck left after the deal.

Information state: one event per line, first line ``p{player}`` (the line
formats are listed in the rules page). Tensors, with n players, N =
suits*ranks cards and L = 3*D - 2 event slots (the most moves after the
deal); information state (perfect recall)::

    observer       n          one-hot: whose view this is
    own_hand       N          own dealt cards (private)
    events         L*(6+n+N)  one slot per public event after the deal, in
                              order: kind one-hot (reveal, take, draw,
                              drawn, keep, both), seat one-hot (the player
                              whose turn it is), cards: the revealed /
                              taken / drawn / kept card; both: the two cards
    end            3          how the game ended: face-up card discarded,
                              last card discarded unseen, nothing left
    shown          n*N        every hand, shown at the end

Observation (current view only)::

    observer n | to_move n+1 (last: chance / nobody) | own_hand N |
    face_up N | drawn N | collections n*N | deck 1 | shown n*N | phase 6

For learning the game also offers the ``compact`` encoding
(:class:`CompactEncoder`, ``PubState.compact_tensor(player)``: 185 floats at
the defaults): per suit the player's cards and ranks, every other
collection's count in the player's turn order, the unseen cards, and the
suit majority chance and score of :class:`ScoreEstimate` (what the
heuristic plays by); the face-up and drawn cards; the heuristic's take,
draw, keep and take-both costs; per seat its collection's size and score.
It depends only on what the player has seen; its index table is the rules
page's section "Compact encoding".

Events. ``PubState.log()`` is the game's events in order, each a named tuple
(``typing.NamedTuple``) whose first field ``kind`` names it, with these
fields after it: ``Removed(card)``, ``Deal(player, card)``, ``Reveal(player, card)``,
``Take(player, card)``, ``Draw(player)``, ``Drawn(player, card)``,
``Keep(player, drawn, face_up)``, ``Both(player, face_up, drawn, forced)``,
``End(how, face_up)``, ``Hands(hands)``, ``Scores(scores)``. The information-state string
is their lines (``event_text``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pyspiel

from kibitz.games import _common, search
from kibitz.games._common import Param

SHORT_NAME = "pub"
LONG_NAME = "A Little Pub Card Game"

TAKE, DRAW, KEEP_DRAWN, TAKE_BOTH = 0, 1, 2, 3
ACTION_NAMES = ("take", "draw", "keep drawn", "take both")

SUIT_LETTERS = "SHDC"
RANK_NAMES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")

# Phases.
SETUP, REVEAL, TURN, DRAWN, CHOOSE, OVER = range(6)
PHASE_NAMES = ("setup", "reveal", "turn", "drawn", "choose", "over")

# Ways the game ends (the ``end`` event).
END_FACE_DISCARDED, END_LAST_UNSEEN, END_CLEAN = range(3)

# Event kinds of the information-state tensor (see PubObserver).
EVENT_KINDS = ("reveal", "take", "draw", "drawn", "keep", "both")


# ------------------------------------------------------------------ events
# The game's log (``PubState.log()``): one of these per event, in order.
# Each is a tuple whose first field is its kind; the information-state
# string has one line per event (``event_text``; the lines are in the rules
# page). ``player`` is the seat whose turn it is.
#
# Events are built with ``_new(Kind, (kind, field, ...))``, the tuple
# constructor NamedTuple's own ``__new__`` ends in, at half its cost (the
# rules and a search's replays build one per move).
_new = tuple.__new__


class Removed(NamedTuple):
    """A card set aside face down (seen by nobody, no line)."""
    kind: str  # "removed"
    card: int


class Deal(NamedTuple):
    """``you are dealt QH``: ``card`` dealt to ``player``'s hand."""
    kind: str  # "deal"
    player: int
    card: int


class Reveal(NamedTuple):
    """``face up QH``: the top card turned face up on ``player``'s turn."""
    kind: str  # "reveal"
    player: int
    card: int


class Take(NamedTuple):
    """``pS takes QH``: ``player`` takes the face-up card."""
    kind: str  # "take"
    player: int
    card: int


class Draw(NamedTuple):
    """``pS draws``: ``player`` chooses to draw."""
    kind: str  # "draw"
    player: int


class Drawn(NamedTuple):
    """``pS drew QH``: the card ``player`` drew."""
    kind: str  # "drawn"
    player: int
    card: int


class Keep(NamedTuple):
    """``pS keeps drawn QH, 8H stays face up``."""
    kind: str  # "keep"
    player: int
    drawn: int
    face_up: int


class Both(NamedTuple):
    """``pS takes both 8H 3S`` (``forced``: ``pS must take both ...``)."""
    kind: str  # "both"
    player: int
    face_up: int
    drawn: int
    forced: bool


class End(NamedTuple):
    """The deck is empty: ``how`` is END_FACE_DISCARDED (``face_up`` is
    the card discarded), END_LAST_UNSEEN or END_CLEAN (``face_up`` -1)."""
    kind: str  # "end"
    how: int
    face_up: int


class Hands(NamedTuple):
    """``pS shows QH 3C``: every seat's hand, shown at the end."""
    kind: str  # "hands"
    hands: tuple


class Scores(NamedTuple):
    """``scores 12 0 31 7``: the final scores of p0, p1, ..."""
    kind: str  # "scores"
    scores: tuple


def hand_by_players(players: int) -> int:
    """The text's hand size: 3 for 3-4 players, 2 for 5-6, 1 for 7-8."""
    return 3 if players <= 4 else 2 if players <= 6 else 1


def _max_hand(v):
    return max(0, (v["suits"] * v["ranks"] - v["removed"] - 2) // v["players"])


PARAMS = (
    Param("players", 4, "number of players", "3..8", low=3, high=8),
    Param("suits", 4, "suits in the deck, in the order S H D C", "1..4", low=1, high=4),
    Param("ranks", 13, "ranks per suit, A=1 .. (J=11, Q=12, K=13)",
          "1..13, and suits*ranks >= players+2", low=lambda v: -(-(v["players"] + 2) // v["suits"]),
          high=13),
    Param("removed", 10, "cards set aside face down, unseen by all",
          "0..suits*ranks-players-2", low=0,
          high=lambda v: v["suits"] * v["ranks"] - v["players"] - 2),
    Param("hand", 0, "cards dealt to each hand (0 = by player count: 3, 2 or 1)",
          "0, or 1..(suits*ranks-removed-2)/players",
          low=0, high=_max_hand),
    Param("payoff", "win", "win: lowest scores share 1; score: mean score minus own score",
          "win, score", choices=("win", "score")),
)

SPEC = _common.GameSpec(
    short_name=SHORT_NAME,
    long_name=LONG_NAME,
    summary="Take the face-up card or risk a draw; low cards and suit majorities win.",
    params=PARAMS,
    small="pub(players=3,suits=2,ranks=3,removed=0,hand=1)",
    search=frozenset({search.DIRECT, search.SNAPSHOT, search.ROUNDS, search.COMPILED}),
    encodings=("compact",),
)

_GAME_TYPE = _common.game_type(SHORT_NAME, LONG_NAME, PARAMS, min_players=3, max_players=8)


def card_name(card: int, ranks: int) -> str:
    """``QH`` for card id ``card`` in a deck with ``ranks`` ranks per suit."""
    suit, r = divmod(card, ranks)
    return RANK_NAMES[r] + SUIT_LETTERS[suit]


def scores_of(cards_by_seat, suits: int, ranks: int) -> list[int]:
    """Final scores: suit majorities (ties included) score 0, the rest sum ranks."""
    n = len(cards_by_seat)
    counts = [[0] * suits for _ in range(n)]
    sums = [[0] * suits for _ in range(n)]
    for s, cards in enumerate(cards_by_seat):
        for c in cards:
            suit, r = divmod(c, ranks)
            counts[s][suit] += 1
            sums[s][suit] += r + 1
    scores = [0] * n
    for suit in range(suits):
        top = max(counts[s][suit] for s in range(n))
        for s in range(n):
            if counts[s][suit] != top or top == 0:
                scores[s] += sums[s][suit]
    return scores


# ------------------------------------------------------- score estimate
# What the heuristic (agents/heuristics/pub.py) plays by, and the compact
# encoding shows: an estimate of a seat's final score from what it has seen.

#: Chance of ending with a suit majority, by the lead over the best rival
#: (leads -2, -1, 0, 1, 2; linear in between, flat outside).
MAJORITY_CHANCE = (0.05, 0.3, 0.8, 0.95, 1.0)


def majority_chance(lead: float) -> float:
    """The estimated chance of a suit majority with ``lead`` more cards of
    the suit than the best rival (:data:`MAJORITY_CHANCE`, interpolated)."""
    x = min(max(lead + 2, 0.0), 4.0)
    i = min(int(x), 3)
    return MAJORITY_CHANCE[i] + (x - i) * (MAJORITY_CHANCE[i + 1] - MAJORITY_CHANCE[i])


class ScoreEstimate:
    """What seat ``me`` has seen of ``state`` and its estimate of its final score.

    Seen: its own hand, every collection, the face-up card and a drawn card
    waiting for the choice. Per suit, ``count`` and ``sum`` are the cards
    and ranks ``me`` holds (hand and collection) and ``rival`` the most any
    other seat is expected to hold: its collection plus ``hand / suits`` for
    its hidden hand. The estimate of a suit is its ranks times the chance of
    NOT holding the majority, ``1 - majority_chance(count - rival)``; the
    estimate of the seat is the sum over the suits it holds.
    """

    def __init__(self, state, me):
        game = state.get_game()
        self.suits, self.ranks = game.num_suits, game.num_ranks
        self.num_cards = game.num_cards
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
        # 1 - majority_chance by (suit, count): a draw's cost asks for the
        # same few counts of each suit once per unseen card
        self._miss = {}
        self.base = self.estimate(self.count, self.sum)

    def _miss_chance(self, suit: int, count: int) -> float:
        """The chance of NOT holding the majority of ``suit`` with ``count`` of its cards."""
        key = (suit, count)
        miss = self._miss.get(key)
        if miss is None:
            miss = self._miss[key] = 1.0 - majority_chance(count - self.rival[suit])
        return miss

    def estimate(self, count, sums) -> float:
        """The estimated score of holding ``count[s]`` cards of ranks summing to ``sums[s]`` per suit."""
        return sum(sums[s] * self._miss_chance(s, count[s]) for s in range(self.suits) if count[s])

    def cost(self, cards) -> float:
        """How much adding ``cards`` raises the estimated final score."""
        count, sums = self.count[:], self.sum[:]
        for x in cards:
            count[x // self.ranks] += 1
            sums[x // self.ranks] += x % self.ranks + 1
        return self.estimate(count, sums) - self.base

    def unseen(self) -> list[int]:
        """The cards ``me`` has not seen, ascending."""
        return [x for x in range(self.num_cards) if x not in self.seen]

    def draw_cost(self, face: int) -> float | None:
        """The expected cost of drawing with ``face`` face up, averaged over
        the unseen cards: a lower card of another suit at the cheaper of
        keeping it alone and taking both, any other card with ``face``.
        None when ``me`` has seen every card."""
        unseen = self.unseen()
        if not unseen:
            return None
        ranks = self.ranks
        total = 0.0
        for x in unseen:
            both = self.cost((face, x))
            if x % ranks < face % ranks and x // ranks != face // ranks:
                total += min(both, self.cost((x,)))
            else:
                total += both
        return total / len(unseen)


class PubGame(pyspiel.Game):
    """The pub game with validated parameters; sizes follow the parameters."""

    def __init__(self, params=None):
        p = _common.read_params(SHORT_NAME, PARAMS, params)
        n, suits, ranks = p["players"], p["suits"], p["ranks"]
        hand = p["hand"] or hand_by_players(n)
        deck = suits * ranks
        if p["removed"] + n * hand + 2 > deck:
            raise ValueError(
                f"{SHORT_NAME}: parameter hand={p['hand']} ({hand} cards for {n} players) "
                f"does not fit: the deck of {deck} cards (suits*ranks) minus removed="
                f"{p['removed']} must leave players*hand + 2 cards; allowed: "
                f"hand 1..{_max_hand(p)} here (or fewer removed cards, or a larger deck)")
        self.num_seats = n
        self.num_suits = suits
        self.num_ranks = ranks
        self.num_cards = deck
        self.num_removed = p["removed"]
        self.hand_size = hand
        self.setup_length = p["removed"] + n * hand
        self.deck_after_deal = deck - self.setup_length
        # After the deal each card of the deck costs at most three moves: a
        # drawn card is a draw, the chance draw and a keep/take-both choice;
        # a revealed card is a reveal and a take. The game ends either on a
        # reveal that would take the last card (that card costs nothing) or
        # on a draw, and then the face-up card of that turn was revealed but
        # not taken directly (one move). Hence at most 3 * deck - 2 moves,
        # each logged as one public event.
        self.max_events = 3 * self.deck_after_deal - 2
        self.payoff = p["payoff"]
        self.card_names = tuple(card_name(c, ranks) for c in range(deck))
        self.card_rank = tuple(c % ranks + 1 for c in range(deck))
        self.card_suit = tuple(c // ranks for c in range(deck))
        total = suits * ranks * (ranks + 1) // 2  # every rank in the deck
        if self.payoff == "win":
            utility = pyspiel.GameType.Utility.CONSTANT_SUM
            lo, hi, total_u = 0.0, 1.0, 1.0
        else:
            utility = pyspiel.GameType.Utility.ZERO_SUM
            lo, hi, total_u = -total * (n - 1) / n, total / n, 0.0
        game_type = _common.game_type(SHORT_NAME, LONG_NAME, PARAMS, min_players=3,
                                      max_players=8, utility=utility)
        info = pyspiel.GameInfo(
            num_distinct_actions=4,
            max_chance_outcomes=deck,
            num_players=n,
            min_utility=lo,
            max_utility=hi,
            utility_sum=total_u,
            max_game_length=self.setup_length + self.max_events,
        )
        super().__init__(game_type, info, p)
        self.compact = CompactEncoder(self)

    def new_initial_state(self):
        return PubState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        return PubObserver(iig_obs_type, self, params)

    def compiled_rules(self):
        """The rules compiled for the tree compiler (``search.COMPILED``: games/_pub_rules.py)."""
        from kibitz.games import _pub_rules
        return _pub_rules.compiled_rules(self)

    # encodings for learning (kibitz.games.encoding)
    def compact_tensor_size(self) -> int:
        """Floats in the ``compact`` encoding (:class:`CompactEncoder`)."""
        return self.compact.size

    def compact_tensor_layout(self) -> list:
        """``[(piece, size, shape)]`` of the ``compact`` encoding, in order."""
        return list(self.compact.pieces)


class _Core(_common.SlotsState):
    """All mutable state of a game in one object that copies cheaply
    (``_common.SlotsState``: its lists hold only ints and tuples)."""

    __slots__ = ("phase", "pos", "deck", "removed", "hands", "coll", "face", "drawn",
                 "player", "log", "scores")
    COPIED = ("deck", "hands", "coll", "log")


class PubState(_common.CoreSnapshots, pyspiel.State):
    """A game of pub; rules only (encoding lives in the observer)."""

    def __init__(self, game):
        super().__init__(game)
        n = game.num_seats
        c = _Core()
        c.phase = SETUP
        c.pos = 0  # set-up chance moves done
        c.deck = list(range(game.num_cards))  # cards not yet seen on the table, ascending
        c.removed = ()
        c.hands = [()] * n
        c.coll = [()] * n
        c.face = -1
        c.drawn = -1
        c.player = 0
        c.log = []
        c.scores = None
        self._c = c
        self._n = n
        self._ranks = game.num_ranks
        self._suits = game.num_suits
        self._removed = game.num_removed
        self._hand = game.hand_size
        self._setup = game.setup_length

    # ---------------------------------------------------------------- rules
    def current_player(self):
        ph = self._c.phase
        if ph == TURN or ph == CHOOSE:
            return self._c.player
        if ph == OVER:
            return pyspiel.PlayerId.TERMINAL
        return pyspiel.PlayerId.CHANCE

    def _legal_actions(self, player):
        ph = self._c.phase
        if ph == TURN:
            return [TAKE, DRAW]
        if ph == CHOOSE:
            return [KEEP_DRAWN, TAKE_BOTH]
        return []

    def chance_outcomes(self):
        deck = self._c.deck
        if self._c.phase in (TURN, CHOOSE, OVER):
            return []
        p = 1.0 / len(deck)
        return [(card, p) for card in deck]

    def _apply_action(self, action):
        c = self._c
        ph = c.phase
        if ph == SETUP or ph == REVEAL or ph == DRAWN:
            if action not in c.deck:
                raise _common.illegal(self, action, list(c.deck), "that card is not in the deck")
            c.deck.remove(action)
            if ph == SETUP:
                self._setup_card(action)
            elif ph == REVEAL:
                c.face = action
                c.log.append(_new(Reveal, ("reveal", c.player, action)))
                c.phase = TURN
            else:
                self._drawn(action)
            return
        if ph == TURN:
            if action == TAKE:
                seat = c.player
                c.coll[seat] = c.coll[seat] + (c.face,)
                c.log.append(_new(Take, ("take", seat, c.face)))
                c.face = -1
                self._next_turn()
            elif action == DRAW:
                c.log.append(_new(Draw, ("draw", c.player)))
                c.phase = DRAWN
            else:
                raise _common.illegal(self, action, [TAKE, DRAW], "a turn begins")
            return
        if ph == CHOOSE:
            seat = c.player
            if action == KEEP_DRAWN:
                c.coll[seat] = c.coll[seat] + (c.drawn,)
                c.log.append(_new(Keep, ("keep", seat, c.drawn, c.face)))
                c.drawn = -1
                self._next_turn()
            elif action == TAKE_BOTH:
                self._take_both(False)
            else:
                raise _common.illegal(self, action, [KEEP_DRAWN, TAKE_BOTH],
                                      "after drawing a lower card of another suit")
            return
        raise _common.illegal(self, action, [], "the game is over")

    def _setup_card(self, card):
        c = self._c
        pos = c.pos
        if pos < self._removed:
            c.removed = c.removed + (card,)
            c.log.append(_new(Removed, ("removed", card)))
        else:
            seat = (pos - self._removed) // self._hand
            c.hands[seat] = c.hands[seat] + (card,)
            c.log.append(_new(Deal, ("deal", seat, card)))
        pos += 1
        c.pos = pos
        if pos == self._setup:
            c.phase = REVEAL

    def _drawn(self, card):
        c = self._c
        seat = c.player
        c.drawn = card
        c.log.append(_new(Drawn, ("drawn", seat, card)))
        r = self._ranks
        face = c.face
        if card % r < face % r and card // r != face // r:
            c.phase = CHOOSE
        else:
            self._take_both(True)

    def _take_both(self, forced):
        c = self._c
        seat = c.player
        c.coll[seat] = c.coll[seat] + (c.face, c.drawn)
        c.log.append(_new(Both, ("both", seat, c.face, c.drawn, forced)))
        c.face = -1
        c.drawn = -1
        self._next_turn()

    def _next_turn(self):
        """Ends a turn: the next player's turn, a reveal, or the end."""
        c = self._c
        left = len(c.deck)
        if left == 0:
            self._end(END_FACE_DISCARDED if c.face >= 0 else END_CLEAN)
            return
        if c.face < 0 and left == 1:
            self._end(END_LAST_UNSEEN)
            return
        c.player = (c.player + 1) % self._n
        c.phase = TURN if c.face >= 0 else REVEAL

    def _end(self, how):
        c = self._c
        c.log.append(_new(End, ("end", how, c.face)))
        c.log.append(_new(Hands, ("hands", tuple(c.hands))))
        c.scores = tuple(scores_of([c.coll[s] + c.hands[s] for s in range(self._n)],
                                   self._suits, self._ranks))
        c.log.append(_new(Scores, ("scores", c.scores)))
        c.phase = OVER

    def is_terminal(self):
        return self._c.phase == OVER

    def returns(self):
        c = self._c
        if c.phase != OVER:
            return [0.0] * self._n
        if self.get_game().payoff == "win":
            return _common.win_shares(c.scores, higher_is_better=False)
        mean = sum(c.scores) / self._n
        return [mean - x for x in c.scores]

    # ----------------------------------- search contract (kibitz.games.search)
    def round_number(self):
        """Pub is one deal: always 1 (IS-MCTS ``rollout_rounds`` never stops it)."""
        return 1

    def standing(self):
        """What a move-limited IS-MCTS rollout backs up: the returns at the end;
        before it, the scores the cards held now would make (collections and
        hands; the search's own worlds know every hand). With ``payoff=win``
        each player's share of the points the *others* would score,
        ``(total - score) / ((n - 1) * total)`` (1/n each at no points), which
        sums to 1 like win shares; with ``payoff=score``, mean minus own."""
        c, n = self._c, self._n
        if c.phase == OVER:
            return self.returns()
        g = self.get_game()
        scores = scores_of([c.coll[s] + c.hands[s] for s in range(n)], g.num_suits, g.num_ranks)
        if g.payoff == "win":
            total = sum(scores)
            if not total:
                return [1.0 / n] * n
            return [(total - x) / ((n - 1) * total) for x in scores]
        mean = sum(scores) / n
        return [mean - x for x in scores]

    # ---------------------------------------------------------- read-only API
    @property
    def phase(self):
        return PHASE_NAMES[self._c.phase]

    @property
    def face_up(self):
        """The face-up card's id, or -1."""
        return self._c.face

    @property
    def drawn_card(self):
        """The card just drawn while its player chooses, or -1."""
        return self._c.drawn

    @property
    def deck_size(self):
        """Cards left in the deck (after the set-up: the draw pile); 0 at the
        end, also when the last card was discarded unseen."""
        return _deck_count(self._c)

    @property
    def hands(self):
        """Every hand (private: an agent reads only its own)."""
        return tuple(self._c.hands)

    @property
    def collections(self):
        return tuple(self._c.coll)

    @property
    def removed_cards(self):
        return self._c.removed

    @property
    def scores(self):
        """Final scores (lower is better), or None before the end."""
        return self._c.scores

    def log(self):
        """The game's events, in order: the named tuples of the module docstring."""
        return tuple(self._c.log)

    def compact_tensor(self, player):
        """``player``'s ``compact`` encoding (:class:`CompactEncoder`): a
        float32 array of ``compact_tensor_size()`` floats."""
        if not 0 <= player < self._n:
            raise ValueError(f"player {player} is not a seat of this game (0..{self._n - 1})")
        return self.get_game().compact.encode(self, player)

    def _action_to_string(self, player, action):
        if player == pyspiel.PlayerId.CHANCE:
            names = self.get_game().card_names
            return f"card {names[action]}" if 0 <= action < len(names) else f"no card {action}"
        return ACTION_NAMES[action] if 0 <= action < 4 else f"no move {action}"

    def __str__(self):
        c = self._c
        names = self.get_game().card_names

        def cards(seq):
            return " ".join(names[x] for x in seq) or "-"

        if c.phase == SETUP:
            head = f"set-up ({c.pos} of {self._setup} cards dealt)"
        elif c.phase == OVER:
            head = "game over"
        else:
            head = f"p{c.player} to move"
        lines = [f"{head}, deck {_deck_count(c)}, face up {names[c.face] if c.face >= 0 else '-'}"
                 + (f", drawn {names[c.drawn]}" if c.drawn >= 0 else "")]
        lines.append(f"set aside: {cards(c.removed)}")
        for s in range(self._n):
            line = f"p{s}: hand {cards(c.hands[s])} | collection {cards(c.coll[s])}"
            if c.scores is not None:
                line += f" | score {c.scores[s]}"
            lines.append(line)
        if c.phase == OVER:
            lines.append("returns " + " ".join(f"{r:g}" for r in self.returns()))
        return "\n".join(lines)

    # ------------------------------------------------------------ resampling
    def resample_from_infostate(self, player_id, probability_sampler, internal=False, check=None):
        """A state drawn from ``player_id``'s information state.

        Hidden are the removed cards and the other players' hands (until the
        end, when hands are shown). They are redrawn uniformly, without
        replacement, from the cards ``player_id`` has not seen, and the
        actions are replayed. Every consistent history has the same chance
        probability, so this is exact with respect to chance (opponents'
        strategies are not modelled).

        With ``internal=True`` (kibitz's own searches only) the actions are
        replayed through the game's Python rules directly, so the returned
        state's pyspiel history is not kept; use it only inside a search.
        ``check(state, player, action)`` is called before each other
        player's move of the replay and may raise to abandon it
        (``_common.replay_applier``).
        """
        game = self.get_game()
        hist = self.history()
        setup = hist[:self._setup]
        rest = hist[self._setup:]
        R, h = self._removed, self._hand
        terminal = self._c.phase == OVER
        hidden = [i for i in range(len(setup))
                  if i < R or (not terminal and (i - R) // h != player_id)]
        # unseen by player_id: the deck, the removed cards and the hidden hands
        pool = sorted(self._c.deck + [setup[i] for i in hidden])
        new_setup = list(setup)
        for i in hidden:
            j = min(int(probability_sampler() * len(pool)), len(pool) - 1)
            new_setup[i] = pool.pop(j)
        state = game.new_initial_state()
        apply = _common.replay_applier(state, internal, player_id, check)
        for a in new_setup + list(rest):
            apply(a)
        return state


def _deck_count(c) -> int:
    """Cards in the deck. ``c.deck`` holds the cards not yet dealt, turned
    up or drawn; a last card discarded unseen at the end stays in it (a
    resample may put it elsewhere) but is no longer in the deck."""
    return 0 if c.phase == OVER else len(c.deck)


def event_text(e, me: int, names) -> str | None:
    """One log event as ``me`` sees it (None: ``me`` sees nothing of it).

    ``me = -1`` is the public view (no private cards).
    """
    kind = e.kind
    if kind == "removed":
        return None
    if kind == "deal":
        return f"you are dealt {names[e.card]}" if e.player == me else None
    if kind == "reveal":
        return f"face up {names[e.card]}"
    if kind == "take":
        return f"p{e.player} takes {names[e.card]}"
    if kind == "draw":
        return f"p{e.player} draws"
    if kind == "drawn":
        return f"p{e.player} drew {names[e.card]}"
    if kind == "keep":
        return f"p{e.player} keeps drawn {names[e.drawn]}, {names[e.face_up]} stays face up"
    if kind == "both":
        return (f"p{e.player} {'must take' if e.forced else 'takes'} both "
                f"{names[e.face_up]} {names[e.drawn]}")
    if kind == "end":
        if e.how == END_FACE_DISCARDED:
            return f"deck empty: face up {names[e.face_up]} discarded"
        if e.how == END_LAST_UNSEEN:
            return "deck empty: last card discarded unseen"
        return "deck empty"
    if kind == "hands":
        return "\n".join(f"p{s} shows {' '.join(names[x] for x in hand) or '-'}"
                         for s, hand in enumerate(e.hands))
    if kind == "scores":
        return "scores " + " ".join(map(str, e.scores))
    raise ValueError(f"unknown event {e!r}")


class PubObserver(_common.Observer):
    """Observation and information-state encodings for pub.

    The tensor layouts are the index tables in the module docstring; every
    piece is a named view (``self.dict``) into the one flat ``self.tensor``.
    The information-state string is one line per event, first line
    ``p{player}``; the observation string is one line of `` | ``-separated
    fields (both formats are in ``docs/rules/pub.md``).
    """

    def __init__(self, iig_obs_type, game, params):
        super().__init__(iig_obs_type, params)
        n, N = game.num_seats, game.num_cards
        self.n, self.N = n, N
        self.names = game.card_names
        self.slot = len(EVENT_KINDS) + n + N
        self.L = game.max_events
        if self.perfect_recall:
            pieces = [("observer", n, (n,)), ("own_hand", N, (N,)),
                      ("events", self.L * self.slot, (self.L, self.slot)),
                      ("end", 3, (3,)), ("shown", n * N, (n, N))]
        else:
            pieces = [("observer", n, (n,)), ("to_move", n + 1, (n + 1,)),
                      ("own_hand", N, (N,)), ("face_up", N, (N,)), ("drawn", N, (N,)),
                      ("collections", n * N, (n, N)), ("deck", 1, (1,)),
                      ("shown", n * N, (n, N)), ("phase", 6, (6,))]
        self.set_pieces(pieces)

    def set_from(self, state, player):
        super().set_from(state, player)
        if self.private:
            for x in state._c.hands[player]:
                self.dict["own_hand"][x] = 1

    def _set_history(self, state, player):
        d = self.dict
        events = d["events"]
        k0 = len(EVENT_KINDS)
        card0 = k0 + self.n
        i = 0
        for e in state._c.log:
            kind = e.kind
            if kind in ("removed", "deal", "scores"):
                continue
            if kind == "end":
                d["end"][e.how] = 1
                continue
            if kind == "hands":
                for s, hand in enumerate(e.hands):
                    for x in hand:
                        d["shown"][s, x] = 1
                continue
            row = events[i]
            i += 1
            row[EVENT_KINDS.index(kind)] = 1
            row[k0 + e.player] = 1
            if kind == "both":
                row[card0 + e.face_up] = 1
                row[card0 + e.drawn] = 1
            elif kind == "keep":
                row[card0 + e.drawn] = 1
            elif kind != "draw":
                row[card0 + e.card] = 1

    def _set_current(self, state, player):
        c, d, n = state._c, self.dict, self.n
        cur = state.current_player()
        d["to_move"][cur if 0 <= cur < n else n] = 1
        if c.face >= 0:
            d["face_up"][c.face] = 1
        if c.drawn >= 0:
            d["drawn"][c.drawn] = 1
        for s in range(n):
            for x in c.coll[s]:
                d["collections"][s, x] = 1
        d["deck"][0] = _deck_count(c)
        if c.phase == OVER:
            for s in range(n):
                for x in c.hands[s]:
                    d["shown"][s, x] = 1
        d["phase"][c.phase] = 1

    def string_from(self, state, player):
        c = state._c
        names = self.names
        if self.perfect_recall:
            me = player if self.private else -1
            parts = [f"p{player}"]
            for e in c.log:
                t = event_text(e, me, names)
                if t is not None:
                    parts.append(t)
            return "\n".join(parts)

        def cards(seq):
            return " ".join(names[x] for x in seq) or "-"

        bits = [f"p{player}"]
        if self.private:
            bits.append(f"hand {cards(c.hands[player])}")
        bits.append(f"face up {names[c.face] if c.face >= 0 else '-'}")
        if c.drawn >= 0:
            bits.append(f"drawn {names[c.drawn]}")
        bits.append(f"deck {_deck_count(c)}")
        bits.append("collections " + " ".join(f"p{s}:{cards(c.coll[s]).replace(' ', ',')}"
                                              for s in range(self.n)))
        if c.phase == OVER:
            bits.append("hands " + " ".join(f"p{s}:{cards(c.hands[s]).replace(' ', ',')}"
                                            for s in range(self.n)))
            bits.append("scores " + " ".join(map(str, c.scores)))
        else:
            cur = state.current_player()
            bits.append(f"to move p{cur}" if cur >= 0 else "to move chance")
        return " | ".join(bits)


class CompactEncoder:
    """The ``compact`` encoding: a couple of hundred floats for learning,
    the table as one player has seen it, with the numbers the heuristic plays
    by (:class:`ScoreEstimate`). The index table is the section "Compact
    encoding" of docs/rules/pub.md; in short (n players, S suits, R ranks,
    N = S*R cards, D = the deck after the deal, T = R(R+1)/2 the ranks of a
    suit, M = S*T)::

        phase    6            one-hot: setup | reveal | turn | drawn | choose | over
        deck     3            deck left/D (1 in the set-up), removed/N, cards
                              the viewer has not seen/N
        suits    S x (n+7)    per suit: own count/R, own rank sum/T, each other
                              seat's collection count/R (in the viewer's turn
                              order), largest rival collection count/R, lead
                              (own - that)/R, unseen count/R, unseen rank sum/T,
                              estimated majority chance, estimated score/T
        face_up  S+1+N        suit one-hot, rank/R, card one-hot
        drawn    S+1+N        the same for a drawn card waiting for the choice
        costs    6            /R: take, draw (expected), take - draw (on a
                              turn); keep drawn, take both, both - keep (on
                              the choice)
        seats    n x 3        per seat, the viewer first, then the next seats
                              in turn order: collection cards/D, the score its
                              collection (the viewer's: with its hand) would
                              make now/M, its turn

    "Own" cards are the viewer's hand and collection; everything here is
    what the viewer has seen, so two states that differ only in cards it has
    not seen (others' hands, the removed cards, the deck's order) have the
    same tensor.
    """

    DECK_ITEMS = 3
    COST_ITEMS = 6
    SEAT_ITEMS = 3

    def __init__(self, game):
        n, S, R, N = game.num_seats, game.num_suits, game.num_ranks, game.num_cards
        self.n, self.S, self.R, self.N = n, S, R, N
        self.D = game.deck_after_deal
        self.T = R * (R + 1) // 2
        self.M = S * self.T
        self.removed = game.num_removed
        self.suit_items = n + 7
        self.pieces = [("phase", len(PHASE_NAMES), (len(PHASE_NAMES),)),
                       ("deck", self.DECK_ITEMS, (self.DECK_ITEMS,)),
                       ("suits", S * self.suit_items, (S, self.suit_items)),
                       ("face_up", S + 1 + N, (S + 1 + N,)),
                       ("drawn", S + 1 + N, (S + 1 + N,)),
                       ("costs", self.COST_ITEMS, (self.COST_ITEMS,)),
                       ("seats", n * self.SEAT_ITEMS, (n, self.SEAT_ITEMS))]
        self.size = sum(size for _, size, _ in self.pieces)

    def positions(self, me: int) -> list:
        """The seats in the viewer's order: ``me``, then ``me + 1``, ... (mod n)."""
        return [(me + j) % self.n for j in range(self.n)]

    def _card(self, view, card):
        S, R = self.S, self.R
        suit, r = divmod(card, R)
        view[suit] = 1
        view[S] = (r + 1) / R
        view[S + 1 + card] = 1

    def encode(self, state, me: int) -> np.ndarray:
        c = state._c
        n, S, R, T = self.n, self.S, self.R, self.T
        tensor, v = _common.tensor_views(self.pieces)
        v["phase"][c.phase] = 1
        est = ScoreEstimate(state, me)
        unseen = est.unseen()
        v["deck"][:] = (min(_deck_count(c), self.D) / self.D, self.removed / self.N, len(unseen) / self.N)
        order = self.positions(me)
        coll_count = [[0] * S for _ in range(n)]
        for s in range(n):
            for x in c.coll[s]:
                coll_count[s][x // R] += 1
        unseen_count, unseen_sum = [0] * S, [0] * S
        for x in unseen:
            unseen_count[x // R] += 1
            unseen_sum[x // R] += x % R + 1
        suits = v["suits"]
        for suit in range(S):
            others = [coll_count[p][suit] for p in order[1:]]
            best = max(others)
            mine = est.count[suit]
            chance = majority_chance(mine - est.rival[suit])
            suits[suit] = (mine / R, est.sum[suit] / T, *(k / R for k in others), best / R,
                           (mine - best) / R, unseen_count[suit] / R, unseen_sum[suit] / T,
                           chance, est.sum[suit] * (1.0 - chance) / T)
        if c.face >= 0:
            self._card(v["face_up"], c.face)
        if c.drawn >= 0:
            self._card(v["drawn"], c.drawn)
        costs = v["costs"]
        if c.phase == TURN:
            take, draw = est.cost((c.face,)), est.draw_cost(c.face)
            costs[0:3] = (take / R, draw / R, (take - draw) / R)
        elif c.phase == CHOOSE:
            keep, both = est.cost((c.drawn,)), est.cost((c.face, c.drawn))
            costs[3:6] = (keep / R, both / R, (both - keep) / R)
        turn = c.player if c.phase in (TURN, CHOOSE) else -1
        known = [c.coll[p] + (c.hands[p] if p == me else ()) for p in range(n)]
        score = scores_of(known, S, R)
        seats = v["seats"]
        for j, p in enumerate(order):
            seats[j] = (len(c.coll[p]) / self.D, score[p] / self.M, p == turn)
        return tensor


_common.register(SPEC, _GAME_TYPE, PubGame)
