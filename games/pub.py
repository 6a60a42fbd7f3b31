"""A Little Pub Card Game ("pub"): take the face-up card or risk a draw.

Implements the rules page ``docs/rules/pub.md``, which states the rules
and our own rulings (marked there) in our own words. The rules themselves
are written once, as compiled functions on an array position
(``_pub_rules``); this module declares the parameters and the game, and
plays those functions through the generic pyspiel adapter
(``kibitz.games.adapter``); the events, strings and observer are in
``_pub_strings`` (re-exported here). docs/adding-a-game.md tells how.

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
formats are listed in the rules page). Tensors (:class:`PubObserver`, in
``_pub_strings``), with n players, N = suits*ranks cards and L = 3*D - 2
event slots (the most moves after the deal); information state (perfect
recall, from the log)::

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

Observation (current view only; the compiled ``_pub_rules.observation``)::

    observer n | to_move n+1 (last: chance / nobody) | own_hand N |
    face_up N | drawn N | collections n*N | deck 1 | shown n*N | phase 6

For learning the game also offers the ``compact`` encoding
(``PubState.compact_tensor(player)``, the compiled ``_pub_rules.compact``:
185 floats at the defaults): per suit the player's cards and ranks, every
other collection's count in the player's turn order, the unseen cards, and
the suit majority chance and score of :class:`ScoreEstimate` (what the
heuristic plays by); the face-up and drawn cards; the heuristic's take,
draw, keep and take-both costs; per seat its collection's size and score.
It depends only on what the player has seen; its index table is the rules
page's section "Compact encoding" and :func:`compact_pieces`.

Events. ``PubState.log()`` is the game's events in order, named tuples
(``Removed``, ``Deal``, ``Reveal``, ``Take``, ``Draw``, ``Drawn``, ``Keep``,
``Both``, ``End``, ``Hands``, ``Scores``: their fields in ``_pub_strings``);
the information-state string is their lines (``event_text``).
"""

from __future__ import annotations

import numpy as np
import pyspiel

from kibitz.games import _common, _pub_rules, _pub_strings, adapter, search
from kibitz.games._common import Param
from kibitz.games._pub_rules import (CHOOSE, DECK, DRAW, DRAWN, DRAWN_CARD, FACE, KEEP_DRAWN, OVER, PHASE,
                                     REVEAL, SETUP, TAKE, TAKE_BOTH, TURN)
from kibitz.games._pub_strings import (ACTION_NAMES, END_CLEAN, END_FACE_DISCARDED, END_LAST_UNSEEN,
                                       EVENT_KINDS, PHASE_NAMES, RANK_NAMES, SUIT_LETTERS, Both, Deal, Draw,
                                       Drawn, End, Hands, Keep, PubObserver, Removed, Reveal, Scores, Take,
                                       card_name, event_text, scores_of)

__all__ = ["ACTION_NAMES", "Both", "CHOOSE", "DRAW", "DRAWN", "Deal", "Draw", "Drawn", "END_CLEAN",
           "END_FACE_DISCARDED", "END_LAST_UNSEEN", "EVENT_KINDS", "End", "Hands", "KEEP_DRAWN", "Keep",
           "MAJORITY_CHANCE", "OVER", "PARAMS", "PHASE_NAMES", "PubGame", "PubObserver", "PubState",
           "RANK_NAMES", "REVEAL", "Removed", "Reveal", "SETUP", "SHORT_NAME", "SPEC", "SUIT_LETTERS", "Scores",
           "ScoreEstimate", "TAKE", "TAKE_BOTH", "TURN", "Take", "card_name", "compact_pieces", "event_text",
           "hand_by_players", "majority_chance", "scores_of"]

SHORT_NAME = "pub"
LONG_NAME = "A Little Pub Card Game"


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
    search=frozenset({search.DIRECT, search.SNAPSHOT, search.ROUNDS, search.VIEWS, search.RESAMPLE_MEMO,
                      search.COMPILED}),
    encodings=("compact",),
)

_GAME_TYPE = _common.game_type(SHORT_NAME, LONG_NAME, PARAMS, min_players=3, max_players=8)


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




