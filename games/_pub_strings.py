"""Pub's events, strings and observer, rendered from positions.

The rules are the compiled functions of ``_pub_rules`` (the position's
layout is in its docstring); nothing here changes a position. After each
move :func:`record` appends the move's events to the state's log, read from
the position before the move and the one after. The strings are the log's
lines (information state) or the position's fields (observation,
``str(state)``); a hand, a collection and the cards set aside are listed in
the order their cards came (the position's cards placed: :func:`hands_of`,
:func:`collections_of`, :func:`removed_of`).

Events. ``PubState.log()`` is the game's events in order, each a named
tuple whose first field ``kind`` names it, with these fields after it:
``Removed(card)``, ``Deal(player, card)``, ``Reveal(player, card)``,
``Take(player, card)``, ``Draw(player)``, ``Drawn(player, card)``,
``Keep(player, drawn, face_up)``, ``Both(player, face_up, drawn, forced)``,
``End(how, face_up)``, ``Hands(hands)``, ``Scores(scores)``; ``player`` is
the seat whose turn it is. The information-state string is their lines
(:func:`event_text`; the line formats are in the rules page).
"""

from __future__ import annotations

from collections import namedtuple

import pyspiel

from kibitz.games import adapter
from kibitz.games._pub_rules import (CHOOSE, DRAWN, DRAWN_CARD, FACE, FIRST_SEAT, KEEP_DRAWN, LEFT, MOVER, OVER,
                                     PHASE, PLACED, REVEAL, SEAT_SHIFT, SETUP, TAKE, TURN)

ACTION_NAMES = ("take", "draw", "keep drawn", "take both")
SUIT_LETTERS = "SHDC"
RANK_NAMES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
PHASE_NAMES = ("setup", "reveal", "turn", "drawn", "choose", "over")

# Ways the game ends (the ``end`` event).
END_FACE_DISCARDED, END_LAST_UNSEEN, END_CLEAN = range(3)

# Event kinds of the information-state tensor (see PubObserver).
EVENT_KINDS = ("reveal", "take", "draw", "drawn", "keep", "both")

# The events, in the order of the module docstring: a named tuple each,
# whose first field ``kind`` names it (the name in quotes after it). Built
# with ``_new(Kind, (kind, field, ...))``, the tuple constructor that
# namedtuple's own ``__new__`` ends in, at half its cost (one or more a move).
_new = tuple.__new__
Removed = namedtuple("Removed", "kind card")  # "removed": set aside face down, seen by nobody (no line)
Deal = namedtuple("Deal", "kind player card")  # "deal": ``you are dealt QH``
Reveal = namedtuple("Reveal", "kind player card")  # "reveal": ``face up QH``
Take = namedtuple("Take", "kind player card")  # "take": ``pS takes QH``
Draw = namedtuple("Draw", "kind player")  # "draw": ``pS draws``
Drawn = namedtuple("Drawn", "kind player card")  # "drawn": ``pS drew QH``
Keep = namedtuple("Keep", "kind player drawn face_up")  # "keep": ``pS keeps drawn QH, 8H stays face up``
Both = namedtuple("Both", "kind player face_up drawn forced")  # "both": ``pS takes both 8H 3S`` (forced: must take)
# "end": the deck is empty; ``how`` is END_FACE_DISCARDED (``face_up`` the card
# discarded), END_LAST_UNSEEN or END_CLEAN (``face_up`` -1)
End = namedtuple("End", "kind how face_up")
Hands = namedtuple("Hands", "kind hands")  # "hands": ``pS shows QH 3C``, every seat's hand at the end
Scores = namedtuple("Scores", "kind scores")  # "scores": ``scores 12 0 31 7``, the final scores of p0, p1, ...


#: a collected card's entry (``_pub_rules``) masked to its card
_CARD = (1 << SEAT_SHIFT) - 1


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


# ------------------------------------------------------------ the cards by place
def removed_of(p: list, game) -> tuple:
    """The cards set aside at position ``p`` (a list), in the order set aside."""
    at = game.placed_at
    return tuple(p[at:at + min(p[PLACED], game.num_removed)])


