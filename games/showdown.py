"""Showdown: one card each, one betting round (Kuhn poker for two players, three cards).

Implements the rules page ``docs/rules/showdown.md``. The rules are written
once, as compiled functions on an array position (``_showdown_rules``);
this module declares the parameters and the game and plays those functions
through the generic pyspiel adapter (``kibitz.games.adapter``); the
strings and the observer are in ``_showdown_strings``. It is kibitz's
fifth game and the example of docs/adding-a-game.md: nothing outside
these three modules knows it.

Rules. ``players`` seats (2..4) each ante 1 chip and are dealt one card,
seat by seat from seat 0 (chance: each card not yet dealt with the same
probability), from ``cards`` cards valued 1..cards. Then from seat 0 in
turn each player checks or bets 1 chip while nobody has bet; once a player
has bet, every other player, in turn from the bettor's left and round to
those before it, calls (1 chip) or folds, once. At the end the players who
did not fold show their cards (when two or more are left) and the highest
card takes the pot. Returns are chips won minus chips paid (zero-sum).
With ``players=2, cards=3`` this is exactly OpenSpiel's ``kuhn_poker``
(and with ``cards=players+1``, ``kuhn_poker(players=N)``).

Rulings that are our own (also in the rules page): a lone player left
after every other folded shows nothing; the deck may hold more cards than
Kuhn's ``players + 1`` (up to 13).

Encoding. Chance outcome ``c`` is the card valued ``c + 1`` (``card 3``).
Player actions: ``0`` pass (named ``check`` while nobody has bet, ``fold``
after a bet) and ``1`` bet (``bet``, then ``call``), as Kuhn's pass/bet;
``num_distinct_actions = 2``, ``max_chance_outcomes = cards``,
``max_game_length = 3 * players - 1`` (the deal, every seat checking but
the last, which bets, and the others answering). Utilities from -2 to
``2 * (players - 1)``.

Information state: lines ``p{player}``, ``card 2`` (own card), one line per
move (``p0 check``, ``p1 bet``, ``p0 call``) and at the end ``showdown p0 2,
p1 3``. Observation string: ``p0 | card 2 | paid 1 2 | bettor p1 | folded
- | to move p0`` (at the end ``over`` and the showdown). Tensors
(:class:`~kibitz.games._showdown_strings.ShowdownObserver`), with n
players, C cards, M = 2n - 1::

    information state: observer n | own_card C | moves M x 2 | shown n x C
    observation:       observer n | to_move n+1 | own_card C | paid n |
                       bettor n | folded n | shown n x C
"""

from __future__ import annotations

import pyspiel

from kibitz.games import _common, _showdown_rules, _showdown_strings, adapter, search
from kibitz.games._common import Param
from kibitz.games._showdown_rules import BET, BETTOR, DECK, PASS
from kibitz.games._showdown_strings import ShowdownObserver

__all__ = ["BET", "PARAMS", "PASS", "SHORT_NAME", "SPEC", "ShowdownGame", "ShowdownObserver", "ShowdownState"]

SHORT_NAME = "showdown"
LONG_NAME = "Showdown"

PARAMS = (
    Param("players", 2, "number of players", "2..4", low=2, high=4),
    Param("cards", 3, "cards in the deck, valued 1..cards", "players+1..13",
          low=lambda v: v["players"] + 1, high=13),
)

SPEC = _common.GameSpec(
    short_name=SHORT_NAME,
    long_name=LONG_NAME,
    summary="One card each, one round of betting: bet, call or fold; the highest card takes the pot.",
    params=PARAMS,
    small="showdown",
    search=frozenset({search.DIRECT, search.SNAPSHOT, search.COMPILED}),
)

_GAME_TYPE = _common.game_type(SHORT_NAME, LONG_NAME, PARAMS, min_players=2, max_players=4,
                               utility=pyspiel.GameType.Utility.ZERO_SUM)


class ShowdownGame(adapter.Game):
    """Showdown with validated parameters; sizes follow the parameters."""

    def __init__(self, params=None):
        p = _common.read_params(SHORT_NAME, PARAMS, params)
        n = self.num_seats = p["players"]
        self.num_cards = p["cards"]
        info = pyspiel.GameInfo(
            num_distinct_actions=2,
            max_chance_outcomes=self.num_cards,
            num_players=n,
            min_utility=-2.0,
            max_utility=2.0 * (n - 1),
            utility_sum=0.0,
            max_game_length=n + _showdown_rules.max_moves(n),
        )
        super().__init__(_GAME_TYPE, info, p)

    def compiled_rules(self):
        """The rules (``search.COMPILED``: games/_showdown_rules.py)."""
        return _showdown_rules.compiled_rules(self)


class ShowdownState(adapter.State):
    """A game of showdown on the compiled rules (the position is the whole history)."""

    def _why_illegal(self):
        return _showdown_strings.why_illegal(self._c.s.tolist())

    def _action_to_string(self, player, action):
        return _showdown_strings.action_name(self._c.s.tolist(), player, action)

    def __str__(self):
        c = self._c
        return _showdown_strings.state_string(c.s.tolist(), c.game.num_seats, self.returns())

    # ---------------------------------------------------------- read-only API
    @property
    def cards(self):
        """Every seat's card value (private: an agent reads only its own); 0 before it is dealt."""
        c = self._c
        return tuple(_showdown_strings.cards_of(c.s.tolist(), c.game.num_seats))

    @property
    def paid(self):
        """The chips each seat has put in."""
        c = self._c
        return tuple(_showdown_strings.paid_of(c.s.tolist(), c.game.num_seats))

    @property
    def bettor(self):
        """The seat that bet, or -1."""
        return int(self._c.s[BETTOR])

    @property
    def folded(self):
        c = self._c
        return tuple(_showdown_strings.folded_of(c.s.tolist(), c.game.num_seats))

    @property
    def moves(self):
        """The players' moves so far, ``(seat, action, name)`` in order."""
        c = self._c
        return tuple(_showdown_strings.moves_of(c.s.tolist(), c.game.num_seats))

    # ------------------------------------------------------------ resampling
    def resample_from_infostate(self, player_id, probability_sampler, internal=False, check=None):
        """A state drawn from ``player_id``'s information state: the cards
        it has not seen (the other seats' cards, but those shown at the
        showdown) redrawn uniformly, without replacement, from the cards it
        has not seen, and the moves replayed. Every consistent deal has the
        same chance probability, so this is exact with respect to chance.
        ``internal=True`` (kibitz's own searches) replays through
        ``_apply_action`` (no pyspiel history); ``check`` see
        ``_common.replay_applier``."""
        c = self._c
        n = c.game.num_seats
        hist = self.history()
        deal, rest = hist[:n], hist[n:]
        p = c.s.tolist()
        shown = {s for s, _ in _showdown_strings.shown_of(p, n)}
        hidden = [i for i in range(len(deal)) if i != player_id and i not in shown]
        deck = p[DECK]
        pool = sorted([x for x in range(c.game.num_cards) if deck >> x & 1] + [deal[i] for i in hidden])
        new_deal = list(deal)
        for i in hidden:
            j = min(int(probability_sampler() * len(pool)), len(pool) - 1)
            new_deal[i] = pool.pop(j)
        state = c.game.new_initial_state()
        _common.replay(state, new_deal + list(rest), internal, player_id, check)
        return state


ShowdownGame.state_class = ShowdownState
ShowdownGame.observer_class = ShowdownObserver
_common.register(SPEC, _GAME_TYPE, ShowdownGame)
