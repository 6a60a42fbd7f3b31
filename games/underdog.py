"""Underdog: 13 cards, swap or flip the underdog card, fight or pass.

Implements the rules page ``docs/rules/underdog.md``, which states the rules
and our own rulings (marked there) in our own words.

A round: every player with chips is dealt one card (chance, seat by seat from
seat 0), then the underdog card is turned up (chance). Draw step, from the
start player clockwise: ``swap`` (a chance draw, then ``keep v``: the other
card goes face up in front of the player) or ``new underdog`` (a chance card
replaces the underdog card). Fight step, from the start player: ``fight``
(1 chip; in the last round ``last_round_stake`` chips, or all the player has
if less) or ``pass``. Among two or more fighters the lowest card adds the
underdog card's value; the highest total wins, ties going to the first in
turn order from the start player. The winner takes the chips bet and one
chip from the bank (the whole bank in the last round) and starts the next
round.

Rulings that are our own (also in the rules page):

* ``last_round_stake`` is both the bank size that makes a round the last
  round and the fight cost in that round (2 in the text).
* When the draw pile is empty, the players still to draw skip the step.
* Every round is dealt from the full deck of ``cards`` cards.
* Nobody fights: no winner, bank unchanged, same start player; the round
  counts toward ``max_rounds``. The game ends after the last round even if
  nobody fights in it (the bank keeps its chips).
* If fewer than two players have chips, the one left takes the bank and the
  game ends. ``max_rounds`` caps the game; when reached the game ends as
  after the last round.
* Payoff ``win``: most chips share 1. ``chips``: final chips minus the mean.

Encoding. Player actions: ``0 swap``, ``1 new underdog``, ``2 fight``,
``3 pass``, ``4 + v - 1 keep v`` for card value ``v`` in ``1..cards``, so
``num_distinct_actions = 4 + cards``. Chance outcomes: ``v - 1`` is card
``v`` (named ``card v``).

Events. ``UnderdogState.log()`` is the game's events in order, each a named tuple
(``typing.NamedTuple``) whose first field ``kind`` names it, with these
fields after it: ``Round(round, start, last, bank, chips)``, ``Deal(player, card)``,
``Underdog(card)``, ``Swap(player)``, ``Draw(player, card)``,
``Keep(player, kept, laid)``, ``NewUnderdog(player)``, ``Flip(player, card)``,
``Skip(player)``, ``Fight(player, stake)``, ``Pass(player)``,
``Showdown(cards)``, ``Won(player, gain)``, ``Nobody()``,
``Alone(player, bank)``. The information-state string
is their lines (``event_text``).
"""

from __future__ import annotations

from typing import NamedTuple

import pyspiel

from kibitz.games import _common, search
from kibitz.games._common import Param

SHORT_NAME = "underdog"

SWAP, NEW_UNDERDOG, FIGHT, PASS = 0, 1, 2, 3
KEEP_BASE = 4

# Phases of a round.
DEAL, DRAW, DRAWN, KEEP, FIGHTING, OVER = range(6)

# ------------------------------------------------------------------ events
# The game's log (``UnderdogState.log()``): one of these per event, in
# order. Each is a tuple whose first field is its kind; the information-state
# string has one line per event that its player sees (``event_text``; the
# lines are in the rules page). Cards are their values, 1..cards.
#
# Events are built with ``_new(Kind, (kind, field, ...))``, the tuple
# constructor NamedTuple's own ``__new__`` ends in, at half its cost (the
# rules and a search's replays build one per move).
_new = tuple.__new__


class Round(NamedTuple):
    """``[round R start pS bank B chips ...]``: a round begins (``last``: the
    last round), with the bank and every seat's chips at its start."""
    kind: str  # "round"
    round: int
    start: int
    last: bool
    bank: int
    chips: tuple


class Deal(NamedTuple):
    """``you are dealt V``: ``card`` dealt to ``player``."""
    kind: str  # "deal"
    player: int
    card: int


class Underdog(NamedTuple):
    """``underdog V``: the round's first underdog card."""
    kind: str  # "underdog"
    card: int


