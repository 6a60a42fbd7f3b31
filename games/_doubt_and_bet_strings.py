"""Doubt and Bet's events, strings and observer, rendered from positions.

The rules are the compiled functions of ``_doubt_and_bet_rules`` (the
position's layout is in its docstring); nothing here changes a position.
After each move :func:`record` appends the move's events to the state's
log, read from the position before the move and the one after. The
strings are the log's lines (information state) or the position's fields
(observation, ``str(state)``).

Events. ``DoubtAndBetState.log()`` is the game's events in order, each a
named tuple whose first field ``kind`` names it, with these fields after
it: ``Round(round)``, ``Upkeep(effects)``, ``Seating(seating)``,
``Start(first, order, chips, slots)``, ``Exchange(player, choice)``,
``Deal(player, colour)``, ``Claim(player, quantity, colour, chips,
slot_chips)``, ``Doubt(player)``, ``Call(player, chips, slot_chips)``,
``Raise(player, chips, slot_chips)``, ``AllIn(player, chips, slot_chips,
opponent_chips, opponent_slot_chips)``, ``Fold(player)``,
``Reveal(hands, count)``, ``Settle(winner, loser, chips, slot_chips)``,
``Out(player)``, ``End(reason)``. The information-state string is their
lines (:func:`event_text`; the line formats are in the rules page).
"""

from __future__ import annotations

from typing import NamedTuple

import pyspiel

from kibitz.games import adapter
from kibitz.games._doubt_and_bet_rules import (
    ALL_IN, B_CHIPS, B_SLOTS, BET_LOSER, BET_WINNER, BETTOR, CALL_BASE, CLAIM, CLAIM_CHIPS, CLAIM_SLOTS,
    CLAIMANT, COLOUR, D_CHIPS, D_SLOTS, DEAL, DEAL_SEAT, DOUBT, DOUBTER, EXCHANGE, FIRST, FOLD, NDEAL, NORDER,
    NSEAT, OVER, PHASE, POS, QUANTITY, ROUND, SD_TURN, SHOWDOWN, SHUFFLE, TURN, UP_CHIP, UP_OUT, UP_SLOT,
    UP_SLOT_OUT)

COLOUR_NAMES = ("red", "yellow", "green", "blue", "purple")
PHASE_NAMES = ("shuffle", "exchange", "deal", "claim", "showdown", "over")
MOVE_NAMES = ("keep", "buy slot", "sell slot", "doubt", "all in", "fold")
# Exchange choices and showdown moves in the log and the tensors.
EXCHANGE_WORDS = ("keep", "buy slot", "sell slot")
SD_CALL, SD_RAISE, SD_ALL_IN, SD_FOLD = 1, 2, 3, 4

# Events are built with ``_new(Kind, (kind, field, ...))``, the tuple
# constructor NamedTuple's own ``__new__`` ends in, at half its cost.
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


def colour_name(k: int, k1: int) -> str:
    return "rainbow" if k == k1 - 1 else COLOUR_NAMES[k]


