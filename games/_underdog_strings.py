"""Underdog's events, strings and observer, rendered from positions.

The rules are the compiled functions of ``_underdog_rules`` (the position's
layout is in its docstring); nothing here changes a position. After each
move :func:`record` appends the move's events to the state's log, read from
the position before the move and the one after (and, for the fight step's
last decision, the rules' own ``stake`` and ``prize``). The strings are the
log's lines (information state) or the position's fields (observation,
``str(state)``).

Events. ``UnderdogState.log()`` is the game's events in order, each a named
tuple whose first field ``kind`` names it, with these fields after it:
``Round(round, start, last, bank, chips)``, ``Deal(player, card)``,
``Underdog(card)``, ``Swap(player)``, ``Draw(player, card)``,
``Keep(player, kept, laid)``, ``NewUnderdog(player)``, ``Flip(player, card)``,
``Skip(player)``, ``Fight(player, stake)``, ``Pass(player)``,
``Showdown(cards)``, ``Won(player, gain)``, ``Nobody()``,
``Alone(player, bank)``. The information-state string is their lines
(:func:`event_text`). Cards are their values, 1..cards.
"""

from __future__ import annotations

from collections import namedtuple
from typing import NamedTuple

import numpy as np
import pyspiel

from kibitz.games import adapter
from kibitz.games._underdog_rules import (BANK, CHIPS, DEAL, DEALT, DRAW, DRAWN, DRAWN_CARD, FIGHT,
                                          FIGHTING, FIGHTS, HAND, KEEP, KEEP_BASE, LAID, LAST, NEW_UNDERDOG,
                                          ORDER, OVER, PASS, PHASE, PILE, POS, POT, ROUND, SEATS, START, SWAP,
                                          UNDERDOG, prize, stake)

# The events, in the order of the module docstring: a named tuple each,
# whose first field ``kind`` names it (the name in quotes after it). Built
# with ``_new(Kind, (kind, field, ...))``, the tuple constructor that
# namedtuple's own ``__new__`` ends in, at half its cost (one or more a move).
_new = tuple.__new__
Round = namedtuple("Round", "kind round start last bank chips")  # "round"
Deal = namedtuple("Deal", "kind player card")  # "deal"
Underdog = namedtuple("Underdog", "kind card")  # "underdog": the round's first underdog card
Swap = namedtuple("Swap", "kind player")  # "swap"
Draw = namedtuple("Draw", "kind player card")  # "draw": the card a swapping seat drew
Keep = namedtuple("Keep", "kind player kept laid")  # "keep": after a swap, laid face up
NewUnderdog = namedtuple("NewUnderdog", "kind player")  # "new"
Flip = namedtuple("Flip", "kind player card")  # "flip": the new underdog card turned
Skip = namedtuple("Skip", "kind player")  # "skip": the pile is empty
Fight = namedtuple("Fight", "kind player stake")  # "fight"
Pass = namedtuple("Pass", "kind player")  # "pass"
Showdown = namedtuple("Showdown", "kind cards")  # "show": (seat, card) of each fighter, in turn order
Won = namedtuple("Won", "kind player gain")  # "won"
Nobody = namedtuple("Nobody", "kind")  # "nobody": nobody fought
Alone = namedtuple("Alone", "kind player bank")  # "alone": the last seat with chips takes the bank


# ------------------------------------------------------------ the record
def round_event(p: list, n: int) -> Round:
    """The "round" event of position ``p`` (a list) at a round's start."""
    return _new(Round, ("round", p[ROUND], p[START], p[LAST] == 1, p[BANK],
                        tuple(p[ORDER + CHIPS * n:ORDER + (CHIPS + 1) * n])))


def record(log: list, b: list, action: int, after: list, prm, n: int) -> None:
    """Appends to ``log`` the events of ``action``, played from position
    ``b`` to position ``after`` (lists; ``prm`` the rules' parameters, ``n``
    seats)."""
    phase, pos = b[PHASE], b[POS]
    if phase == DEAL:
        if pos < b[SEATS]:
            log.append(_new(Deal, ("deal", b[ORDER + DEALT * n + pos], action + 1)))
            return
        log.append(_new(Underdog, ("underdog", action + 1)))
        pos = -1  # the draw step starts from the first seat in turn order
    else:
        seat = b[ORDER + pos]
        if phase == DRAW:
            log.append(_new(Swap, ("swap", seat)) if action == SWAP else _new(NewUnderdog, ("new", seat)))
            return
        if phase == DRAWN:
            if b[DRAWN_CARD] == -1:
                log.append(_new(Draw, ("draw", seat, action + 1)))
                return
            log.append(_new(Flip, ("flip", seat, action + 1)))
        elif phase == KEEP:
            log.append(_new(Keep, ("keep", seat, action - KEEP_BASE + 1, after[ORDER + LAID * n + seat])))
        else:
            _fight_step(log, b, action, after, prm, n)
            return
    # a drawing turn ended: when the pile is empty, the seats after it skip the step
    if after[PHASE] == FIGHTING:
        for seat in b[ORDER + pos + 1:ORDER + b[SEATS]]:
            log.append(_new(Skip, ("skip", seat)))