class Swap(NamedTuple):
    """``pS swaps``."""
    kind: str  # "swap"
    player: int


class Draw(NamedTuple):
    """``you draw V``: the card ``player`` drew to swap with."""
    kind: str  # "draw"
    player: int
    card: int


class Keep(NamedTuple):
    """``you keep K, lay L`` / ``pS lays L``: after a swap, ``player`` keeps
    ``kept`` and lays ``laid`` face up."""
    kind: str  # "keep"
    player: int
    kept: int
    laid: int


class NewUnderdog(NamedTuple):
    """``pS new underdog``: ``player`` chose a new underdog card (``Flip``)."""
    kind: str  # "new"
    player: int


class Flip(NamedTuple):
    """``underdog V``: the new underdog card ``player`` turned."""
    kind: str  # "flip"
    player: int
    card: int


class Skip(NamedTuple):
    """``pS skips (pile empty)``."""
    kind: str  # "skip"
    player: int


class Fight(NamedTuple):
    """``pS fights (X)``: ``player`` fights for ``stake`` chips."""
    kind: str  # "fight"
    player: int
    stake: int


class Pass(NamedTuple):
    """``pS passes``."""
    kind: str  # "pass"
    player: int


class Showdown(NamedTuple):
    """``showdown pS:V pT:W``: (seat, card) of each fighter, in turn order."""
    kind: str  # "show"
    cards: tuple


class Won(NamedTuple):
    """``pS wins G``: ``player`` won the round and ``gain`` chips."""
    kind: str  # "won"
    player: int
    gain: int


class Nobody(NamedTuple):
    """``nobody fights``."""
    kind: str  # "nobody"


class Alone(NamedTuple):
    """``pS alone takes the bank (B)``: the last player with chips."""
    kind: str  # "alone"
    player: int
    bank: int


PARAMS = (
    Param("players", 4, "number of players", "3..6", low=3, high=6),
    Param("cards", 13, "cards in the deck, valued 1..cards (15 is the variant)",
          "players+2..15", low=lambda v: v["players"] + 2, high=15),
    Param("chips", 4, "chips each player starts with", "1..50", low=1, high=50),
    Param("bank", 8, "chips in the bank at the start", "1..50", low=1, high=50),
    Param("last_round_stake", 2,
          "bank size that makes a round the last one, and the fight cost in it",
          "1..10", low=1, high=10),
    Param("max_rounds", 30, "cap on the number of rounds", "1..200", low=1, high=200),
    Param("payoff", "win", "win: most chips share 1; chips: chips minus the mean",
          "win, chips", choices=("win", "chips")),
)

SPEC = _common.GameSpec(
    short_name=SHORT_NAME,
    long_name="Underdog",
    summary="13 cards: swap or flip the underdog card, then fight or pass.",
    params=PARAMS,
    small="underdog(players=3,cards=5,bank=2)",
    search=frozenset({search.DIRECT, search.SNAPSHOT, search.ROUNDS, search.VIEWS, search.COMPILED}),
)

_GAME_TYPE = _common.game_type(SHORT_NAME, "Underdog", PARAMS, min_players=3, max_players=6)


def card_name(v: int) -> str:
    return f"card {v}"


class UnderdogGame(pyspiel.Game):
    """Underdog with validated parameters; sizes follow the parameters."""

    def __init__(self, params=None):
        p = _common.read_params(SHORT_NAME, PARAMS, params)
        n, cards = p["players"], p["cards"]
        self.num_seats = n
        self.num_cards = cards
        self.start_chips = p["chips"]
        self.start_bank = p["bank"]
        self.last_round_stake = p["last_round_stake"]
        self.max_rounds = p["max_rounds"]
        self.payoff = p["payoff"]
        total = n * p["chips"] + p["bank"]
        if self.payoff == "win":
            utility = pyspiel.GameType.Utility.CONSTANT_SUM
            lo, hi, total_u = 0.0, 1.0, 1.0
        else:
            utility = pyspiel.GameType.Utility.ZERO_SUM
            lo, hi, total_u = -total / n, total - total / n, 0.0
        game_type = _common.game_type(SHORT_NAME, "Underdog", PARAMS,
                                      min_players=3, max_players=6, utility=utility)
        info = pyspiel.GameInfo(
            num_distinct_actions=KEEP_BASE + cards,
            max_chance_outcomes=cards,
            num_players=n,
            min_utility=lo,
            max_utility=hi,
            utility_sum=total_u,
            # per round: n deals + underdog, at most 3 moves each in the
            # draw step (choice, chance, keep) and one each in the fight step.
            max_game_length=self.max_rounds * (5 * n + 1),
        )
        super().__init__(game_type, info, p)

    def new_initial_state(self):
        return UnderdogState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        return UnderdogObserver(iig_obs_type, self, params)

    def compiled_rules(self):
        """The rules compiled for the tree compiler (``search.COMPILED``: games/_underdog_rules.py)."""
        from kibitz.games import _underdog_rules
        return _underdog_rules.compiled_rules(self)