# ------------------------------------------------------------ the position
class Table:
    """The fields of positions of one game, read from a position as a list
    (the layout of ``_doubt_and_bet_rules``; ``at`` its offsets)."""

    def __init__(self, game):
        self.n, self.k1, self.S = game.num_seats, game.k1, game.max_slots
        self.single_bet = game.single_bet
        self.raise_base = game.raise_base
        self.at = game.offsets

    def seats(self, p, name) -> list:
        """The ``n`` per-seat values of ``name`` (chips, slots, out, upkept)."""
        at = self.at[name]
        return p[at:at + self.n]

    def seating(self, p) -> tuple:
        at = self.at["seating"]
        return tuple(p[at:at + p[NSEAT]])

    def order(self, p) -> tuple:
        """The turn order; before the first round's exchange (a game over at
        round 1's upkeep) the seats in order."""
        if not p[NORDER]:
            return tuple(range(self.n))
        at = self.at["order"]
        return tuple(p[at:at + p[NORDER]])

    def hand(self, p, seat) -> tuple:
        at = self.at["hands"] + seat * self.k1
        return tuple(p[at:at + self.k1])

    def claim(self, p):
        """The standing claim (:class:`StandingClaim`) or None."""
        if p[CLAIMANT] < 0:
            return None
        return _new(StandingClaim, tuple(p[CLAIMANT:CLAIM_SLOTS + 1]))

    def stakes(self, p) -> tuple:
        """The bettor's stake and the doubter's (None before its first)."""
        return (p[B_CHIPS], p[B_SLOTS]), (None if p[D_CHIPS] < 0 else (p[D_CHIPS], p[D_SLOTS]))

    def revealed(self, p) -> tuple:
        """(seat, hand) of every hand revealed in this round, or (): the
        position keeps only a final one (any other is followed at once by a
        new round); seats out before the deal hold no cards."""
        if not p[self.at["revealed"]]:
            return ()
        hands = (self.hand(p, s) for s in range(self.n))
        return tuple((s, h) for s, h in enumerate(hands) if any(h))

    def end_reason(self, p, at_bet: bool) -> str:
        """Why the game at final position ``p`` ended: at a bet (``at_bet``)
        or at an upkeep."""
        if at_bet and self.single_bet:
            return "single_bet"
        if p[NSEAT] == 1:
            return "last"
        return "max_rounds" if at_bet else "none"


# ------------------------------------------------------------ the record
def begin_log(log: list, p: list, table: Table) -> None:
    """The events of the first round's start, at the initial position ``p``."""
    _round_begun(log, p, table)


def _round_begun(log: list, p: list, table: Table) -> None:
    """The events of a round begun at position ``p``: its number, its upkeep,
    then the end or the exchange's start (after a shuffle: at the shuffle)."""
    log.append(_new(Round, ("round", p[ROUND])))
    effects = table.seats(p, "upkept")
    if any(effects):
        log.append(_new(Upkeep, ("upkeep", tuple((s, x) for s, x in enumerate(effects) if x))))
    if p[PHASE] == OVER:
        log.append(_new(End, ("end", table.end_reason(p, False))))
    elif p[PHASE] != SHUFFLE:
        _start(log, p, table)


def _start(log: list, p: list, table: Table) -> None:
    log.append(_new(Start, ("start", p[FIRST], table.order(p), tuple(table.seats(p, "chips")),
                            tuple(table.seats(p, "slots")))))


def record(log: list, b: list, action: int, a: list, table: Table) -> None:
    """Appends to ``log`` the events of ``action``, played from position
    ``b`` to position ``a`` (lists)."""
    ph = b[PHASE]
    if ph == DEAL:
        log.append(_new(Deal, ("deal", b[DEAL_SEAT], action)))
    elif ph == EXCHANGE:
        log.append(_new(Exchange, ("exchange", b[table.at["order"] + b[POS]], action)))
    elif ph == CLAIM:
        if action == DOUBT:
            log.append(_new(Doubt, ("doubt", b[TURN])))
        else:
            log.append(_new(Claim, ("claim", b[TURN], a[QUANTITY], a[COLOUR], a[CLAIM_CHIPS], a[CLAIM_SLOTS])))
    elif ph == SHUFFLE:
        log.append(_new(Seating, ("seating", table.seating(a))))
        _start(log, a, table)
    else:
        _showdown(log, b, action, a, table)