def _fight_step(log, b, action, after, prm, n) -> None:
    """A fight-step decision's events; after the last, the showdown's."""
    pos = b[POS]
    seat = b[ORDER + pos]
    last = pos + 1 == b[SEATS]
    before = np.array(b, dtype=np.int64) if last else None
    bet = 0
    if action == FIGHT:  # before the showdown, what the seat's chips went down by
        chips = ORDER + CHIPS * n + seat
        bet = int(stake(before, prm, seat)) if last else b[chips] - after[chips]
        log.append(_new(Fight, ("fight", seat, bet)))
    else:
        log.append(_new(Pass, ("pass", seat)))
    if not last:
        return
    fights = b[ORDER + FIGHTS * n:ORDER + (FIGHTS + 1) * n]
    if action == FIGHT:
        fights[seat] = 1
    fighters = [x for x in b[ORDER:ORDER + b[SEATS]] if fights[x]]
    if len(fighters) >= 2:
        log.append(_new(Showdown, ("show", tuple((x, b[ORDER + HAND * n + x]) for x in fighters))))
    won = 0
    if fighters:  # the winner starts the next round
        won = int(prize(before))
        log.append(_new(Won, ("won", after[START], b[POT] + bet + won)))
    else:
        log.append(_new(Nobody, ("nobody",)))
    alive = [x for x in range(n) if after[ORDER + CHIPS * n + x] > 0]
    if after[PHASE] == OVER and len(alive) < 2:
        log.append(_new(Alone, ("alone", alive[0], b[BANK] - won)))
    elif after[ROUND] != b[ROUND]:
        log.append(round_event(after, n))


# ------------------------------------------------------------ the strings
def card_name(v: int) -> str:
    return f"card {v}"


def action_name(player: int, action: int) -> str:
    """``_action_to_string``: a card for chance, else the move's name."""
    if player == pyspiel.PlayerId.CHANCE:
        return card_name(action + 1)
    if action == SWAP:
        return "swap"
    if action == NEW_UNDERDOG:
        return "new underdog"
    if action == FIGHT:
        return "fight"
    if action == PASS:
        return "pass"
    return f"keep {action - KEEP_BASE + 1}"


def event_text(e, me: int) -> str | None:
    """One log event as ``me`` sees it, or None if ``me`` sees nothing of it."""
    kind = e.kind
    if kind == "round":
        return (f"[round {e.round}{' last' if e.last else ''} start p{e.start} bank {e.bank} "
                f"chips {' '.join(map(str, e.chips))}]")
    if kind == "deal":
        return f"you are dealt {e.card}" if e.player == me else None
    if kind in ("underdog", "flip"):
        return f"underdog {e.card}"
    if kind == "swap":
        return f"p{e.player} swaps"
    if kind == "draw":
        return f"you draw {e.card}" if e.player == me else None
    if kind == "keep":
        if e.player == me:
            return f"you keep {e.kept}, lay {e.laid}"
        return f"p{e.player} lays {e.laid}"
    if kind == "new":
        return f"p{e.player} new underdog"
    if kind == "skip":
        return f"p{e.player} skips (pile empty)"
    if kind == "fight":
        return f"p{e.player} fights ({e.stake})"
    if kind == "pass":
        return f"p{e.player} passes"
    if kind == "show":
        return "showdown " + " ".join(f"p{s}:{v}" for s, v in e.cards)
    if kind == "won":
        return f"p{e.player} wins {e.gain}"
    if kind == "nobody":
        return "nobody fights"
    if kind == "alone":
        return f"p{e.player} alone takes the bank ({e.bank})"
    raise ValueError(f"unknown event {e!r}")


