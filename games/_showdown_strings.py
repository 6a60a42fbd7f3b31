"""Showdown's strings and observer, rendered from positions.

The rules are the compiled functions of ``_showdown_rules`` (the position's
layout is in its docstring); nothing here changes a position. The position
holds the whole history (the cards dealt and the players' moves in order),
so there is no log: every string is read from the position.

Action names depend on the betting: a player's ``0`` is ``check`` while
nobody has bet and ``fold`` after a bet; ``1`` is ``bet``, then ``call``.
A chance outcome ``c`` is ``card {c + 1}`` (cards are valued 1..cards).
"""

from __future__ import annotations

import pyspiel

from kibitz.games import adapter
from kibitz.games._showdown_rules import (BET, BETTING, BETTOR, DEAL, DEALT, FIRST_SEAT, MOVER, MOVES, OVER,
                                          PASS, PHASE, folded_at, moves_at, paid_at)

#: a player's move names: before a bet (``PASS``, ``BET``) and after one
OPENING_NAMES = ("check", "bet")
ANSWER_NAMES = ("fold", "call")


def cards_of(p: list, n: int) -> list[int]:
    """Every seat's card value (1..cards), 0 for a card not dealt yet."""
    return [c + 1 for c in p[FIRST_SEAT:FIRST_SEAT + n]]


def paid_of(p: list, n: int) -> list[int]:
    """The chips each seat has put in (ante, bet or call)."""
    return p[paid_at(n):paid_at(n) + n]


def folded_of(p: list, n: int) -> list[bool]:
    return [bool(x) for x in p[folded_at(n):folded_at(n) + n]]


def moves_of(p: list, n: int) -> list[tuple[int, int, str]]:
    """The players' moves so far: ``(seat, action, name)`` in order."""
    out, seat, bet = [], 0, False
    for a in p[moves_at(n):moves_at(n) + p[MOVES]]:
        out.append((seat, a, (ANSWER_NAMES if bet else OPENING_NAMES)[a]))
        bet = bet or a == BET
        seat = (seat + 1) % n
    return out


def shown_of(p: list, n: int) -> list[tuple[int, int]]:
    """The cards shown at the showdown, ``(seat, value)``: those of the
    seats that did not fold, at the end, when two or more did not; else []."""
    if p[PHASE] != OVER:
        return []
    cards, folded = cards_of(p, n), folded_of(p, n)
    left = [(s, cards[s]) for s in range(n) if not folded[s]]
    return left if len(left) > 1 else []


# ------------------------------------------------------------ the strings
def action_name(p: list, player: int, action: int) -> str:
    """``_action_to_string`` at position ``p``: ``card 3`` for chance; a
    player's ``check``/``bet`` while nobody has bet, ``fold``/``call`` after."""
    if player == pyspiel.PlayerId.CHANCE:
        return f"card {action + 1}"
    if action not in (PASS, BET):
        return f"no move {action}"
    return (ANSWER_NAMES if p[BETTOR] >= 0 else OPENING_NAMES)[action]


def why_illegal(p: list) -> str:
    if p[PHASE] == DEAL:
        return "that card has been dealt"
    if p[PHASE] == OVER:
        return "the game is over"
    return "a player either passes (0: check or fold) or bets (1: bet or call)"


def _showdown_text(shown) -> str:
    return "showdown " + ", ".join(f"p{s} {v}" for s, v in shown)


def state_string(p: list, n: int, returns) -> str:
    """``str(state)``: who is to move, every card, the moves, the pot, and
    at the end the showdown and the returns."""
    phase = p[PHASE]
    if phase == DEAL:
        head = f"deal ({p[DEALT]} of {n} cards dealt)"
    elif phase == BETTING:
        head = f"p{p[MOVER]} to move"
    else:
        head = "game over"
    cards = cards_of(p, n)
    lines = [head, "cards " + " ".join(f"p{s}:{v or '-'}" for s, v in enumerate(cards)),
             "moves " + (", ".join(f"p{s} {name}" for s, _, name in moves_of(p, n)) or "-"),
             f"pot {sum(paid_of(p, n))}"]
    if phase == OVER:
        shown = shown_of(p, n)
        if shown:
            lines.append(_showdown_text(shown))
        lines.append("returns " + " ".join(f"{r:g}" for r in returns))
    return "\n".join(lines)