def hands_of(p: list, game) -> tuple:
    """Every seat's hand at position ``p`` (a list), each in the order dealt."""
    n, removed, h = game.num_seats, game.num_removed, game.hand_size
    at = game.placed_at + removed
    dealt = p[at:at + min(p[PLACED] - removed, n * h)]
    return tuple([tuple(dealt[i:i + h]) for i in range(0, n * h, h)])


def collections_of(p: list, game) -> tuple:
    """Every seat's collection at position ``p`` (a list), each in the order taken."""
    at = game.placed_at
    colls = [[] for _ in range(game.num_seats)]
    for entry in p[at + game.setup_length:at + p[PLACED]]:
        colls[entry >> SEAT_SHIFT].append(entry & _CARD)
    return tuple([tuple(cards) for cards in colls])


def scores_at(p: list, game) -> tuple:
    """The scores the cards held at position ``p`` would make (hand and
    collection together: the position's counts and rank sums per suit)."""
    n, suits = game.num_seats, game.num_suits
    scores = [0] * n
    for u in range(suits):
        counts = p[FIRST_SEAT + u:FIRST_SEAT + n * suits:suits]
        top = max(counts)
        for seat in range(n):
            if counts[seat] != top or top == 0:
                scores[seat] += p[FIRST_SEAT + (n + seat) * suits + u]
    return tuple(scores)


def deck_count(p: list) -> int:
    """Cards in the deck: 0 at the end, also when the last card was
    discarded unseen (it stays in the position's deck)."""
    return 0 if p[PHASE] == OVER else p[LEFT]