class Seats(NamedTuple):
    """The seats' arrays of a position, as lists (``_underdog_rules``)."""
    order: list  # the turn order, the seats in the round
    chips: list
    hand: list
    fights: list
    laid: list

    @classmethod
    def of(cls, p: list, n: int) -> Seats:
        def part(k):
            return p[ORDER + k * n:ORDER + (k + 1) * n]
        return cls(p[ORDER:ORDER + p[SEATS]], part(CHIPS), part(HAND), part(FIGHTS), part(LAID))

    def fighters(self) -> list:
        """The seats fighting this round, in turn order."""
        return [x for x in self.order if self.fights[x]]


def passed(p: list, seats: Seats) -> list:
    """The seats that passed in this round's fight step so far, in turn order."""
    if p[PHASE] not in (FIGHTING, OVER):
        return []
    decided = seats.order[:p[POS]] if p[PHASE] == FIGHTING else seats.order
    return [x for x in decided if not seats.fights[x]]


def round_events(log: list) -> list:
    """The current round's events, its "round" event first."""
    i = len(log) - 1
    while log[i].kind != "round":
        i -= 1
    return log[i:]


def shown(log: list) -> tuple:
    """(seat, card) of each fighter shown in this round's showdown, or ():
    only the last round's can be seen (any other is followed at once by a
    new round)."""
    for e in reversed(log):
        if e.kind == "show":
            return e.cards
        if e.kind == "round":
            return ()
    return ()


def mover(p: list):
    """The seat to move at position ``p``, or None (chance, the end)."""
    return p[ORDER + p[POS]] if p[PHASE] in (DRAW, KEEP, FIGHTING) else None


#: why a player's move is illegal in each phase (the legal ones follow)
_STEP_WHY = {DRAW: "it is the draw step", KEEP: "after a swap, keep one of the two cards held",
             FIGHTING: "it is the fight step", OVER: "the game is over",
             DEAL: "that card is not in the draw pile", DRAWN: "that card is not in the draw pile"}

#: what the observation string's last field says of each phase
_STEP_NAMES = ("deal", "draw step", "card drawn", "keep", "fight step", "over")


def why_illegal(s) -> str:
    return _STEP_WHY[int(s[PHASE])]


def state_string(p: list, n: int, log: list, returns) -> str:
    """``str(state)``: the round, and each seat's chips, card, laid card and fight."""
    seats = Seats.of(p, n)
    lines = [f"round {p[ROUND]}{' (last round)' if p[LAST] else ''}, bank {p[BANK]}, "
             f"start player {p[START]}, underdog {p[UNDERDOG] or '-'}"]
    fighting = {e.player: e.stake for e in round_events(log) if e.kind == "fight"}
    for x in range(n):
        bits = [f"p{x}: chips {seats.chips[x]}"]
        if seats.hand[x]:
            bits.append(f"card {seats.hand[x]}")
        elif seats.chips[x] == 0 and x not in fighting:
            bits.append("out")
        if seats.laid[x]:
            bits.append(f"face up {seats.laid[x]}")
        if x in fighting:
            bits.append(f"fights ({fighting[x]})")
        lines.append(", ".join(bits))
    if p[PHASE] == OVER:
        lines.append("game over: returns " + " ".join(f"{r:g}" for r in returns))
    return "\n".join(lines)


def observation_string(p: list, n: int, log: list, player: int, private: bool) -> str:
    """The current round as ``player`` sees it (not perfect recall)."""
    seats = Seats.of(p, n)
    phase = p[PHASE]
    bits = [f"p{player}", f"round {p[ROUND]}{' last' if p[LAST] else ''}", f"bank {p[BANK]}",
            "chips " + " ".join(map(str, seats.chips))]
    if private and seats.hand[player]:
        bits.append(f"card {seats.hand[player]}")
    if private and phase == KEEP and mover(p) == player:
        bits.append(f"drawn {p[DRAWN_CARD]}")
    bits.append(f"underdog {p[UNDERDOG] or '-'}")
    laid = [f"p{x}:{v}" for x, v in enumerate(seats.laid) if v]
    if laid:
        bits.append("face up " + " ".join(laid))
    fighters = seats.fighters()
    if fighters:
        bits.append("fighting " + " ".join(f"p{x}" for x in fighters))
    out = passed(p, seats)
    if out:
        bits.append("passing " + " ".join(f"p{x}" for x in out))
    cards = shown(log)
    if cards:
        bits.append("showdown " + " ".join(f"p{x}:{v}" for x, v in cards))
    bits.append(f"pile {p[PILE]}")
    if phase == OVER:
        bits.append("game over")
    else:
        who = mover(p)
        bits.append(f"to move {'chance' if who is None else f'p{who}'} ({_STEP_NAMES[phase]})")
    return " | ".join(bits)