def information_state_string(p: list, n: int, player: int, private: bool) -> str:
    """``player``'s information state: ``p{player}``, its card (``card 2``;
    with private information), one line per move (``p1 bet``), and at the
    end the showdown (``showdown p0 2, p1 3``)."""
    lines = [f"p{player}"]
    card = p[FIRST_SEAT + player]
    if private and card >= 0:
        lines.append(f"card {card + 1}")
    lines.extend(f"p{s} {name}" for s, _, name in moves_of(p, n))
    shown = shown_of(p, n)
    if shown:
        lines.append(_showdown_text(shown))
    return "\n".join(lines)


def observation_string(p: list, n: int, player: int, private: bool, to_move: int) -> str:
    """The table as ``player`` sees it now: one line of `` | ``-separated
    fields (the rules page)."""
    bits = [f"p{player}"]
    if private:
        card = p[FIRST_SEAT + player]
        bits.append(f"card {card + 1 if card >= 0 else '-'}")
    bits.append("paid " + " ".join(map(str, paid_of(p, n))))
    bits.append(f"bettor p{p[BETTOR]}" if p[BETTOR] >= 0 else "bettor -")
    folded = [f"p{s}" for s, f in enumerate(folded_of(p, n)) if f]
    bits.append("folded " + (" ".join(folded) or "-"))
    if p[PHASE] == OVER:
        bits.append("over")
        shown = shown_of(p, n)
        if shown:
            bits.append(_showdown_text(shown))
    else:
        bits.append(f"to move p{to_move}" if to_move >= 0 else "to move chance")
    return " | ".join(bits)


class ShowdownObserver(adapter.Observer):
    """Observation and information-state encodings for showdown.

    With n players, C cards and M = 2n - 1 move slots. Information state
    (perfect recall, from the position)::

        observer   n      one-hot: whose view this is
        own_card   C      one-hot: the player's card (private)
        moves      M x 2  the k-th move: one-hot pass (check/fold), bet (bet/call)
        shown      n x C  the cards shown at the showdown (at the end)

    Observation (current view; the compiled ``_showdown_rules.observation``)::

        observer n | to_move n+1 (last: chance / nobody) | own_card C |
        paid n (chips put in) | bettor n | folded n | shown n x C
    """

    PRIVATE = ("own_card",)

    def __init__(self, iig_obs_type, game, params):
        super().__init__(iig_obs_type, params)
        n, C = game.num_seats, game.num_cards
        self.n, self.C = n, C
        if self.perfect_recall:
            M = 2 * n - 1
            pieces = [("observer", n, (n,)), ("own_card", C, (C,)), ("moves", M * 2, (M, 2)),
                      ("shown", n * C, (n, C))]
        else:
            pieces = [("observer", n, (n,)), ("to_move", n + 1, (n + 1,)), ("own_card", C, (C,)),
                      ("paid", n, (n,)), ("bettor", n, (n,)), ("folded", n, (n,)), ("shown", n * C, (n, C))]
        self.set_pieces(pieces)

    def _set_history(self, state, player):
        d, n = self.dict, self.n
        p = state._c.s.tolist()
        card = p[FIRST_SEAT + player]
        if self.private and card >= 0:
            d["own_card"][card] = 1
        for k, (_, a, _) in enumerate(moves_of(p, n)):
            d["moves"][k, a] = 1
        for s, v in shown_of(p, n):
            d["shown"][s, v - 1] = 1

    def string_from(self, state, player):
        c = state._c
        p = c.s.tolist()
        if self.perfect_recall:
            return information_state_string(p, self.n, player, self.private)
        kind = c.rules.kind(c.s, c.rules.params)
        return observation_string(p, self.n, player, self.private, kind)