# ------------------------------------------------------------ the record
def record(log: list, b: list, action: int, after: list, game) -> None:
    """Appends to ``log`` the events of ``action``, played from position
    ``b`` to position ``after`` (lists) in ``game``."""
    phase, seat = b[PHASE], b[MOVER]
    if phase == SETUP:
        pos = b[PLACED]
        if pos < game.num_removed:
            log.append(_new(Removed, ("removed", action)))
        else:
            log.append(_new(Deal, ("deal", (pos - game.num_removed) // game.hand_size, action)))
        return
    if phase == REVEAL:
        log.append(_new(Reveal, ("reveal", seat, action)))
        return
    if phase == TURN:
        if action == TAKE:
            log.append(_new(Take, ("take", seat, b[FACE])))
        else:
            log.append(_new(Draw, ("draw", seat)))
            return
    elif phase == DRAWN:
        log.append(_new(Drawn, ("drawn", seat, action)))
        if after[PHASE] == CHOOSE:
            return
        log.append(_new(Both, ("both", seat, b[FACE], action, True)))
    elif action == KEEP_DRAWN:  # the choice
        log.append(_new(Keep, ("keep", seat, b[DRAWN_CARD], b[FACE])))
    else:
        log.append(_new(Both, ("both", seat, b[FACE], b[DRAWN_CARD], False)))
    if after[PHASE] == OVER:
        _end(log, after, game)


def _end(log: list, p: list, game) -> None:
    """The events of the end: how it ended, the hands shown, the scores."""
    if p[LEFT] == 0:
        how = END_FACE_DISCARDED if p[FACE] >= 0 else END_CLEAN
    else:
        how = END_LAST_UNSEEN
    log.append(_new(End, ("end", how, p[FACE])))
    log.append(_new(Hands, ("hands", hands_of(p, game))))
    log.append(_new(Scores, ("scores", scores_at(p, game))))


# ------------------------------------------------------------ the strings
def action_name(player: int, action: int, names) -> str:
    """``_action_to_string``: ``card QH`` for chance, else the move's name."""
    if player == pyspiel.PlayerId.CHANCE:
        return f"card {names[action]}" if 0 <= action < len(names) else f"no card {action}"
    return ACTION_NAMES[action] if 0 <= action < 4 else f"no move {action}"


#: why a move is illegal in each phase (the legal ones follow it in the message)
_WHY = {SETUP: "that card is not in the deck", REVEAL: "that card is not in the deck",
        DRAWN: "that card is not in the deck", TURN: "a turn begins",
        CHOOSE: "after drawing a lower card of another suit", OVER: "the game is over"}


def why_illegal(s) -> str:
    return _WHY[int(s[PHASE])]


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


def _cards(seq, names) -> str:
    return " ".join(names[x] for x in seq) or "-"


def state_string(p: list, game, returns) -> str:
    """``str(state)``: whose turn, the deck, the face-up and drawn cards,
    the cards set aside, every hand and collection, and at the end the
    scores and returns."""
    names, phase = game.card_names, p[PHASE]
    if phase == SETUP:
        head = f"set-up ({p[PLACED]} of {game.setup_length} cards dealt)"
    elif phase == OVER:
        head = "game over"
    else:
        head = f"p{p[MOVER]} to move"
    face, drawn = p[FACE], p[DRAWN_CARD]
    lines = [f"{head}, deck {deck_count(p)}, face up {names[face] if face >= 0 else '-'}"
             + (f", drawn {names[drawn]}" if drawn >= 0 else "")]
    hands, colls = hands_of(p, game), collections_of(p, game)
    lines.append(f"set aside: {_cards(removed_of(p, game), names)}")
    scores = scores_at(p, game) if phase == OVER else None
    for s in range(game.num_seats):
        line = f"p{s}: hand {_cards(hands[s], names)} | collection {_cards(colls[s], names)}"
        if scores is not None:
            line += f" | score {scores[s]}"
        lines.append(line)
    if phase == OVER:
        lines.append("returns " + " ".join(f"{r:g}" for r in returns))
    return "\n".join(lines)


def observation_string(p: list, game, player: int, private: bool, to_move: int) -> str:
    """The table as ``player`` sees it now (not perfect recall): one line
    of `` | ``-separated fields (the rules page)."""
    names, n = game.card_names, game.num_seats
    hands = hands_of(p, game)

    def by_seat(cards):
        return " ".join(f"p{s}:{_cards(cards[s], names).replace(' ', ',')}" for s in range(n))

    bits = [f"p{player}"]
    if private:
        bits.append(f"hand {_cards(hands[player], names)}")
    bits.append(f"face up {names[p[FACE]] if p[FACE] >= 0 else '-'}")
    if p[DRAWN_CARD] >= 0:
        bits.append(f"drawn {names[p[DRAWN_CARD]]}")
    bits.append(f"deck {deck_count(p)}")
    bits.append("collections " + by_seat(collections_of(p, game)))
    if p[PHASE] == OVER:
        bits.append("hands " + by_seat(hands))
        bits.append("scores " + " ".join(map(str, scores_at(p, game))))
    else:
        bits.append(f"to move p{to_move}" if to_move >= 0 else "to move chance")
    return " | ".join(bits)


class PubObserver(adapter.Observer):
    """Observation and information-state encodings for pub.

    The tensor layouts are the index tables in the module docstring of
    ``kibitz.games.pub`` (games/pub.py); every piece is a named view
    (``self.dict``) into the one flat ``self.tensor``. The perfect-recall
    tensor is written from the log, the observation tensor by the compiled
    ``observation``. The information-state string is one line per event,
    first line ``p{player}``; the observation string is one line of
    `` | ``-separated fields (both formats are in ``docs/rules/pub.md``).
    """

    PRIVATE = ("own_hand",)

    def __init__(self, iig_obs_type, game, params):
        super().__init__(iig_obs_type, params)
        n, N = game.num_seats, game.num_cards
        self.n, self.N, self.game = n, N, game
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

    def _set_history(self, state, player):
        d = self.dict
        if self.private:
            for x in hands_of(state._c.s.tolist(), self.game)[player]:
                d["own_hand"][x] = 1
        events = d["events"]
        k0 = len(EVENT_KINDS)
        card0 = k0 + self.n
        i = 0
        for e in state._c.log():
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

    def string_from(self, state, player):
        c = state._c
        if self.perfect_recall:
            me = player if self.private else -1
            parts = [f"p{player}"]
            for e in c.log():
                t = event_text(e, me, self.names)
                if t is not None:
                    parts.append(t)
            return "\n".join(parts)
        return observation_string(c.s.tolist(), self.game, player, self.private, state.current_player())
