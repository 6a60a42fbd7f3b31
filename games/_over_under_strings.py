"""Over/Under's strings, events and observer, computed from positions.

What the rules (``_over_under_rules``) do not need and a person or a
network reads: the log of what happened (``begin_log`` and ``record``
write it from the positions before and after each move), the action
names, ``str(state)``, the observation and information-state strings, the
information-state tensor, and the ``compact`` encoding's layout (its values
are the compiled ``compact``). Nothing here changes a position.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pyspiel

from kibitz.games import adapter
from kibitz.games._over_under_rules import (DEAL, DONATED, FIRST_TALLY, FLIP, GIVE, NDEALT, OPEN, OUTCOME, OVER,
                                            PHASE, POVER, PREDICT, PSTACK, REM, ROUND, TURN, resolve, unclaimed)

CASH_NAMES = ("$1", "$5", "$10", "$20", "$50", "$100")
STANDARD_NAMES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
JOKER_NAMES = ("$2 joker", "pyramid", "eagle")
PHASE_NAMES = ("deal", "predict", "flip", "give", "over")
#: a flip's outcome, by the rules' code (``SAFE`` .. ``JOKER``)
OUTCOME_NAMES = ("safe", "bust", "tie", "joker")
#: Donor ranks of the solo version: (lowest amount, name)
DONOR_RANKS = ((1000, "Mega Donor"), (500, "Wealthy Donor"), (100, "Big Donor"), (1, "Lucky Donor"))


# ------------------------------------------------------------------ events
# The game's log (``OverUnderState.log()``): one of these per event, in
# order. Each is a tuple whose first field is its kind; the
# information-state string has one line per event (``event_text``; the lines
# are in the rules page). A ``card`` is a card kind (chance outcome order).
#
# Events are built with ``_new(Kind, (kind, field, ...))``, the tuple
# constructor NamedTuple's own ``__new__`` ends in, at half its cost.
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


class Layout(NamedTuple):
    """Where a position's arrays start (``_over_under_rules``' docstring)."""
    n: int  #: seats
    kinds: int  #: card kinds
    stacks: int
    counts: int  #: the deck's count of each card kind
    top: int  #: each stack's top card kind
    money: int  #: each stack's money
    owner: int  #: each stack's claimer

    @classmethod
    def of(cls, n: int, kinds: int, stacks: int) -> Layout:
        counts = FIRST_TALLY + n
        return cls(n, kinds, stacks, counts, counts + kinds, counts + kinds + stacks, counts + kinds + 2 * stacks)

    def tally(self, p: list) -> list:
        return p[FIRST_TALLY:FIRST_TALLY + self.n]

    def deck(self, p: list) -> list:
        return p[self.counts:self.counts + self.kinds]

    def stacks_of(self, p: list) -> list:
        """(top card kind or -1, money, claimer or -1) of each stack."""
        at, S = self.top, self.stacks
        return list(zip(p[at:at + S], p[at + S:at + 2 * S], p[at + 2 * S:at + 3 * S]))


# ------------------------------------------------------------ the record
def round_event(p: list, n: int) -> Round:
    """The "round" event of position ``p`` (a list) at a round's start."""
    rnd = p[ROUND]
    return _new(Round, ("round", rnd, (rnd - 2) % n, p[TURN], tuple(p[FIRST_TALLY:FIRST_TALLY + n])))


def record(log: list, b: list, action: int, after: list, prm: np.ndarray, lay: Layout) -> None:
    """Appends to ``log`` the events of ``action``, played from position
    ``b`` to position ``after`` (lists; ``prm`` the rules' parameters).

    A flip's or a give's claim is read from ``after`` unless the round
    ended; then from the position between the move and the round's end
    (the rules' ``resolve``), which still holds the round's stacks."""
    phase = b[PHASE]
    if phase == DEAL:
        log.append(_new(Deal, ("deal", b[NDEALT], action)))
        return
    if phase == PREDICT:
        log.append(_new(Predict, ("predict", b[TURN], action >> 1, not action & 1)))
        return
    st = b[PSTACK]
    ended = after[PHASE] == OVER or after[ROUND] != b[ROUND]
    mid = None
    m = after
    if ended:
        mid = np.array(b, dtype=np.int64)
        resolve(mid, prm, action)
        m = mid.tolist()
    if phase == FLIP:
        log.append(_new(Flip, ("flip", action, st, OUTCOME_NAMES[m[OUTCOME]])))
        seat = b[TURN]
    else:  # GIVE
        seat = action - 2 * lay.stacks
        log.append(_new(Give, ("give", b[TURN], seat)))
    if m[lay.owner + st] >= 0:
        log.append(_new(Claim, ("claim", seat, st, m[lay.money + st])))
    if ended:
        _round_end(log, m, int(unclaimed(mid, prm)), after, lay.n)


def _round_end(log: list, m: list, left: int, after: list, n: int) -> None:
    """The events of a round's end (``m``: its last position, ``left`` the
    money unclaimed), then of the next round or of the game's end."""
    tally = tuple(m[FIRST_TALLY:FIRST_TALLY + n])
    log.append(_new(RoundEnd, ("end", m[ROUND], "empty" if m[OPEN] else "claimed", left, tally)))
    if after[PHASE] != OVER:
        log.append(round_event(after, n))
    elif n == 1:
        log.append(_new(Donor, ("donor", after[DONATED])))
    else:
        best = min(tally)
        log.append(_new(Winners, ("winners", tuple(i for i, t in enumerate(tally) if t == best))))