def _showdown(log: list, b: list, action: int, a: list, table: Table) -> None:
    """A showdown move's events: the move, and for a call, an all in or a
    fold the reveal (not for a fold), the settlement, who is out and the
    next round's start or the end."""
    me, bettor = b[SD_TURN], b[BETTOR]
    stakes = {bettor: (a[B_CHIPS], a[B_SLOTS]), b[DOUBTER]: (a[D_CHIPS], a[D_SLOTS])}
    if action == FOLD:
        log.append(_new(Fold, ("fold", me)))
    elif action == ALL_IN:
        other = b[DOUBTER] if me == bettor else bettor
        log.append(_new(AllIn, ("allin", me, *stakes[me], *stakes[other])))
    else:
        is_raise = action >= table.raise_base
        ch, s = divmod(action - (table.raise_base if is_raise else CALL_BASE), table.S)
        log.append(_new(Raise if is_raise else Call, ("raise" if is_raise else "call", me, ch, s)))
        if is_raise:
            return
    if action != FOLD:
        hands = tuple((s, table.hand(b, s)) for s in range(table.n) if b[table.at["out"] + s] < 0)
        log.append(_new(Reveal, ("reveal", hands, a[table.at["count"]])))
    _settled(log, b, a, table, stakes)


def _settled(log: list, b: list, a: list, table: Table, stakes: dict) -> None:
    loser = a[BET_LOSER]
    log.append(_new(Settle, ("settle", a[BET_WINNER], loser, *stakes[loser])))
    effect = a[table.at["upkept"] + loser]
    if a[table.at["out"] + loser] >= 0 and effect != UP_OUT and effect != UP_SLOT_OUT:
        log.append(_new(Out, ("out", loser)))  # out at the bet, not at the next upkeep
    if a[ROUND] != b[ROUND]:
        _round_begun(log, a, table)
    elif a[PHASE] == OVER:
        log.append(_new(End, ("end", table.end_reason(a, True))))


# ------------------------------------------------------------ the strings
def action_name(player: int, action: int, game, seating: tuple) -> str:
    """``_action_to_string``: chance outcomes (``card red``, ``seating 2 0 1``:
    the ``action``-th order of the players in ``seating``) and moves."""
    k1, S = game.k1, game.max_slots
    if player == pyspiel.PlayerId.CHANCE:
        if seating is not None:
            perms = game.seatings(tuple(sorted(seating)))
            if 0 <= action < len(perms):
                return "seating " + " ".join(map(str, perms[action]))
            return f"seating #{action}"
        return f"card {colour_name(action, k1)}" if 0 <= action < k1 else f"card #{action}"
    if action < CALL_BASE:
        return MOVE_NAMES[action]
    if action < game.raise_base:
        ch, s = divmod(action - CALL_BASE, S)
        return f"call {ch}+{s}"
    if action < game.claim_base:
        ch, s = divmod(action - game.raise_base, S)
        return f"raise {ch}+{s}"
    p, i = divmod(action - game.claim_base, game.qmax * k1)
    q, k = divmod(i, k1)
    ch, s = divmod(p, S)
    return f"claim {q + 1} {colour_name(k, k1)} stake {ch}+{s}"


def hand_text(counts, k1: int) -> str:
    return " ".join(" ".join([colour_name(k, k1)] * x) for k, x in enumerate(counts) if x)


_UPKEEP_WORDS = {UP_CHIP: "pays a chip", UP_SLOT: "loses a slot", UP_OUT: "is out",
                 UP_SLOT_OUT: "loses a slot and is out"}
_END_WORDS = {"last": "game over: one player left", "none": "game over: nobody left",
              "max_rounds": "game over: max rounds reached",
              "single_bet": "game over: the single bet is settled"}

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
        return "upkeep: " + ", ".join(f"p{s} {_UPKEEP_WORDS[x]}" for s, x in e.effects)
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
        hands = " | ".join(f"p{s}: {hand_text(h, k1) or '-'}" for s, h in e.hands)
        return f"reveal {hands} | count {e.count}"
    if kind == "settle":
        return (f"p{e.winner} wins {e.chips + e.slot_chips}, "
                f"p{e.loser} loses {e.chips}+{e.slot_chips}")
    if kind == "out":
        return f"p{e.player} is out"
    if kind == "end":
        return _END_WORDS[e.reason]
    raise ValueError(f"unknown event {e!r}")


