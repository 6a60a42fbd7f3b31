"""A pyspiel game over a game's compiled rules: the rules written once.

A kibitz game's rules are numba functions on a position held in one
``int64`` array (:class:`kibitz.games.search.CompiledRules`: ``kind``,
``legal``, ``outcomes``, ``apply``, ``returns``, ``observation``). This
module turns them into a ``pyspiel.Game`` and ``pyspiel.State`` that every
OpenSpiel algorithm and every part of kibitz plays through the pyspiel
API; what is left to write for a game is its parameters and its strings
(docs/adding-a-game.md).

* :class:`Game`: a game class sets ``state_class`` and ``observer_class``
  and implements ``compiled_rules()``; the game's states play on
  ``game.rules`` (compiled once, when the game is made). If the game's
  strings read a log (what happened, move by move), the game writes it:
  ``begin_log(log, position)`` and ``record(log, before, action, after)``
  append to ``log`` from positions (as lists) alone.
* :class:`State`: the position, the player to move (``kind`` of the
  position, kept after every move) and the log. The pyspiel rules
  (``current_player``, ``_legal_actions``, ``chance_outcomes``,
  ``_apply_action``, ``returns``) are calls into the compiled rules; an
  illegal action raises ``_common.IllegalActionError`` naming it, the
  reason (``_why_illegal()``, the game's words) and the legal ones. A
  game's state class adds ``_action_to_string`` and ``__str__``.
* :class:`Observer`: the observation tensor (not perfect recall) is the
  compiled ``observation``; a game's observer adds the tensor layout, the
  perfect-recall tensor (``_set_history``) and the strings (``string_from``).

A move keeps only its action (and the first move after the log was last
written, a copy of the position before it); the log is written when it is
next read (``Core.log()``), replaying those moves on the compiled rules, so
a playout that reads no strings pays for no log. Cloning copies the position and the
lists (``_common.SlotsState``); snapshots (capability ``SNAPSHOT``) are the
same copies. Pickling (pyspiel's serialization) writes the position as a
tuple, the game as its string and the log written out.
"""

from __future__ import annotations

import functools
import threading

import numpy as np
import pyspiel
from numba import njit

from kibitz.games import _common
from kibitz.games.compiled_random import pick

CHANCE, TERMINAL = -1, -4  #: ``CompiledRules.kind``'s codes, pyspiel's player ids
#: what ``current_player()`` returns for each negative code (pyspiel's enum)
_PLAYER_IDS = {CHANCE: pyspiel.PlayerId.CHANCE, TERMINAL: pyspiel.PlayerId.TERMINAL}
#: the compiled functions the states call
_CALLED = ("kind", "legal", "outcomes", "apply", "returns", "observation")


class Core(_common.SlotsState):
    """What a state holds: its game and the rules it calls (shared by every
    copy), the position ``s``, the player to move ``kind`` (pyspiel's id),
    the log as far as it is written (``written``), the moves not yet in it
    (``pending``, actions played from position ``base``, an array nothing
    changes), and the legal actions or chance outcomes' actions of the
    position once asked for (``moves``; the chance outcomes with their
    probabilities in ``outcomes``; None before), ``derived``, what a
    game's state computed from the position and kept (``State._derived``;
    None before), and ``anchor``, a search world's root (``State.anchor_view``:
    ``(mark, position there, moves since it already written to the log,
    index in pending of the rest, (moves whose events are written, those
    events, the position after them))``; None when there is none). Lists
    and arrays other than ``s`` are never changed, only replaced or
    appended to (``written`` and ``pending``, which copies copy)."""

    __slots__ = ("game", "rules", "s", "kind", "written", "base", "pending", "moves", "outcomes", "derived",
                 "anchor")
    COPIED = ("s", "written", "pending")

    def log(self) -> list:
        """The game's log, written up to the last move: the pending moves
        replayed from ``base`` on the compiled rules."""
        if self.pending:
            rules, record, written = self.rules, self.game.record, self.written
            position = self.base.copy()
            after = position.tolist()
            for action in self.pending:
                before = after
                rules.apply(position, rules.params, action)
                after = position.tolist()
                record(written, before, action, after)
            if self.anchor is not None:  # the moves since the root stay known
                mark, root, carried, start, cache = self.anchor
                self.anchor = (mark, root, carried + tuple(self.pending[start:]), 0, cache)
            self.pending, self.base = [], None
        return self.written

    def anchor_moves(self) -> list:
        """The moves played since ``anchor``'s root."""
        _, _, carried, start, _ = self.anchor
        return [*carried, *self.pending[start:]] if carried else self.pending[start:]

    def since_anchor(self) -> list:
        """The events of the moves since ``anchor``'s root (the log from its
        mark on), written from the root's position, the log before it not
        written; extends the anchor's events by the moves played since the
        last call."""
        mark, root, carried, start, (done, events, position) = self.anchor
        moves = self.anchor_moves()
        if done < len(moves):
            rules, record = self.rules, self.game.record
            events, position = list(events), (root if position is None else position).copy()
            after = position.tolist()
            for action in moves[done:]:
                before = after
                rules.apply(position, rules.params, action)
                after = position.tolist()
                record(events, before, action, after)
            self.anchor = (mark, root, carried, start, (len(moves), events, position))
        return events

    def __getstate__(self):
        return {"game": str(self.game), "s": tuple(self.s.tolist()), "kind": int(self.kind),
                "log": self.log()}

    def __setstate__(self, d):
        self.game = pyspiel.load_game(d["game"])
        self.rules = self.game.rules
        self.s = np.array(d["s"], dtype=np.int64)
        self.kind = _player_id(d["kind"])
        self.written, self.base, self.pending = list(d["log"]), None, []
        self.moves = self.outcomes = self.derived = self.anchor = None