def compact_pieces(n: int, suits: int, ranks: int) -> list:
    """``[(piece, size, shape)]`` of the ``compact`` encoding, in order (the
    compiled ``_pub_rules.compact`` writes it; the rules page's section
    "Compact encoding" is the index table). With n players, S suits, R
    ranks, N = S*R cards, D = the deck after the deal, T = R(R+1)/2 the
    ranks of a suit, M = S*T::

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
    N = suits * ranks
    return [("phase", len(PHASE_NAMES), (len(PHASE_NAMES),)), ("deck", 3, (3,)),
            ("suits", suits * (n + 7), (suits, n + 7)), ("face_up", suits + 1 + N, (suits + 1 + N,)),
            ("drawn", suits + 1 + N, (suits + 1 + N,)), ("costs", 6, (6,)), ("seats", n * 3, (n, 3))]


class PubGame(adapter.Game):
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
        self.compact_layout = compact_pieces(n, suits, ranks)
        self.placed_at = _pub_rules.placed_at(n, suits)  # the cards placed, in the position
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

    def compiled_rules(self):
        """The rules (``search.COMPILED``: games/_pub_rules.py)."""
        return _pub_rules.compiled_rules(self)

    def record(self, log, before, action, after):
        _pub_strings.record(log, before, action, after, self)

    # encodings for learning (kibitz.games.encoding)
    def compact_tensor_size(self) -> int:
        """Floats in the ``compact`` encoding (:func:`compact_pieces`)."""
        return sum(size for _, size, _ in self.compact_layout)

    def compact_tensor_layout(self) -> list:
        """``[(piece, size, shape)]`` of the ``compact`` encoding, in order."""
        return list(self.compact_layout)


class PubState(adapter.State):
    """A game of pub on the compiled rules; its log is the game's events."""

    def _why_illegal(self):
        return _pub_strings.why_illegal(self._c.s)

    def _action_to_string(self, player, action):
        return _pub_strings.action_name(player, action, self._c.game.card_names)

    def __str__(self):
        c = self._c
        return _pub_strings.state_string(c.s.tolist(), c.game, self.returns())

    # ----------------------------------- search contract (kibitz.games.search)
    def round_number(self):
        """Pub is one deal: always 1 (IS-MCTS ``rollout_rounds`` never stops it)."""
        return 1

    def _event_text(self, event, player):
        return _pub_strings.event_text(event, player, self._c.game.card_names)

    def standing(self):
        """What a move-limited IS-MCTS rollout backs up: the returns at the end;
        before it, the scores the cards held now would make (collections and
        hands; the search's own worlds know every hand). With ``payoff=win``
        each player's share of the points the *others* would score,
        ``(total - score) / ((n - 1) * total)`` (1/n each at no points), which
        sums to 1 like win shares; with ``payoff=score``, mean minus own."""
        c = self._c
        if c.kind == adapter.TERMINAL:
            return self.returns()
        g = c.game
        n = g.num_seats
        scores = _pub_strings.scores_at(c.s.tolist(), g)
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
        return PHASE_NAMES[self._c.s[PHASE]]

    @property
    def face_up(self):
        """The face-up card's id, or -1."""
        return int(self._c.s[FACE])

    @property
    def drawn_card(self):
        """The card just drawn while its player chooses, or -1."""
        return int(self._c.s[DRAWN_CARD])

    @property
    def deck_size(self):
        """Cards left in the deck (after the set-up: the draw pile); 0 at the
        end, also when the last card was discarded unseen."""
        return _pub_strings.deck_count(self._c.s.tolist())

    @property
    def hands(self):
        """Every hand (private: an agent reads only its own), each in the order dealt."""
        c = self._c
        return self._derived("hands", lambda: _pub_strings.hands_of(c.s.tolist(), c.game))

    @property
    def collections(self):
        """Every collection, each in the order its cards were taken."""
        c = self._c
        return self._derived("collections", lambda: _pub_strings.collections_of(c.s.tolist(), c.game))

    @property
    def removed_cards(self):
        c = self._c
        return _pub_strings.removed_of(c.s.tolist(), c.game)

    @property
    def scores(self):
        """Final scores (lower is better), or None before the end."""
        c = self._c
        return _pub_strings.scores_at(c.s.tolist(), c.game) if c.kind == adapter.TERMINAL else None

    def log(self):
        """The game's events, in order: the named tuples of ``_pub_strings``."""
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
    def resample_from_infostate(self, player_id, probability_sampler, internal=False, check=None, memo=None):
        """A state drawn from ``player_id``'s information state.

        Hidden are the removed cards and the other players' hands (until the
        end, when hands are shown). They are redrawn uniformly, without
        replacement, from the cards ``player_id`` has not seen, and the
        actions are replayed. Every consistent history has the same chance
        probability, so this is exact with respect to chance (opponents'
        strategies are not modelled).

        With ``internal=True`` (kibitz's own searches only) the actions are
        replayed through ``_apply_action`` directly, so the returned state's
        pyspiel history is not kept; use it only inside a search.
        ``check(state, player, action)`` is called before each other
        player's move of the replay and may raise to abandon it
        (``_common.replay_applier``).

        ``memo`` (internal only, capability ``RESAMPLE_MEMO``): one
        search's dict, which keeps what every draw from this information
        state shares (the history, the hidden places, the unseen cards).
        """
        key = ("pub", player_id, self._c.s.tobytes())
        shared = memo.get(key) if internal and memo is not None else None
        if shared is None:
            shared = self._unseen(player_id)
            if internal and memo is not None:
                memo[key] = shared
        moves, hidden, unseen = shared
        moves, pool = list(moves), list(unseen)
        for i in hidden:
            j = min(int(probability_sampler() * len(pool)), len(pool) - 1)
            moves[i] = pool.pop(j)
        state = self._c.game.new_initial_state()
        _common.replay(state, moves, internal, player_id, check)
        return state

    def _unseen(self, player_id):
        """``(history, the places in it of the set-up's cards player_id has
        not seen, those cards and the deck's, sorted)``: the removed cards
        and the hidden hands (until the end, when hands are shown), and the
        deck with a last card discarded unseen."""
        c = self._c
        game = c.game
        hist = self.history()
        R, h = game.num_removed, game.hand_size
        terminal = c.kind == adapter.TERMINAL
        hidden = [i for i in range(min(game.setup_length, len(hist)))  # (a state may be in its set-up)
                  if i < R or (not terminal and (i - R) // h != player_id)]
        deck = int(c.s[DECK])
        unseen = sorted([x for x in range(game.num_cards) if deck >> x & 1] + [hist[i] for i in hidden])
        return tuple(hist), tuple(hidden), tuple(unseen)


PubGame.state_class = PubState
PubGame.observer_class = PubObserver
_common.register(SPEC, _GAME_TYPE, PubGame)