def _stake_text(stake) -> str:
    return f"{stake[0]}+{stake[1]}"


def state_string(p: list, table: Table, returns) -> str:
    """``str(state)``: the round, phase, first player and seating; every
    seat's chips, slots and hand (or out); the claim, the showdown, and at
    the end the returns."""
    k1, ph = table.k1, p[PHASE]
    chips, slots, out = table.seats(p, "chips"), table.seats(p, "slots"), table.seats(p, "out")
    lines = [f"round {p[ROUND]}, {PHASE_NAMES[ph]}, first player p{p[FIRST]}, "
             f"seating {' '.join(map(str, table.seating(p)))}"]
    for s in range(table.n):
        bits = [f"p{s}: chips {chips[s]}, slots {slots[s]}"]
        if out[s] >= 0:
            bits.append("out")
        elif ph in (DEAL, CLAIM, SHOWDOWN):
            bits.append("hand " + (hand_text(table.hand(p, s), k1) or "-"))
        lines.append(", ".join(bits))
    claim = table.claim(p)
    if claim is not None:
        w, q, k, ch, s = claim
        lines.append(f"claim: p{w} {q} {colour_name(k, k1)} stake {ch}+{s}")
    if ph == SHOWDOWN:
        bstake, dstake = table.stakes(p)
        d = "-" if dstake is None else _stake_text(dstake)
        lines.append(f"showdown: bettor p{p[BETTOR]} {_stake_text(bstake)}, "
                     f"doubter p{p[DOUBTER]} {d}, p{p[SD_TURN]} to act")
    if ph == OVER:
        lines.append("game over: returns " + " ".join(f"{r:g}" for r in returns))
    return "\n".join(lines)


def observation_string(p: list, table: Table, player: int, private: bool, to_move: int) -> str:
    """The table as ``player`` sees it now (not perfect recall): one line
    of `` | ``-separated fields (the rules page)."""
    n, k1, ph = table.n, table.k1, p[PHASE]
    chips, slots, out = table.seats(p, "chips"), table.seats(p, "slots"), table.seats(p, "out")
    bits = [f"p{player}", f"round {p[ROUND]}", PHASE_NAMES[ph],
            # an out player's chips are "-" unless it kept some (knocked out
            # by an upkeep holding a chip); its slots (always 1) are "-"
            "chips " + " ".join(str(chips[s]) if out[s] < 0 or chips[s] else "-" for s in range(n)),
            "slots " + " ".join(str(slots[s]) if out[s] < 0 else "-" for s in range(n)),
            "order " + " ".join(map(str, table.order(p)))]
    if ph in (SHUFFLE, OVER):
        # the order above is the last round's; who starts the next round
        # (in the others it is the order's first player)
        bits.append(f"first p{p[FIRST]}")
    if private and ph in (DEAL, CLAIM, SHOWDOWN):
        bits.append("hand " + (hand_text(table.hand(p, player), k1) or "-"))
    if ph in (CLAIM, SHOWDOWN):
        bits.append(f"dealt {p[NDEAL]}")
    claim = table.claim(p)
    if claim is not None:
        w, q, k, ch, s = claim
        bits.append(f"claim p{w} {q} {colour_name(k, k1)} stake {ch}+{s}")
    if ph == SHOWDOWN:
        bstake, dstake = table.stakes(p)
        d = "-" if dstake is None else _stake_text(dstake)
        bits.append(f"showdown bettor p{p[BETTOR]} {_stake_text(bstake)} doubter p{p[DOUBTER]} {d}")
    revealed = table.revealed(p)
    if revealed:
        bits.append("revealed " + " ".join(
            f"p{s}:{hand_text(h, k1).replace(' ', ',') or '-'}" for s, h in revealed))
    if ph != OVER:
        bits.append(f"to move p{to_move}" if to_move >= 0 else "to move chance")
    return " | ".join(bits)