@functools.cache
def _replayer(apply):
    """``replay(s, prm, actions)``: ``apply(s, prm, a)`` for each of
    ``actions`` (int64) in one compiled loop; compiled on first use, once
    per game's ``apply``."""
    @njit(nogil=True)
    def replay(s, prm, actions):
        for i in range(actions.shape[0]):
            apply(s, prm, actions[i])
    return replay


@functools.cache
def _chance_stepper(outcomes, apply):
    """``step(s, prm, u, actions, probs)``: the chance outcome that ``u`` in
    [0, 1) draws by the inverse CDF (``kibitz.games.chance.draw`` over
    ``chance_outcomes()``, whose probabilities these are bit for bit),
    played on ``s``; returns it. Compiled on first use, once per game's
    rules."""
    @njit(nogil=True)
    def step(s, prm, u, actions, probs):
        k = outcomes(s, prm, actions, probs)
        a = actions[pick(probs, k, u)]
        apply(s, prm, a)
        return a
    return step


@functools.cache
def _tokener(token, apply):
    """``tokens(root, prm, moves, player, out)``: ``player``'s tokens
    (``CompiledRules.token``, those that are not -1) of ``moves`` played
    from position ``root`` (not changed), written to ``out``; returns their
    count. Compiled on first use, once per game's rules."""
    @njit(nogil=True)
    def tokens(root, prm, moves, player, out):
        s = root.copy()
        n = 0
        for i in range(moves.shape[0]):
            t = token(s, prm, moves[i], player)
            if t >= 0:
                out[n] = t
                n += 1
            apply(s, prm, moves[i])
        return n
    return tokens


def _player_id(kind: int):
    return kind if kind >= 0 else _PLAYER_IDS[kind]


def _entry_point(f):
    """A numba function compiled for its one signature, as its entry point;
    any other function as it is."""
    signatures = getattr(f, "signatures", ())
    return f.overloads[signatures[0]].entry_point if len(signatures) == 1 else f


#: each thread's buffers for the legal actions and chance outcomes, by size
#: (the rules write them without holding the GIL)
_LOCAL = threading.local()


def _buffers(size: int) -> tuple[np.ndarray, np.ndarray]:
    """This thread's (actions, probabilities) buffers of ``size`` entries."""
    try:
        return _LOCAL.buffers[size]
    except AttributeError:
        _LOCAL.buffers = {}
    except KeyError:
        pass
    pair = _LOCAL.buffers[size] = (np.empty(size, np.int64), np.empty(size, np.float64))
    return pair


