"""Underdog: 13 cards, swap or flip the underdog card, fight or pass.

Implements the rules page ``docs/rules/underdog.md``, which states the rules
and our own rulings (marked there) in our own words. The rules themselves
are written once, as compiled functions on an array position
(``_underdog_rules``); this module declares the parameters and the game,
and plays those functions through the generic pyspiel adapter
(``kibitz.games.adapter``); the events, strings and observer are in
``_underdog_strings`` (re-exported here). docs/adding-a-game.md tells how.

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

Events. ``UnderdogState.log()`` is the game's events in order, named tuples
(``Round``, ``Deal``, ``Underdog``, ``Swap``, ``Draw``, ``Keep``,
``NewUnderdog``, ``Flip``, ``Skip``, ``Fight``, ``Pass``, ``Showdown``,
``Won``, ``Nobody``, ``Alone``: their fields in ``_underdog_strings``); the
information-state string is their lines (``event_text``).
"""

from __future__ import annotations

import pyspiel

from kibitz.games import _common, _underdog_rules, _underdog_strings, adapter, search
from kibitz.games._common import Param
from kibitz.games._underdog_rules import (BANK, CHIPS, DEAL, DRAW, DRAWN, FIGHT, FIGHTING, KEEP, KEEP_BASE,
                                          NEW_UNDERDOG, ORDER, OVER, PASS, ROUND, START, SWAP)
# the compiled position's places (``state.position()``, ``BatchedEnv.pos``;
# the layout is _underdog_rules' docstring), for code that reads positions
from kibitz.games._underdog_rules import (DRAWN_CARD, FIGHTS, HAND, LAST, PHASE, POS, POT,  # noqa: F401
                                          SEATS, UNDERDOG, USED)
from kibitz.games._underdog_strings import (Alone, Deal, Draw, Fight, Flip, Keep, NewUnderdog, Nobody, Pass,
                                            Round, Showdown, Skip, Swap, Underdog, UnderdogObserver, Won,
                                            card_name, event_text)

__all__ = ["Alone", "DEAL", "DRAW", "DRAWN", "Deal", "Draw", "FIGHT", "FIGHTING", "Fight", "Flip", "KEEP",
           "KEEP_BASE", "Keep", "NEW_UNDERDOG", "NewUnderdog", "Nobody", "OVER", "PASS", "PARAMS", "Pass", "Round",
           "SHORT_NAME", "SPEC", "SWAP", "Showdown", "Skip", "Swap", "Underdog", "UnderdogGame",
           "UnderdogObserver", "UnderdogState", "Won", "card_name", "event_text",
           "BANK", "CHIPS", "ORDER", "DRAWN_CARD", "FIGHTS", "HAND", "LAST", "PHASE", "POS", "POT", "SEATS",
           "UNDERDOG", "USED"]

SHORT_NAME = "underdog"
_new = tuple.__new__

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
    search=frozenset({search.DIRECT, search.SNAPSHOT, search.ROUNDS, search.VIEWS, search.RESAMPLE_MEMO,
                      search.COMPILED}),
)

_GAME_TYPE = _common.game_type(SHORT_NAME, "Underdog", PARAMS, min_players=3, max_players=6)




class UnderdogGame(adapter.Game):
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

    def compiled_rules(self):
        """The rules (``search.COMPILED``: games/_underdog_rules.py)."""
        return _underdog_rules.compiled_rules(self)

    def begin_log(self, log, position):
        log.append(_underdog_strings.round_event(position, self.num_seats))

    def record(self, log, before, action, after):
        _underdog_strings.record(log, before, action, after, self.rules.params, self.num_seats)