class _Core(_common.SlotsState):
    """All mutable state of a game in one object that copies cheaply
    (``_common.SlotsState``: its lists hold only ints and tuples)."""

    __slots__ = ("chips", "bank", "rnd", "start", "last", "phase", "order", "deal_order",
                 "pos", "used", "npile", "hand", "drawn", "laid", "underdog", "fighters",
                 "stakes", "log", "winner")
    COPIED = ("chips", "hand", "laid", "fighters", "stakes", "log")


class UnderdogState(_common.CoreSnapshots, pyspiel.State):
    """A game of Underdog; rules only (encoding lives in the observer)."""

    def __init__(self, game):
        super().__init__(game)
        n = game.num_seats
        c = _Core()
        c.chips = [game.start_chips] * n
        c.bank = game.start_bank
        c.rnd = 0
        c.start = 0
        c.last = False
        c.log = []
        c.winner = -1
        self._c = c
        self._n = n
        self._cards = game.num_cards
        self._new_round()

    # ---------------------------------------------------------------- rules
    def _new_round(self):
        c, g = self._c, self.get_game()
        n = self._n
        c.rnd += 1
        c.last = c.bank <= g.last_round_stake
        c.order = tuple((c.start + i) % n for i in range(n) if c.chips[(c.start + i) % n] > 0)
        c.deal_order = tuple(sorted(c.order))
        c.phase = DEAL
        c.pos = 0
        c.used = 0
        c.npile = self._cards
        c.hand = [0] * n
        c.laid = [0] * n
        c.drawn = 0
        c.underdog = 0
        c.fighters = []
        c.stakes = []
        c.log.append(_new(Round, ("round", c.rnd, c.start, c.last, c.bank, tuple(c.chips))))

    def current_player(self):
        ph = self._c.phase
        if ph == OVER:
            return pyspiel.PlayerId.TERMINAL
        if ph == DEAL or ph == DRAWN:
            return pyspiel.PlayerId.CHANCE
        return self._c.order[self._c.pos]

    def _legal_actions(self, player):
        c = self._c
        if c.phase == DRAW:
            return [SWAP, NEW_UNDERDOG]
        if c.phase == KEEP:
            a, b = sorted((c.hand[player], c.drawn))
            return [KEEP_BASE + a - 1, KEEP_BASE + b - 1]
        if c.phase == FIGHTING:
            return [FIGHT, PASS]
        return []

    def chance_outcomes(self):
        c = self._c
        p = 1.0 / c.npile
        used = c.used
        return [(v - 1, p) for v in range(1, self._cards + 1) if not used >> v & 1]

    def _apply_action(self, action):
        c = self._c
        ph = c.phase
        if ph == OVER:
            raise _common.illegal(self, action, [], "the game is over")
        if ph == DEAL or ph == DRAWN:
            v = action + 1
            if not 1 <= v <= self._cards or c.used >> v & 1:
                raise _common.illegal(self, action, [o for o, _ in self.chance_outcomes()],
                                      "that card is not in the draw pile")
            c.used |= 1 << v
            c.npile -= 1
            if ph == DEAL:
                self._deal(v)
            else:
                self._drawn(v)
            return
        legal = self._legal_actions(c.order[c.pos])
        if action not in legal:
            raise _common.illegal(self, action, legal, _STEP_WHY[ph])
        seat = c.order[c.pos]
        if ph == DRAW:
            c.log.append(_new(Swap, ("swap", seat)) if action == SWAP else _new(NewUnderdog, ("new", seat)))
            c.drawn = -1 if action == SWAP else -2  # which draw the chance node serves
            c.phase = DRAWN
        elif ph == KEEP:
            kept = action - KEEP_BASE + 1
            laid = c.drawn if kept == c.hand[seat] else c.hand[seat]
            c.hand[seat] = kept
            c.laid[seat] = laid
            c.drawn = 0
            c.log.append(_new(Keep, ("keep", seat, kept, laid)))
            self._next_drawer()
        else:
            if action == FIGHT:
                stake = min(self.get_game().last_round_stake, c.chips[seat]) if c.last else 1
                c.chips[seat] -= stake
                c.fighters.append(seat)
                c.stakes.append(stake)
                c.log.append(_new(Fight, ("fight", seat, stake)))
            else:
                c.log.append(_new(Pass, ("pass", seat)))
            c.pos += 1
            if c.pos == len(c.order):
                self._showdown()

    def _deal(self, v):
        c = self._c
        if c.pos < len(c.deal_order):
            seat = c.deal_order[c.pos]
            c.hand[seat] = v
            c.log.append(_new(Deal, ("deal", seat, v)))
            c.pos += 1
        else:
            c.underdog = v
            c.log.append(_new(Underdog, ("underdog", v)))
            c.phase = DRAW
            c.pos = -1
            self._next_drawer()

    def _drawn(self, v):
        c = self._c
        seat = c.order[c.pos]
        if c.drawn == -1:  # a swap: the player now chooses which card to keep
            c.drawn = v
            c.log.append(_new(Draw, ("draw", seat, v)))
            c.phase = KEEP
        else:
            c.drawn = 0
            c.underdog = v
            c.log.append(_new(Flip, ("flip", seat, v)))
            self._next_drawer()

    def _next_drawer(self):
        """Moves to the next player in the draw step, or to the fight step."""
        c = self._c
        c.pos += 1
        if c.pos < len(c.order) and c.npile == 0:
            for seat in c.order[c.pos:]:
                c.log.append(_new(Skip, ("skip", seat)))
            c.pos = len(c.order)
        if c.pos < len(c.order):
            c.phase = DRAW
        else:
            c.phase = FIGHTING
            c.pos = 0

    def _showdown(self):
        c, g = self._c, self.get_game()
        fighters = c.fighters
        winner = -1
        if len(fighters) == 1:
            winner = fighters[0]
        elif fighters:
            cards = [c.hand[s] for s in fighters]
            low = min(cards)
            totals = [v + c.underdog if v == low else v for v in cards]
            best = max(totals)
            winner = fighters[totals.index(best)]  # fighters are in turn order
            c.log.append(_new(Showdown, ("show", tuple(zip(fighters, cards)))))
        if winner >= 0:
            prize = c.bank if c.last else min(1, c.bank)
            c.bank -= prize
            gain = sum(c.stakes) + prize
            c.chips[winner] += gain
            c.start = winner
            c.log.append(_new(Won, ("won", winner, gain)))
        else:
            c.log.append(_new(Nobody, ("nobody",)))
        alive = [s for s in range(self._n) if c.chips[s] > 0]
        if len(alive) < 2:
            c.chips[alive[0]] += c.bank
            c.log.append(_new(Alone, ("alone", alive[0], c.bank)))
            c.bank = 0
            c.phase = OVER
        elif c.last or c.rnd >= g.max_rounds:
            c.phase = OVER
        else:
            self._new_round()

    def is_terminal(self):
        return self._c.phase == OVER

    def returns(self):
        if self._c.phase != OVER:
            return [0.0] * self._n
        return self.standing()

    # ----------------------------------- search contract (kibitz.games.search)
    def log_mark(self):
        return len(self._c.log)

    def round_mark(self):
        """The log index of the current round's "round" event."""
        log = self._c.log
        i = len(log) - 1
        while log[i].kind != "round":
            i -= 1
        return i

    def view_since(self, player, mark):
        """What ``player`` saw since ``mark`` (``_common.view_since``)."""
        return _common.view_since(self._c.log, mark, lambda e: event_text(e, player))

    def round_number(self):
        """Rounds begun so far (IS-MCTS ``rollout_rounds`` stops at a new one)."""
        return self._c.rnd

    def standing(self):
        """What a round-limited rollout backs up: the returns at the end; before
        it, with ``payoff=win``, each player's share of the chips players hold
        (the chance to win of a player with that share when the rest of the
        game is fair, even bets: chip counts are then a martingale); with
        ``payoff=chips``, the returns if the game ended now."""
        c = self._c
        if self.get_game().payoff == "win":
            total = sum(c.chips)
            if c.phase == OVER or not total:
                return _common.win_shares(c.chips)
            return [x / total for x in c.chips]
        mean = sum(c.chips) / self._n
        return [x - mean for x in c.chips]

    # ---------------------------------------------------------- read-only API
    @property
    def chips(self):
        return tuple(self._c.chips)

    @property
    def bank(self):
        return self._c.bank

    @property
    def round(self):
        return self._c.rnd

    @property
    def start_player(self):
        return self._c.start

    @property
    def underdog(self):
        return self._c.underdog

    @property
    def hands(self):
        return tuple(self._c.hand)

    @property
    def face_up(self):
        return tuple(self._c.laid)

    @property
    def is_last_round(self):
        return self._c.last

    @property
    def fighters(self):
        return tuple(self._c.fighters)

    def log(self):
        """The game's events, in order: the named tuples of the module docstring."""
        return tuple(self._c.log)

    def _action_to_string(self, player, action):
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

    def __str__(self):
        c = self._c
        lines = [f"round {c.rnd}{' (last round)' if c.last else ''}, bank {c.bank}, "
                 f"start player {c.start}, underdog {c.underdog or '-'}"]
        fighting = dict(zip(c.fighters, c.stakes))
        for s in range(self._n):
            bits = [f"p{s}: chips {c.chips[s]}"]
            if c.hand[s]:
                bits.append(f"card {c.hand[s]}")
            elif c.chips[s] == 0 and s not in fighting:
                bits.append("out")
            if c.laid[s]:
                bits.append(f"face up {c.laid[s]}")
            if s in fighting:
                bits.append(f"fights ({fighting[s]})")
            lines.append(", ".join(bits))
        if c.phase == OVER:
            lines.append("game over: returns " + " ".join(f"{r:g}" for r in self.returns()))
        return "\n".join(lines)

    # ------------------------------------------------------------ resampling
    def resample_from_infostate(self, player_id, probability_sampler, internal=False, check=None):
        """A state drawn from ``player_id``'s information state.

        Other players' unrevealed cards, and which of a swapper's two cards
        was dealt and which drawn, are drawn uniformly among the assignments
        consistent with what the player has seen. Every consistent history
        has the same chance probability, so this is exact with respect to
        chance (opponents' strategies are not modelled).

        With ``internal=True`` (kibitz's own searches only) the actions are
        replayed through the game's Python rules directly, so the returned
        state's pyspiel history is not kept; use it only inside a search.
        ``check(state, player, action)`` is called before each other
        player's move of the replay and may raise to abandon it
        (``_common.replay_applier``); an internal replay replays only the
        current round (earlier rounds are rebuilt from the log), so only its
        moves are checked.
        """
        log = self._c.log
        new_log = []
        start = 0
        while start < len(log):
            end = start + 1
            while end < len(log) and log[end].kind != "round":
                end += 1
            current = len(new_log)
            new_log.extend(self._resample_round(log[start:end], player_id, probability_sampler))
            start = end
        if not internal:
            return self._replay(new_log, internal, player_id, check)
        # A round starts from what its "round" event records (chips, bank,
        # start player, round number), so the search's copy is rebuilt there
        # and only the current round is replayed: the same state as a full
        # replay (the earlier rounds' re-drawn cards are in its log), without
        # replaying them.
        state = self.get_game().new_initial_state()
        begun = new_log[current]
        c = state._c
        c.chips, c.bank, c.start = list(begun.chips), begun.bank, begun.start
        c.rnd, c.log = begun.round - 1, new_log[:current]
        state._new_round()
        return self._replay(new_log[current + 1:], internal, player_id, check, state)

    def _resample_round(self, events, me, sampler):
        def pick(seq):
            i = min(int(sampler() * len(seq)), len(seq) - 1)
            return seq[i]

        known = set()
        dealt, drawn, kept, laid, shown = {}, {}, {}, {}, {}
        for e in events:
            kind = e.kind
            if kind in ("underdog", "flip"):
                known.add(e.card)
            elif kind == "deal":
                dealt[e.player] = e.card
            elif kind == "draw":
                drawn[e.player] = e.card
            elif kind == "keep":
                kept[e.player], laid[e.player] = e.kept, e.laid
                known.add(e.laid)
            elif kind == "show":
                for seat, v in e.cards:
                    shown[seat] = v
                    known.add(v)
        if me in dealt:
            known.add(dealt[me])
        if me in drawn:
            known.add(drawn[me])
        pool = [v for v in range(1, self._cards + 1) if v not in known]
        # New values for every other seat's hidden cards.
        sub_dealt, sub_drawn, sub_kept = {}, {}, {}
        for seat in dealt:
            if seat == me:
                continue
            if seat in kept:  # swapped and chose: {dealt, drawn} == {kept, laid}
                k = shown.get(seat)
                if k is None:
                    k = pick(pool)
                    pool.remove(k)
                sub_kept[seat] = k
                if pick((0, 1)):
                    sub_dealt[seat], sub_drawn[seat] = laid[seat], k
                else:
                    sub_dealt[seat], sub_drawn[seat] = k, laid[seat]
            elif seat in drawn:  # swapped, still choosing: both cards hidden
                d = pick(pool)
                pool.remove(d)
                x = pick(pool)
                pool.remove(x)
                sub_dealt[seat], sub_drawn[seat] = d, x
            else:
                d = shown.get(seat)
                if d is None:
                    d = pick(pool)
                    pool.remove(d)
                sub_dealt[seat] = d
        out = []
        for e in events:
            kind = e.kind
            if kind == "deal" and e.player in sub_dealt:
                e = _new(Deal, ("deal", e.player, sub_dealt[e.player]))
            elif kind == "draw" and e.player in sub_drawn:
                e = _new(Draw, ("draw", e.player, sub_drawn[e.player]))
            elif kind == "keep" and e.player in sub_kept:
                e = _new(Keep, ("keep", e.player, sub_kept[e.player], laid[e.player]))
            out.append(e)
        return out

    def _replay(self, events, internal=False, observer=-1, check=None, state=None):
        """Replays a log's actions on a new game (or on ``state``); each action is checked."""
        if state is None:
            state = self.get_game().new_initial_state()
        apply = _common.replay_applier(state, internal, observer, check)
        for e in events:
            kind = e.kind
            if kind in ("deal", "draw", "underdog", "flip"):
                apply(e.card - 1)
            elif kind == "swap":
                apply(SWAP)
            elif kind == "new":
                apply(NEW_UNDERDOG)
            elif kind == "keep":
                apply(KEEP_BASE + e.kept - 1)
            elif kind == "fight":
                apply(FIGHT)
            elif kind == "pass":
                apply(PASS)
        return state


