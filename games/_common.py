"""Shared plumbing for kibitz games: declared parameters and their validation.

Every game declares its parameters once, as a tuple of :class:`Param`, with
the value its rules page (docs/rules/) gives as default. :func:`read_params` fills in defaults,
checks every value against its declaration and raises a ``ValueError`` that
names the parameter and the allowed values. ``pyspiel`` itself already
rejects unknown parameter names and wrong types when a game string is
parsed; the checks here repeat them so that constructing a game class
directly behaves the same.

:data:`REGISTRY` maps each game's short name to its :class:`GameSpec`, which
``kibitz games`` prints.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np
import pyspiel


@dataclasses.dataclass(frozen=True)
class Param:
    """One game parameter: its name, default and allowed values.

    ``choices`` lists the allowed values of a string or bool parameter.
    ``low``/``high`` bound an int parameter; either may be a callable taking
    the dict of (already read) parameter values, for bounds that depend on
    other parameters (e.g. Underdog's ``cards >= players + 2``).
    ``allowed`` is the human description of the range, shown by
    ``kibitz games`` and in error messages.
    """

    name: str
    default: Any
    help: str
    allowed: str
    choices: tuple | None = None
    low: int | Callable[[dict], int] | None = None
    high: int | Callable[[dict], int] | None = None

    def bound(self, which, values):
        b = self.low if which == "low" else self.high
        return b(values) if callable(b) else b


@dataclasses.dataclass(frozen=True)
class GameSpec:
    short_name: str
    long_name: str
    summary: str
    params: tuple[Param, ...]
    small: str  # a small configuration that exact solvers can handle
    #: the search capabilities its states implement (``kibitz.games.search``)
    search: frozenset[str] = frozenset()
    #: the input encodings it offers besides ``information_state_tensor``
    #: (``kibitz.games.encoding``: game ``NAME_tensor_size()`` and
    #: ``NAME_tensor_layout()``, state ``NAME_tensor(player)``)
    encodings: tuple[str, ...] = ()
    #: whether the game offers ``action_factors()`` for a factored network output
    action_factors: bool = False


REGISTRY: dict[str, GameSpec] = {}


def register(spec: GameSpec, game_type: pyspiel.GameType, game_class) -> None:
    """Registers a game with pyspiel and with kibitz's own listing."""
    REGISTRY[spec.short_name] = spec
    pyspiel.register_game(game_type, game_class)


def read_params(short_name: str, declared: tuple[Param, ...], given: dict | None) -> dict:
    """Returns the full, validated parameter dict for a game.

    Raises ValueError naming the parameter and its allowed values.
    """
    given = dict(given or {})
    names = [p.name for p in declared]
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise ValueError(
            f"{short_name}: unknown parameter {unknown[0]!r}; "
            f"parameters are {', '.join(names)}")
    values: dict = {}
    for p in declared:
        v = given.get(p.name, p.default)
        kind = type(p.default)
        if kind is bool:
            if not isinstance(v, bool):
                raise ValueError(f"{short_name}: parameter {p.name}={v!r} must be true or false")
        elif kind is int:
            if isinstance(v, bool) or not isinstance(v, int):
                raise ValueError(f"{short_name}: parameter {p.name}={v!r} must be an integer ({p.allowed})")
        elif kind is str and not isinstance(v, str):
            raise ValueError(f"{short_name}: parameter {p.name}={v!r} must be one of {p.allowed}")
        values[p.name] = v
    for p in declared:
        v = values[p.name]
        if p.choices is not None and v not in p.choices:
            raise ValueError(
                f"{short_name}: parameter {p.name}={v!r} is not allowed; "
                f"allowed values: {p.allowed}")
        low, high = p.bound("low", values), p.bound("high", values)
        if (low is not None and v < low) or (high is not None and v > high):
            here = f" (here {low}..{high})" if callable(p.low) or callable(p.high) else ""
            raise ValueError(
                f"{short_name}: parameter {p.name}={v} is out of range; allowed: {p.allowed}{here}")
    return values


def game_type(short_name: str, long_name: str, declared: tuple[Param, ...], *,
              min_players: int, max_players: int,
              utility=pyspiel.GameType.Utility.CONSTANT_SUM,
              chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
              information=pyspiel.GameType.Information.IMPERFECT_INFORMATION) -> pyspiel.GameType:
    """A GameType for a kibitz game; ``utility`` may differ per payoff mode."""
    return pyspiel.GameType(
        short_name=short_name,
        long_name=long_name,
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=chance_mode,
        information=information,
        utility=utility,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=max_players,
        min_num_players=min_players,
        provides_information_state_string=True,
        provides_information_state_tensor=True,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification={p.name: p.default for p in declared},
    )


def win_shares(scores, higher_is_better: bool = True, *, tolerance: float = 0.0) -> list[float]:
    """Payoff ``win``: the players with the best score share 1 equally.

    ``scores`` may be any comparable values (Doubt and Bet ranks by tuples);
    with ``tolerance`` (numbers only) a score within it of the best counts
    as the best, as for float returns.
    """
    best = max(scores) if higher_is_better else min(scores)
    if tolerance:
        winners = [i for i, s in enumerate(scores) if abs(s - best) <= tolerance]
    else:
        winners = [i for i, s in enumerate(scores) if s == best]
    share = 1.0 / len(winners)
    return [share if i in winners else 0.0 for i in range(len(scores))]


def tensor_views(pieces):
    """One flat float32 tensor and named views into it.

    ``pieces`` is a sequence of ``(name, size, shape)``; the views are
    reshaped slices of the one array, so writing into a view (``view[...] =``)
    writes the flat tensor that pyspiel reads.
    """
    tensor = np.zeros(sum(size for _, size, _ in pieces), np.float32)
    views, i = {}, 0
    for name, size, shape in pieces:
        views[name] = tensor[i:i + size].reshape(shape)
        i += size
    return tensor, views


class Observer:
    """Base of a game's observer: the observation type, and the one tensor.

    ``iig_obs_type`` None is OpenSpiel's default observation (the current
    view, not perfect recall); ``params`` must be empty. A game's observer
    calls :meth:`set_pieces` with its tensor layout (see
    :func:`tensor_views`; the first piece is ``observer``) and implements
    ``_set_history(state, player)`` (perfect recall) and
    ``_set_current(state, player)``; :meth:`set_from` clears the tensor,
    marks the observer and calls the one that applies.
    """

    def __init__(self, iig_obs_type, params):
        if params:
            raise ValueError(f"observation parameters not supported; got {params}")
        if iig_obs_type is None:
            iig_obs_type = pyspiel.IIGObservationType(perfect_recall=False)
        self.perfect_recall = iig_obs_type.perfect_recall
        self.private = iig_obs_type.private_info == pyspiel.PrivateInfoType.SINGLE_PLAYER
        self.public = iig_obs_type.public_info

    def set_pieces(self, pieces):
        self.tensor, self.dict = tensor_views(pieces)

    def set_from(self, state, player):
        self.tensor.fill(0)
        self.dict["observer"][player] = 1
        if self.perfect_recall:
            self._set_history(state, player)
        else:
            self._set_current(state, player)


class SlotsState:
    """Base of a game's ``_Core``: cheap copies and pickling for a
    ``__slots__`` class.

    pyspiel clones a Python state by deep-copying each attribute; one object
    whose ``__deepcopy__`` copies its slots one level deep is much faster
    than a dozen attributes. A subclass lists in ``COPIED`` the slots that
    hold a list (or dict) of immutable values (ints, strings, tuples): those
    are copied with ``.copy()``; every other slot must hold an immutable
    value (or one nothing changes), and is shared. The ``__deepcopy__`` is
    generated for each subclass as straight-line code, as fast as one
    written by hand.

    pyspiel serializes a Python state by pickling its attributes; a class
    with ``__slots__`` and no ``__dict__`` needs ``__getstate__`` and
    ``__setstate__`` for that.
    """

    __slots__ = ()
    COPIED: tuple = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        unknown = set(cls.COPIED) - set(cls.__slots__)
        if unknown:
            raise TypeError(f"{cls.__name__}.COPIED names no slot: {sorted(unknown)}")
        lines = ["def __deepcopy__(self, memo):", "    c = _new(_cls)"]
        for k in cls.__slots__:
            copied = ".copy()" if k in cls.COPIED else ""
            lines.append(f"    c.{k} = self.{k}{copied}")
        lines.append("    return c")
        namespace = {"_new": object.__new__, "_cls": cls}
        exec("\n".join(lines), namespace)
        cls.__deepcopy__ = namespace["__deepcopy__"]

    def __getstate__(self):
        return {k: getattr(self, k) for k in self.__slots__}

    def __setstate__(self, d):
        for k, v in d.items():
            setattr(self, k, v)


class CoreSnapshots:
    """Capability ``SNAPSHOT`` (``kibitz.games.search``) for a state whose
    rules change nothing but its ``_c`` (a :class:`SlotsState`): every other
    attribute is fixed by the game's parameters.

    A snapshot is a copy of the core (the generated ``__deepcopy__``: no new
    pyspiel state, no ``__init__``); :meth:`restore` makes the state that
    position again, taking the snapshot over. The C++ side (history, move
    number) is left alone, so this is for a search's own states only, with
    ``DIRECT``.
    """

    def snapshot(self):
        return self._c.__deepcopy__(None)

    def restore(self, snapshot) -> None:
        self._c = snapshot


def replay_applier(state, internal: bool, observer: int, check=None):
    """The apply function a game's ``resample_from_infostate`` replays with.

    ``internal`` plays the game's rules directly (no pyspiel history: for a
    search's own states only); without ``check``, a game on the adapter
    plays each move unchecked on its compiled rules (``_apply_unchecked``: a
    resampled world is legal by construction, and the tests replay worlds
    both ways). ``check(state, player, action)``, if
    given, is called before every move of a player other than ``observer``
    and may raise to abandon the replay: IS-MCTS's belief filter uses it to
    reject a drawn world as soon as a move in it is unlikely.
    """
    if internal and check is None:  # a search's own world, legal by construction: no checks
        return getattr(state, "_apply_unchecked", state._apply_action)
    apply = state._apply_action if internal else state.apply_action
    if check is None:
        return apply
    current = state.current_player

    def checked(action):
        player = current()
        if player >= 0 and player != observer:
            check(state, player, action)
        apply(action)
    return checked


def replay(state, actions, internal: bool, observer: int, check=None) -> None:
    """Plays ``actions`` on ``state`` as :func:`replay_applier`'s function
    would, move by move; a search's own world without ``check`` on the
    adapter plays them in one compiled loop (``_replay_unchecked``)."""
    if internal and check is None and hasattr(state, "_replay_unchecked"):
        state._replay_unchecked(actions)
        return
    apply = replay_applier(state, internal, observer, check)
    for a in actions:
        apply(a)


def view_since(log, mark: int, text) -> tuple:
    """A search hook's key: the texts ``text(event)`` (None: unseen) of
    ``log[mark:]``, what one player saw of the game since ``mark``.

    Between states that share that player's view up to ``mark`` (the
    determinizations of one IS-MCTS search), equal views mean equal
    information states, and this costs a few events instead of the whole
    history's string. Games offer it as ``view_since(player, mark)``, with
    ``log_mark()`` giving the mark (capability ``VIEWS`` of
    ``kibitz.games.search``).
    """
    return tuple(t for e in log[mark:] if (t := text(e)) is not None)


class IllegalActionError(ValueError):
    """An action that is not legal in the state it was applied to."""


#: an illegal action's message lists the legal moves up to this many; above
#: it (Doubt and Bet's claims), the count and the first and last
LISTED = 60


def illegal(state, action, legal, why: str = "") -> IllegalActionError:
    """Builds the error for an illegal action; the state is left unchanged.

    The message names the move as the rules page does (``keep 7 (action
    10)``), or says that the id is no move of the game at all (out of range,
    negative), then the reason ``why`` if given, and the legal moves by name
    and id.
    """
    player = state.current_player()
    game = state.get_game()
    chance = player == pyspiel.PlayerId.CHANCE
    ids = game.max_chance_outcomes() if chance else game.num_distinct_actions()
    who = "chance" if chance else "anyone" if state.is_terminal() else f"player {player}"

    def named(a):
        return f"{state.action_to_string(player, a)} ({a})"

    in_range = 0 <= action < ids
    if in_range:
        parts = [f"{state.action_to_string(player, action)} (action {action}) is not legal "
                 f"for {who}" + (f": {why}" if why else "")]
    else:
        kind = "chance outcome" if chance else "move"
        parts = [f"action {action} is no {kind} of {game.get_type().short_name} "
                 f"(ids 0..{ids - 1})"]
        if why and not legal:
            parts.append(why)
    lead = "legal" if in_range else f"legal for {who}"
    if len(legal) > LISTED:
        parts.append(f"{len(legal)} {lead}, from {named(legal[0])} to {named(legal[-1])}")
    elif legal:
        parts.append(f"{lead}: " + ", ".join(named(a) for a in legal))
    return IllegalActionError("; ".join(parts))