# the events marked in the block of the seat that moved (UnderdogObserver)
_SEAT_MOVES = frozenset({"swap", "new", "skip", "keep", "flip", "fight", "pass"})


class UnderdogObserver(adapter.Observer):
    """Observation and information-state encodings for Underdog.

    Perfect recall (information state), tensor layout, with n players,
    C cards and R = max_rounds; ``round_block`` repeats R times::

        observer            n     one-hot: whose view this is
        per round r:
          start             n     one-hot start player
          last              1     1 in the last round
          own_dealt         C     own dealt card
          own_drawn         C     own drawn card (swap)
          underdog0         C     the first underdog card
          per seat s (n times):
            swap, new, skip 3     draw-step choice (skip: pile empty)
            laid            C     the card the seat laid face up
            flipped         C     the new underdog card the seat turned
            fight, pass     2     fight-step choice
            shown           C     card shown at a showdown
          winner            n+1   one-hot winner (last entry: nobody)

    Observation (current round only; the compiled ``observation``)::

        observer n | to_move n+1 (last: chance/none) | own_card C |
        drawn C (the swapper's drawn card while it chooses) |
        underdog C | laid n*C | chips n | bank 1 | fight n | pass n |
        shown n*C | last 1 | pile 1 | phase 6
    """

    PRIVATE = ("own_card", "drawn")

    def __init__(self, iig_obs_type, game, params):
        super().__init__(iig_obs_type, params)
        n, C = game.num_seats, game.num_cards
        self.n, self.C, self.R = n, C, game.max_rounds
        if self.perfect_recall:
            seat = 3 + 3 * C + 2
            self.round_size = n + 1 + 3 * C + n * seat + n + 1
            pieces = [("observer", n, (n,)),
                      ("rounds", self.R * self.round_size, (self.R, self.round_size))]
        else:
            pieces = [("observer", n, (n,)), ("to_move", n + 1, (n + 1,)),
                      ("own_card", C, (C,)), ("drawn", C, (C,)), ("underdog", C, (C,)),
                      ("laid", n * C, (n, C)),
                      ("chips", n, (n,)), ("bank", 1, (1,)), ("fight", n, (n,)),
                      ("pass", n, (n,)), ("shown", n * C, (n, C)), ("last", 1, (1,)),
                      ("pile", 1, (1,)), ("phase", 6, (6,))]
        self.set_pieces(pieces)

    def _set_history(self, state, me):
        n, C = self.n, self.C
        rounds = self.dict["rounds"]
        seat_size = 3 + 3 * C + 2
        seats0 = n + 1 + 3 * C
        r = -1
        row = None
        for e in state._c.log():
            kind = e.kind
            if kind == "round":
                r += 1
                row = rounds[r]
                row[e.start] = 1
                row[n] = 1 if e.last else 0
            elif kind == "deal":
                if e.player == me and self.private:
                    row[n + 1 + e.card - 1] = 1
            elif kind == "draw":
                if e.player == me and self.private:
                    row[n + 1 + C + e.card - 1] = 1
            elif kind == "underdog":
                row[n + 1 + 2 * C + e.card - 1] = 1
            elif kind == "show":
                for seat, v in e.cards:
                    row[seats0 + seat * seat_size + 5 + 2 * C + v - 1] = 1
            elif kind == "won":
                row[seats0 + n * seat_size + e.player] = 1
            elif kind == "nobody":
                row[seats0 + n * seat_size + n] = 1
            elif kind in _SEAT_MOVES:  # in the block of the seat that moved
                base = seats0 + e.player * seat_size
                if kind == "swap":
                    row[base] = 1
                elif kind == "new":
                    row[base + 1] = 1
                elif kind == "skip":
                    row[base + 2] = 1
                elif kind == "keep":
                    row[base + 3 + e.laid - 1] = 1
                elif kind == "flip":
                    row[base + 3 + C + e.card - 1] = 1
                elif kind == "fight":
                    row[base + 3 + 2 * C] = 1
                else:
                    row[base + 3 + 2 * C + 1] = 1

    def string_from(self, state, player):
        c = state._c
        if self.perfect_recall:
            me = player if self.private else -1
            parts = [f"p{player}"]
            for e in c.log():
                if not self.private and e.kind in ("deal", "draw"):
                    continue
                t = event_text(e, me)
                if t is not None:
                    parts.append(t)
            return "\n".join(parts)
        return observation_string(c.s.tolist(), self.n, c.log(), player, self.private)