class UnderdogState(adapter.State):
    """A game of Underdog on the compiled rules; its log is the game's events."""

    def _why_illegal(self):
        return _underdog_strings.why_illegal(self._c.s)

    def _action_to_string(self, player, action):
        return _underdog_strings.action_name(player, action)

    def __str__(self):
        c = self._c
        return _underdog_strings.state_string(c.s.tolist(), c.game.num_seats, c.log(), self.returns())

    def _start_round(self, s, begun, log):
        """Makes this state (a search's own) the start of the round whose
        "round" event is ``begun``, the last of ``log``, in a game whose
        position is ``s`` in that round: the places no rule reads (the turn
        and deal orders past the round's seats) are kept from ``s``."""
        c = self._c
        n = c.game.num_seats
        s = s.copy()
        s[ORDER + CHIPS * n:ORDER + (CHIPS + 1) * n] = begun.chips
        s[BANK], s[START], s[ROUND] = begun.bank, begun.start, begun.round - 1
        _underdog_rules.new_round(s, c.rules.params)
        self._set_position(s, log)

    # ----------------------------------- search contract (kibitz.games.search)
    def round_mark(self):
        """The log index of the current round's "round" event."""
        log = self._c.log()
        return len(log) - len(_underdog_strings.round_events(log))

    def _event_text(self, event, player):
        return event_text(event, player)

    def round_number(self):
        """Rounds begun so far (IS-MCTS ``rollout_rounds`` stops at a new one)."""
        return int(self._c.s[ROUND])

    def standing(self):
        """What a round-limited rollout backs up: the returns at the end; before
        it, with ``payoff=win``, each player's share of the chips players hold
        (the chance to win of a player with that share when the rest of the
        game is fair, even bets: chip counts are then a martingale); with
        ``payoff=chips``, the returns if the game ended now."""
        if self.is_terminal():
            return self.returns()
        chips = self.chips
        total = sum(chips)
        if self._c.game.payoff == "chips":
            return [x - total / len(chips) for x in chips]
        return [x / total for x in chips] if total else _common.win_shares(chips)

    # ---------------------------------------------------------- read-only API
    def _seats(self):
        return _underdog_strings.Seats.of(self._c.s.tolist(), self._c.game.num_seats)

    @property
    def chips(self):
        return tuple(self._seats().chips)

    @property
    def bank(self):
        return int(self._c.s[BANK])

    @property
    def round(self):
        return int(self._c.s[ROUND])

    @property
    def start_player(self):
        return int(self._c.s[START])

    @property
    def underdog(self):
        return int(self._c.s[_underdog_rules.UNDERDOG])

    @property
    def hands(self):
        return tuple(self._seats().hand)

    @property
    def face_up(self):
        return tuple(self._seats().laid)

    @property
    def is_last_round(self):
        return bool(self._c.s[_underdog_rules.LAST])

    @property
    def fighters(self):
        return tuple(self._seats().fighters())

    def log(self):
        """The game's events, in order: the named tuples of ``_underdog_strings``."""
        return tuple(self._c.log())

    # ------------------------------------------------------------ resampling
    def resample_from_infostate(self, player_id, probability_sampler, internal=False, check=None, memo=None):
        """A state drawn from ``player_id``'s information state.

        Other players' unrevealed cards, and which of a swapper's two cards
        was dealt and which drawn, are drawn uniformly among the assignments
        consistent with what the player has seen. Every consistent history
        has the same chance probability, so this is exact with respect to
        chance (opponents' strategies are not modelled).

        With ``internal=True`` (kibitz's own searches only) the actions are
        replayed through ``_apply_action`` directly, so the returned state's
        pyspiel history is not kept; use it only inside a search.
        ``check(state, player, action)`` is called before each other
        player's move of the replay and may raise to abandon it
        (``_common.replay_applier``); an internal replay replays only the
        current round (earlier rounds are rebuilt from the log), so only its
        moves are checked.

        ``memo`` (internal only, capability ``RESAMPLE_MEMO``): one
        search's dict, in which the first world's earlier rounds are kept
        for the later ones, which redraw only this round. Every round is
        dealt from a full deck, so given what the player saw the earlier
        rounds' hidden cards are independent of this round's: each world
        is still an exact draw.
        """
        log = self._c.log()
        begun = self.round_mark()
        key = ("ud-earlier", player_id, begun)
        earlier = memo.get(key) if internal and memo is not None else None
        if earlier is None:
            earlier, start = [], 0
            while start < begun:
                end = start + 1
                while end < begun and log[end].kind != "round":
                    end += 1
                earlier.extend(self._resample_round(log[start:end], player_id, probability_sampler))
                start = end
            if internal and memo is not None:
                memo[key] = earlier
        current = len(earlier)
        plan = None
        if internal and memo is not None:
            plan = memo.get(("ud-round", player_id, begun, len(log)))
            if plan is None:
                plan = memo[("ud-round", player_id, begun, len(log))] = self._round_plan(log[begun:], player_id)
        new_log = earlier + self._resample_round(log[begun:], player_id, probability_sampler, plan)
        if not internal:
            return self._replay(new_log, internal, player_id, check)
        # A round starts from what its "round" event records (chips, bank,
        # start player, round number), so the search's copy is rebuilt there
        # and only the current round is replayed: the same state as a full
        # replay (the earlier rounds' re-drawn cards are in its log), without
        # replaying them.
        state = self.get_game().new_initial_state()
        state._start_round(self._c.s, new_log[current], new_log[:current + 1])
        return self._replay(new_log[current + 1:], internal, player_id, check, state)

    def _resample_round(self, events, me, sampler, plan=None):
        """``events`` (one round's) with every card ``me`` has not seen drawn
        again with ``sampler``; ``plan``: :meth:`_round_plan` of them, when
        the caller keeps it."""
        def pick(seq):
            i = min(int(sampler() * len(seq)), len(seq) - 1)
            return seq[i]

        pool, cases, slots = plan or self._round_plan(events, me)
        pool = list(pool)
        # New values for every other seat's hidden cards.
        sub = {}  # (event kind, seat) -> the card that event now has
        for seat, case, seen, laid in cases:
            if case == _KEPT:  # swapped and chose: {dealt, drawn} == {kept, laid}
                k = seen
                if k is None:
                    k = pick(pool)
                    pool.remove(k)
                sub["keep", seat] = k
                if pick((0, 1)):
                    sub["deal", seat], sub["draw", seat] = laid, k
                else:
                    sub["deal", seat], sub["draw", seat] = k, laid
            elif case == _CHOOSING:  # swapped, still choosing: both cards hidden
                d = pick(pool)
                pool.remove(d)
                x = pick(pool)
                pool.remove(x)
                sub["deal", seat], sub["draw", seat] = d, x
            else:
                d = seen
                if d is None:
                    d = pick(pool)
                    pool.remove(d)
                sub["deal", seat] = d
        out = list(events)
        for i, kind, seat in slots:
            card = sub.get((kind, seat))
            if card is not None:
                e = events[i]
                out[i] = (_new(Deal, ("deal", seat, card)) if kind == "deal" else
                          _new(Draw, ("draw", seat, card)) if kind == "draw" else
                          _new(Keep, ("keep", seat, card, e.laid)))
        return out

    def _round_plan(self, events, me):
        """What every redraw of one round's ``events`` for ``me`` shares:
        the cards ``me`` has not seen (sorted), each other dealt seat's case
        (``(seat, _KEPT | _CHOOSING | _DEALT, its card shown at a showdown
        or None, the card it laid)``, in the order dealt) and the places of
        the events whose card a redraw may change."""
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
        pool = tuple(v for v in range(1, self._c.game.num_cards + 1) if v not in known)
        cases = tuple((seat, _KEPT, shown.get(seat), laid[seat]) if seat in kept else
                      (seat, _CHOOSING, None, None) if seat in drawn else (seat, _DEALT, shown.get(seat), None)
                      for seat in dealt if seat != me)
        slots = tuple((i, e.kind, e.player) for i, e in enumerate(events)
                      if e.kind in ("deal", "draw", "keep") and e.player != me)
        return pool, cases, slots

    def _replay(self, events, internal=False, observer=-1, check=None, state=None):
        """Replays a log's actions on a new game (or on ``state``), as
        ``_common.replay`` plays them."""
        if state is None:
            state = self.get_game().new_initial_state()
        actions = []
        for e in events:
            kind = e.kind
            if kind in ("deal", "draw", "underdog", "flip"):
                actions.append(e.card - 1)
            elif kind in _FIXED_ACTIONS:
                actions.append(_FIXED_ACTIONS[kind])
            elif kind == "keep":
                actions.append(KEEP_BASE + e.kept - 1)
        _common.replay(state, actions, internal, observer, check)
        return state


#: a seat's case in a round's redraw (UnderdogState._round_plan): swapped and
#: chose which card to keep; swapped and still choosing; dealt only
_KEPT, _CHOOSING, _DEALT = 0, 1, 2

#: the action of each event that is always the same move
_FIXED_ACTIONS = {"swap": SWAP, "new": NEW_UNDERDOG, "fight": FIGHT, "pass": PASS}


UnderdogGame.state_class = UnderdogState
UnderdogGame.observer_class = UnderdogObserver
_common.register(SPEC, _GAME_TYPE, UnderdogGame)