def event_text(e, me: int) -> str | None:
    """One log event as ``me`` sees it, or None if ``me`` sees nothing of it."""
    kind = e.kind
    if kind == "round":
        return (f"[round {e.round}{' last' if e.last else ''} start p{e.start} bank {e.bank} "
                f"chips {' '.join(map(str, e.chips))}]")
    if kind == "deal":
        return f"you are dealt {e.card}" if e.player == me else None
    if kind == "underdog":
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
    if kind == "flip":
        return f"underdog {e.card}"
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


# the events marked in the block of the seat that moved (UnderdogObserver)
_SEAT_MOVES = frozenset({"swap", "new", "skip", "keep", "flip", "fight", "pass"})


class UnderdogObserver(_common.Observer):
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

    Observation (current round only)::

        observer n | to_move n+1 (last: chance/none) | own_card C |
        drawn C (the swapper's drawn card while it chooses) |
        underdog C | laid n*C | chips n | bank 1 | fight n | pass n |
        shown n*C | last 1 | pile 1 | phase 6
    """

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
        for e in state._c.log:
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

    def _set_current(self, state, me):
        c, d, n = state._c, self.dict, self.n
        cur = state.current_player()
        d["to_move"][cur if 0 <= cur < n else n] = 1
        if self.private and c.hand[me]:
            d["own_card"][c.hand[me] - 1] = 1
        if self.private and c.phase == KEEP and c.order[c.pos] == me:
            d["drawn"][c.drawn - 1] = 1
        if c.underdog:
            d["underdog"][c.underdog - 1] = 1
        for s in range(n):
            if c.laid[s]:
                d["laid"][s, c.laid[s] - 1] = 1
        d["chips"][:] = c.chips
        d["bank"][0] = c.bank
        for s in c.fighters:
            d["fight"][s] = 1
        for s in _passed(c):
            d["pass"][s] = 1
        for s, v in _shown(c):
            d["shown"][s, v - 1] = 1
        d["last"][0] = 1 if c.last else 0
        d["pile"][0] = c.npile
        d["phase"][c.phase] = 1

    def string_from(self, state, player):
        c = state._c
        if self.perfect_recall:
            parts = [f"p{player}"]
            for e in c.log:
                if not self.private and e.kind in ("deal", "draw"):
                    continue
                t = event_text(e, player if self.private else -1)
                if t is not None:
                    parts.append(t)
            return "\n".join(parts)
        bits = [f"p{player}", f"round {c.rnd}{' last' if c.last else ''}", f"bank {c.bank}",
                "chips " + " ".join(map(str, c.chips))]
        if self.private and c.hand[player]:
            bits.append(f"card {c.hand[player]}")
        if self.private and c.phase == KEEP and c.order[c.pos] == player:
            bits.append(f"drawn {c.drawn}")
        bits.append(f"underdog {c.underdog or '-'}")
        laid = [f"p{s}:{v}" for s, v in enumerate(c.laid) if v]
        if laid:
            bits.append("face up " + " ".join(laid))
        if c.fighters:
            bits.append("fighting " + " ".join(f"p{s}" for s in c.fighters))
        passed = _passed(c)
        if passed:
            bits.append("passing " + " ".join(f"p{s}" for s in passed))
        shown = _shown(c)
        if shown:
            bits.append("showdown " + " ".join(f"p{s}:{v}" for s, v in shown))
        bits.append(f"pile {c.npile}")
        if c.phase == OVER:
            bits.append("game over")
        else:
            cur = state.current_player()
            bits.append(f"to move {f'p{cur}' if cur >= 0 else 'chance'} ({_STEP_NAMES[c.phase]})")
        return " | ".join(bits)


#: why a player's move is illegal in each phase (the legal ones follow)
_STEP_WHY = {DRAW: "it is the draw step", KEEP: "after a swap, keep one of the two cards held",
             FIGHTING: "it is the fight step"}

#: what the observation string's last field says of each phase
_STEP_NAMES = ("deal", "draw step", "card drawn", "keep", "fight step", "over")


def _passed(c):
    """The seats that passed in this round's fight step so far, in turn order."""
    if c.phase not in (FIGHTING, OVER):
        return ()
    decided = c.order[:c.pos] if c.phase == FIGHTING else c.order
    return tuple(s for s in decided if s not in c.fighters)


def _shown(c):
    """(seat, card) of each fighter shown in this round's showdown, or ():
    only the last round's can be seen (any other is followed at once by a
    new round)."""
    for e in reversed(c.log):
        if e.kind == "show":
            return e.cards
        if e.kind == "round":
            return ()
    return ()


_common.register(SPEC, _GAME_TYPE, UnderdogGame)