# ------------------------------------------------------------ the observer
class DoubtAndBetObserver(adapter.Observer):
    """Observation and information-state encodings for Doubt and Bet.

    n players, K1 colours (rainbow last), S = slots, Q = n*S, R = max_rounds
    (1 with single_bet), L = Cmax + S + 2 showdown moves. Numbers are stored
    as they are (counts, chips), seats and colours as index+1 where a slot
    may be empty (0).

    Perfect recall (information state, written from the log)::

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

    Observation (current round only; the compiled ``observation``)::

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

    PRIVATE = ("own_hand",)

    def __init__(self, iig_obs_type, game, params):
        super().__init__(iig_obs_type, params)
        n, k1 = game.num_seats, game.k1
        self.n, self.k1 = n, k1
        self.table = game.table
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
        own = off["own_hand"] if self.private else -1
        own_cards, claims, showdown = off["own_cards"], off["claims"], off["showdown"]
        exchange, doubter, result = off["exchange"], off["doubter"], off["result"]
        row = None
        r = -1
        nclaims = nsd = nown = 0
        for e in state._c.log():
            kind = e[0]
            if kind == "deal":
                if e[1] == me and own >= 0:
                    row[own + e[2]] += 1
                    row[own_cards + nown] = e[2] + 1
                    nown += 1
            elif kind == "claim":
                b = claims + 5 * nclaims
                row[b:b + 5] = (e[1] + 1, e[2], e[3] + 1, e[4], e[5])
                nclaims += 1
            elif kind == "exchange":
                row[exchange + e[1]] = e[2] + 1
            elif kind in _SHOWDOWN_CODES:
                b = showdown + 4 * nsd
                row[b] = e[1] + 1
                row[b + 1] = _SHOWDOWN_CODES[kind]
                if kind != "fold":
                    row[b + 2], row[b + 3] = e[2], e[3]
                nsd += 1
            elif kind == "round":
                r += 1
                row = rounds[r]
                row[off["present"]] = 1
                nclaims = nsd = nown = 0
            elif kind == "start":
                row[off["first"] + e.first] = 1
                row[off["chips"]:off["chips"] + n] = e.chips
                row[off["slots"]:off["slots"] + n] = e.slots
            elif kind == "doubt":
                row[doubter + e.player] = 1
            elif kind == "settle":
                row[result + e.winner] = 1
                row[result + n + e.loser] = 1
                row[result + 2 * n] = e.chips
                row[result + 2 * n + 1] = e.slot_chips
            elif kind == "reveal":
                b = off["revealed"]
                row[b] = 1
                for s, h in e.hands:
                    row[b + 1 + s * k1:b + 1 + (s + 1) * k1] = h
            elif kind == "upkeep":
                for s, x in e.effects:
                    row[off["upkeep"] + s] = x
            elif kind == "seating":
                for i, s in enumerate(e.seating):
                    row[off["seating"] + i] = s + 1
            elif kind == "out":
                row[off["out"] + e.player] = 1

    def string_from(self, state, player):
        c = state._c
        if not self.perfect_recall:
            return observation_string(c.s.tolist(), self.table, player, self.private, state.current_player())
        # OpenSpiel's ISMCTSBot asks for this string about five times per
        # simulation. The log only grows, so the string so far is kept with
        # the position and carried to the next one (the state's
        # ``_apply_action``), which extends it by the events since.
        who = player if self.private else -1
        log = c.log()
        texts = state._derived("texts", dict)
        n, text = texts.get((player, who)) or (0, f"p{player}")
        if n < len(log):
            k1 = self.k1
            parts = [text]
            for i in range(n, len(log)):
                t = cached_event_text(log[i], who, k1)
                if t is not None:
                    parts.append(t)
            text = "\n".join(parts)
            texts[(player, who)] = (len(log), text)
        return text


_SHOWDOWN_CODES = {"call": SD_CALL, "raise": SD_RAISE, "allin": SD_ALL_IN, "fold": SD_FOLD}