# ------------------------------------------------------------ the strings
def donor_rank(amount: int) -> str:
    """The solo version's rank for the money left on the table."""
    for low, name in DONOR_RANKS:
        if amount >= low:
            return name
    return "no donation"


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


def action_name(names: tuple, kinds: int, stacks: int, player: int, action: int) -> str:
    """``_action_to_string``: a card for chance, else the prediction or the give."""
    if player == pyspiel.PlayerId.CHANCE:
        return f"card {names[action]}" if 0 <= action < kinds else f"card ?{action}"
    if 0 <= action < 2 * stacks:
        return f"stack {action >> 1} {'under' if action & 1 else 'over'}"
    return f"give to {action - 2 * stacks}"


#: why a move is illegal in each phase (the legal ones follow)
_WHY = {DEAL: "no such card left in the deck", FLIP: "no such card left in the deck",
        PREDICT: "name a stack still on the table, over or under",
        GIVE: "give the stack to another player", OVER: "the game is over"}


def why_illegal(phase: int) -> str:
    return _WHY[phase]


def _said(p: list) -> str:
    return "over" if p[POVER] else "under"


def state_string(p: list, lay: Layout, names: tuple, rounds: int, returns) -> str:
    """``str(state)``: the round, each stack, the deck and the tally."""
    phase, turn = p[PHASE], p[TURN]
    head = f"round {p[ROUND]} of {rounds}, dealer p{(p[ROUND] - 2) % lay.n}"
    if phase == PREDICT:
        head += f", p{turn} to predict"
    elif phase == FLIP:
        head += f", p{turn} said stack {p[PSTACK]} {_said(p)}"
    elif phase == GIVE:
        head += f", p{turn} gives stack {p[PSTACK]} away"
    lines = [head]
    for s, (top, money, owner) in enumerate(lay.stacks_of(p)):
        if top < 0:
            lines.append(f"stack {s}: not dealt")
        elif owner >= 0:
            lines.append(f"stack {s}: claimed by p{owner} (${money})")
        else:
            lines.append(f"stack {s}: top {names[top]}, ${money} in it")
    deck = " ".join(f"{names[k]}x{m}" for k, m in enumerate(lay.deck(p)) if m)
    lines.append(f"deck {p[REM]}: {deck or 'empty'}")
    lines.append("tally " + " ".join(f"p{i} ${t}" for i, t in enumerate(lay.tally(p))))
    if phase == OVER:
        if lay.n == 1:
            lines.append(donor_text(p[DONATED]))
        lines.append("game over: returns " + " ".join(f"{x:g}" for x in returns))
    return "\n".join(lines)


def observation_string(p: list, lay: Layout, names: tuple, rounds: int, player: int) -> str:
    """The current table as one line of ``|``-separated fields (every card is face up)."""
    bits = [f"p{player}", f"round {p[ROUND]} of {rounds}", f"dealer p{(p[ROUND] - 2) % lay.n}",
            "tally " + " ".join(map(str, lay.tally(p)))]
    table = []
    for s, (top, money, owner) in enumerate(lay.stacks_of(p)):
        if top < 0:
            continue
        table.append(f"{s}:p{owner}/${money}" if owner >= 0 else f"{s}:{names[top]}/${money}")
    bits.append("stacks " + (" ".join(table) if table else "-"))
    bits.append("deck " + (" ".join(f"{names[k]}x{m}" for k, m in enumerate(lay.deck(p)) if m) or "empty"))
    phase, turn = p[PHASE], p[TURN]
    if phase == PREDICT:
        bits.append(f"p{turn} predicts")
    elif phase == FLIP:
        bits.append(f"p{turn}: stack {p[PSTACK]} {_said(p)}")
    elif phase == GIVE:
        bits.append(f"p{turn} gives stack {p[PSTACK]} (said {_said(p)})")
    elif phase == OVER:
        bits.append("game over")
    return " | ".join(bits)


def compact_pieces(n: int, kinds: int, stacks: int) -> list:
    """``[(piece, size, shape)]`` of the ``compact`` encoding (the compiled
    ``compact`` writes it): a hundred-odd floats for learning, the current
    table as one player sees it, with the numbers the heuristic plays by
    computed exactly. The index table is the section "Compact encoding" of
    docs/rules/over_under.md; in short (n players, S stacks, KC card kinds,
    M = one deck's money, V = the highest card value, R = rounds)::

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
    return [("phase", 5, (5,)), ("schedule", 3, (3,)), ("stacks", stacks * 11, (stacks, 11)),
            ("deck", kinds + 1, (kinds + 1,)), ("seats", n * 5, (n, 5))]


class OverUnderObserver(adapter.Observer):
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

    Observation (current view; the compiled ``observation``), tensor::

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
        n, S, K, KC, R = game.num_seats, game.num_stacks, game.num_values, game.num_kinds, game.num_rounds
        self.n, self.S, self.K, self.KC, self.R = n, S, K, KC, R
        self.lay, self.names = game.layout, game.card_names
        F = game.deck_cards - S
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
        n, S, K = self.n, self.S, self.K
        rounds = self.dict["rounds"]
        fs = self.flip_size
        row = None
        base = 0
        f = -1
        for e in state._c.log():
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
                row[base + n + S + 2 + self.KC + e.to] = 1

    def string_from(self, state, player):
        c = state._c
        if self.perfect_recall:
            names, rounds = self.names, self.R
            return "\n".join([f"p{player}"] + [event_text(e, names, rounds) for e in c.log()])
        return observation_string(c.s.tolist(), self.lay, self.names, self.R, player)