class Game(pyspiel.Game):
    """A pyspiel game whose states play on its compiled rules ``self.rules``.

    A subclass sets ``state_class`` (a :class:`State` subclass) and
    ``observer_class`` (an :class:`Observer` subclass), implements
    ``compiled_rules()`` (a new :class:`~kibitz.games.search.CompiledRules`
    of this game's parameters) and, if it keeps a log, ``begin_log`` and
    ``record``; it calls this ``__init__`` once its own attributes are set."""

    state_class: type
    observer_class: type

    def __init__(self, game_type, info, params):
        super().__init__(game_type, info, params)
        rules = self.compiled_rules()
        #: the rules the states call: each function with its one signature
        #: as its compiled entry point (no numba dispatch: a third of a
        #: call's cost; solvers/tree.py calls its walk the same way)
        self.rules = rules._replace(**{name: _entry_point(getattr(rules, name)) for name in _CALLED
                                       if getattr(rules, name) is not None})
        # the numba functions, for _replayer, _chance_stepper and _tokener
        self._apply, self._outcomes, self._token = rules.apply, rules.outcomes, rules.token

    def compiled_rules(self):
        raise NotImplementedError

    def begin_log(self, log: list, position: list) -> None:
        """Appends to ``log`` its first entries, at the initial ``position``."""

    def record(self, log: list, before: list, action: int, after: list) -> None:
        """Appends to ``log`` what ``action`` did, played from position
        ``before`` to position ``after`` (lists)."""

    def new_initial_state(self):
        return self.state_class(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        return self.observer_class(iig_obs_type, self, params)


class State(_common.CoreSnapshots, pyspiel.State):
    """A game's state on its compiled rules (module docstring)."""

    def __init__(self, game):
        super().__init__(game)
        rules = game.rules
        c = self._c = Core()
        c.game, c.rules = game, rules
        c.s = rules.initial.copy()
        c.kind = _player_id(rules.kind(c.s, rules.params))
        c.written, c.base, c.pending, c.moves, c.outcomes, c.derived = [], None, [], None, None, None
        c.anchor = None
        game.begin_log(c.written, c.s.tolist())

    def _derived(self, key: str, compute):
        """``compute()``, kept with this position under ``key`` until the
        next move: for what a game's state reads often and derives from the
        position (an immutable value; copies of the state at the same
        position share it)."""
        c = self._c
        if c.derived is None:
            c.derived = {}
        value = c.derived.get(key)
        if value is None:
            value = c.derived[key] = compute()
        return value

    def _why_illegal(self) -> str:
        """Why a move that is not legal here is not (the legal ones follow it
        in the message); a game's words."""
        return ""

    # ---------------------------------------------------------- the rules
    def current_player(self):
        return self._c.kind

    def is_terminal(self):
        return self._c.kind == TERMINAL

    def is_chance_node(self):
        return self._c.kind == CHANCE

    def legal_actions(self, player=None):
        """pyspiel's ``State.legal_actions``, answered in Python for Python
        callers: the same list, without pyspiel's two conversions of it
        (Python to C++ and back). C++ callers reach ``_legal_actions``
        through pyspiel as usual; tests/test_adapter.py checks both agree."""
        c = self._c
        kind = c.kind
        if kind.__class__ is int:  # a player (chance and the end are pyspiel's ids)
            if player is not None and player != kind:
                return []
            moves = c.moves
            return (self._legal_actions(kind) if moves is None else moves)[:]
        if kind == CHANCE:  # pyspiel answers with the chance outcomes for any player
            return self.legal_moves()
        return []

    def _legal_actions(self, player):
        c = self._c
        if c.moves is None:
            rules = c.rules
            actions, _ = _buffers(rules.max_branch)
            c.moves = actions[:rules.legal(c.s, rules.params, actions)].tolist()
        return c.moves  # pyspiel copies it; a direct caller must not change it

    def chance_outcomes(self):
        c = self._c
        if c.outcomes is None:
            rules = c.rules
            actions, probs = _buffers(rules.max_branch)
            k = rules.outcomes(c.s, rules.params, actions, probs)
            c.moves = actions[:k].tolist()
            c.outcomes = list(zip(c.moves, probs[:k].tolist()))
        return list(c.outcomes)

    def legal_moves(self) -> list[int]:
        """The legal actions, or the chance outcomes' actions, or [] at the end."""
        kind = self._c.kind
        if kind >= 0:
            return list(self._legal_actions(kind))
        if kind == CHANCE:
            self.chance_outcomes()
            return list(self._c.moves)
        return []

    def _apply_action(self, action):
        c = self._c
        moves = c.moves
        if moves is None:
            moves = self.legal_moves()
        if action not in moves:
            raise _common.illegal(self, action, self.legal_moves(), self._why_illegal())
        self._apply_unchecked(action)

    def returns(self):
        c = self._c
        out = np.zeros(c.game.num_players(), dtype=np.float64)
        if c.kind == TERMINAL:
            c.rules.returns(c.s, c.rules.params, out)
        return out.tolist()

    # ------------------------------------------------- for a game's searches
    def _set_position(self, s: np.ndarray, log: list) -> None:
        """Makes this state position ``s`` with log ``log`` (both taken
        over), leaving pyspiel's history alone: for a search's own states."""
        c = self._c
        c.s, c.written, c.base, c.pending = s, log, None, []
        c.kind = _player_id(c.rules.kind(s, c.rules.params))
        c.moves = c.outcomes = c.derived = c.anchor = None

    def _apply_unchecked(self, action) -> None:
        """Plays ``action`` on the compiled rules without checking it or
        keeping pyspiel's history: for a search's own states replaying a
        history known to be legal (a resampled world,
        ``_common.replay_applier``); the log is written when read, as after
        any move."""
        c = self._c
        rules = c.rules
        if not c.pending:
            c.base = c.s.copy()
        c.pending.append(action)
        rules.apply(c.s, rules.params, action)
        kind = rules.kind(c.s, rules.params)
        c.kind = kind if kind >= 0 else _PLAYER_IDS[kind]
        c.moves = c.outcomes = c.derived = None

    def _replay_unchecked(self, actions) -> None:
        """``_apply_unchecked`` of each of ``actions`` in turn, in one
        compiled loop (``_common.replay``)."""
        if not actions:
            return
        c = self._c
        rules = c.rules
        if not c.pending:
            c.base = c.s.copy()
        c.pending.extend(actions)
        _replayer(c.game._apply)(c.s, rules.params, np.array(actions, dtype=np.int64))
        kind = rules.kind(c.s, rules.params)
        c.kind = kind if kind >= 0 else _PLAYER_IDS[kind]
        c.moves = c.outcomes = c.derived = None

    def chance_step(self, u: float) -> int:
        """At a chance node of a search's own world: the outcome that ``u``
        in [0, 1) draws (the one ``kibitz.games.chance.sample_chance``
        draws with the same ``u``), played as ``_apply_unchecked`` plays it,
        in one compiled call; returns it."""
        c = self._c
        rules = c.rules
        if not c.pending:
            c.base = c.s.copy()
        actions, probs = _buffers(rules.max_branch)
        a = int(_chance_stepper(c.game._outcomes, c.game._apply)(c.s, rules.params, u, actions, probs))
        c.pending.append(a)
        kind = rules.kind(c.s, rules.params)
        c.kind = kind if kind >= 0 else _PLAYER_IDS[kind]
        c.moves = c.outcomes = c.derived = None
        return a

    def position(self) -> np.ndarray:
        """A copy of the compiled position (``CompiledRules.position_of``)."""
        return self._c.s.copy()

    def log_mark(self) -> int:
        """``VIEWS`` (``kibitz.games.search``): a mark of the game so far,
        the length of its log."""
        c = self._c
        if c.anchor is not None:
            return c.anchor[0] + len(c.since_anchor())
        return len(c.log())

    def view_since(self, player: int, mark: int) -> tuple:
        """``VIEWS``: what ``player`` saw since ``mark``, the texts of the
        log's events from there (``_common.view_since``) as the game's
        ``_event_text`` writes them; in a world anchored at ``mark``
        (``anchor_view``), the game's compiled tokens of ``player`` for the
        moves since (``CompiledRules.token``: the same partition of the
        worlds that agree up to ``mark``)."""
        c = self._c
        anchor = c.anchor
        if anchor is not None and mark >= anchor[0]:
            if mark == anchor[0]:
                moves = np.array(c.anchor_moves(), dtype=np.int64)
                out = np.empty(len(moves), dtype=np.int64)
                n = _tokener(c.game._token, c.game._apply)(anchor[1], c.rules.params, moves, player, out)
                return tuple(out[:n].tolist())
            text = self._event_text
            return _common.view_since(c.since_anchor(), mark - anchor[0], lambda e: text(e, player))
        text = self._event_text
        return _common.view_since(c.log(), mark, lambda e: text(e, player))

    def anchor_view(self, mark: int) -> None:
        """``VIEWS``: this state, a search's world, stands where ``mark`` was
        taken (the root, whose log had ``mark`` entries); ``log_mark`` and
        ``view_since`` from a mark at or after it then read only the moves
        since, never the log before (a resampled world's whole replay):
        ``view_since(player, mark)`` is then the player's compiled tokens of
        those moves, and later marks the texts of their events.
        ``_set_position`` ends it."""
        c = self._c
        c.anchor = (mark, c.s.copy(), (), len(c.pending), (0, [], None))

    def _event_text(self, event, player: int) -> str | None:
        """One log event as ``player`` sees it in its information-state
        string (None: unseen); a game with the ``VIEWS`` capability gives it."""
        raise NotImplementedError(f"{type(self).__name__} has no views of its log")


def position_of(state) -> np.ndarray:
    """``CompiledRules.position_of`` of a game on this adapter: the state's
    position itself (a copy), also for a search's own worlds."""
    return state.position()


class Observer(_common.Observer):
    """A game's observer on the adapter: the observation tensor (not perfect
    recall) is the compiled ``observation``, with the pieces named in
    ``PRIVATE`` (what only the observing player sees) cleared for an
    observation type without private information. A subclass calls
    ``set_pieces`` with its layout and implements ``_set_history`` (the
    perfect-recall tensor) and ``string_from``."""

    #: pieces of the observation tensor that show the observing player's private information
    PRIVATE: tuple[str, ...] = ()

    def set_from(self, state, player):
        if self.perfect_recall:
            super().set_from(state, player)
            return
        c = state._c
        c.rules.observation(c.s, c.rules.params, player, self.tensor)
        if not self.private:
            for name in self.PRIVATE:
                self.dict[name][...] = 0
