"""The game-search contract: what a kibitz game's states offer to searches.

OpenSpiel's searches see a game only through the pyspiel API. kibitz's
IS-MCTS (solvers/ismcts.py) can do more with a game that offers more: each
game declares on its :class:`~kibitz.games.GameSpec` (``search=``) which of
the capabilities below its states implement, and a search asks the spec
(:func:`capabilities`), never the state (no ``hasattr``). A game that
declares nothing is searched through the pyspiel API alone, like any
OpenSpiel game.

A fifth game implements the protocols of the capabilities it declares:

=================  ======================================  ==================
capability         methods (protocol)                      what a search gains
=================  ======================================  ==================
``DIRECT``         ``resample_from_infostate(player,       a search's own worlds
                   sampler, internal=True, check=...)``    replayed and played
                   (:class:`ResampleState`); OpenSpiel's   through the rules
                   ``_apply_action``/``_legal_actions``    directly (no C++
                   called directly on such worlds          history)
``ROUNDS``         ``round_number()``, ``standing()``      rollouts cut after
                   (:class:`RoundsState`)                  k rounds or moves
``VIEWS``          ``log_mark()``,                         tree keys from a few
                   ``view_since(player, mark)``            events, not whole
                   (:class:`ViewState`)                    information strings
``PUBLIC_CHANCE``  (none: every chance outcome is seen     chance edges keyed
                   by every player)                        by the outcomes
``KNOWN_WORLD``    (none: the information state of the     a compiled search's
                   player to move determines the state:    worlds are its root,
                   its resample returns a copy)            not a draw each
``RANDOM_ACTION``  ``random_action(player, u)``            random rollouts
                   (:class:`RandomActionState`)            without listing the
                                                           legal moves
``RESAMPLE_MEMO``  ``resample_from_infostate(...,          what every world
                   internal=True, memo=dict)``             shares (earlier
                                                           rounds) drawn or
                                                           derived once per
                                                           search
``SNAPSHOT``       ``snapshot()``, ``restore(snapshot)``   a walk that copies
                   (:class:`SnapshotState`)                positions, not states
                                                           (the tree compiler)
``COMPILED``       the game's ``compiled_rules()``         the tree compiled by
                   (:class:`CompiledRules`);               a compiled walk;
                   ``chance_step(u)``                      a search's chance
                   (:class:`CompiledState`)                below its root in one
                                                           compiled call
=================  ======================================  ==================

``ROUNDS``, ``VIEWS``, ``KNOWN_WORLD``, ``RANDOM_ACTION``, ``RESAMPLE_MEMO``,
``SNAPSHOT`` and ``COMPILED`` are used only together with ``DIRECT``.

A game's heuristic may hand a search more than these (``SearchPolicies``:
Doubt and Bet's heuristic-weighted belief draw); such code sits beside the
heuristic, above the games, and reads the game only through public
accessors that the game module documents (Doubt and Bet: ``round_start()``,
``log()``, ``hand()``, ``phase`` and the internal resample's ``cards=``).
"""

from __future__ import annotations

from typing import Callable, NamedTuple, Protocol

import numpy as np
from numba import types as _nt

from kibitz.games._common import REGISTRY

DIRECT = "direct"
ROUNDS = "rounds"
VIEWS = "views"
PUBLIC_CHANCE = "public_chance"
KNOWN_WORLD = "known_world"
RANDOM_ACTION = "random_action"
RESAMPLE_MEMO = "resample_memo"
SNAPSHOT = "snapshot"
COMPILED = "compiled"
#: every capability a game may declare
CAPABILITIES = frozenset({DIRECT, ROUNDS, VIEWS, PUBLIC_CHANCE, KNOWN_WORLD, RANDOM_ACTION, RESAMPLE_MEMO,
                          SNAPSHOT, COMPILED})

#: ``check(state, player, action)``: called before each move of a player other
#: than the resampling one in the replay; raises to abandon the replay
Check = Callable[[object, int, int], None]


class ResampleState(Protocol):
    """``DIRECT`` (and ``RESAMPLE_MEMO``): the pyspiel resample, extended."""

    def resample_from_infostate(self, player_id: int, probability_sampler: Callable[[], float],
                                internal: bool = False, check: Check | None = None, **kwargs):
        """A state drawn from ``player_id``'s information state.

        ``probability_sampler()`` returns uniform numbers in [0, 1).
        ``internal=True`` (a search's own worlds only): the world is replayed
        through the game's Python rules, without pyspiel's history; it must
        be the same world the public call draws from the same numbers.
        ``check``: see :data:`Check`. With ``RESAMPLE_MEMO`` the call also
        takes ``memo=``, a dict the search keeps for one search (from one
        root state), in which the game may keep what every world of that
        search shares.
        """


class RoundsState(Protocol):
    """``ROUNDS``: where a round begins, and how the game stands."""

    def round_number(self) -> int:
        """Rounds begun so far; never decreases along a game (one-deal games: 1)."""

    def standing(self) -> list[float]:
        """What a cut-off rollout backs up: the returns on a terminal state;
        before, an estimate of them on the returns' scale."""


class ViewState(Protocol):
    """``VIEWS``: what one player saw since a point of the game."""

    def log_mark(self) -> int:
        """A mark of the game so far (the length of its event log)."""

    def view_since(self, player: int, mark: int) -> tuple:
        """What ``player`` saw since ``mark``. Between states that agree on
        ``player``'s information state up to ``mark`` (the worlds of one
        search), equal views mean equal information-state strings."""

    def anchor_view(self, mark: int) -> None:
        """Says that this state, a search's own world drawn from the
        information state where ``mark`` was taken, stands there now: its
        ``log_mark`` and ``view_since`` from then on need not write the log
        of its replay before it."""


class RandomActionState(Protocol):
    """``RANDOM_ACTION``: a uniform legal move without the list."""

    def random_action(self, player: int, u: float) -> int:
        """``legal[int(u * len(legal))]`` of ``_legal_actions(player)``, for
        ``u`` in [0, 1)."""


class SnapshotState(Protocol):
    """``SNAPSHOT``: positions copied without copying the pyspiel state."""

    def snapshot(self) -> object:
        """An independent copy of everything the rules change (the state
        does not touch it afterwards)."""

    def restore(self, snapshot: object) -> None:
        """Makes the state the snapshotted position, taking ``snapshot``
        over (the caller does not use it again). Only the Python rules'
        view changes, not pyspiel's history: for a search's own states."""


class CompiledState(Protocol):
    """``COMPILED`` (with ``DIRECT``): a search's own world plays chance on
    the compiled rules."""

    def chance_step(self, u: float) -> int:
        """At a chance node of a search's own world: plays the outcome that
        ``u`` in [0, 1) draws by the inverse CDF (the one
        ``kibitz.games.chance.sample_chance`` draws with the same ``u``),
        without a legality check or pyspiel's history; returns it."""


_POS = _nt.int64[::1]
#: the numba signatures of :class:`CompiledRules`' functions: a game
#: compiles each with its signature (``numba.njit(RULE_SIGNATURES["kind"])``),
#: so that the compiled walk takes them as function values and is compiled,
#: and cached on disk, once for every game
RULE_SIGNATURES = {
    "kind": _nt.int64(_POS, _POS),
    "legal": _nt.int64(_POS, _POS, _POS),
    "outcomes": _nt.int64(_POS, _POS, _POS, _nt.float64[::1]),
    "apply": _nt.none(_POS, _POS, _nt.int64),
    "returns": _nt.none(_POS, _POS, _nt.float64[::1]),
    "token": _nt.int64(_POS, _POS, _nt.int64, _nt.int64),
    "observation": _nt.none(_POS, _POS, _nt.int64, _nt.float32[::1]),
}


class CompiledRules(NamedTuple):
    """``COMPILED``: the game's rules as numba functions on a position held
    in one ``int64`` array (the game's ``compiled_rules()`` returns them).

    Every function takes the position ``s`` and the parameters ``prm``
    first; none allocates what it writes. They must follow the Python
    rules exactly: the compiled walk's tree is compared, array by array,
    with the reference walk's (tests/test_compile.py).
    """

    initial: np.ndarray  #: the root position
    params: np.ndarray  #: int64, read by the functions only
    #: ``kind(s, prm)``: the player to move, -1 chance, -4 terminal
    kind: Callable
    #: ``legal(s, prm, out)``: writes the legal actions, ascending; returns their count
    legal: Callable
    #: ``outcomes(s, prm, actions, probs)``: writes the chance outcomes and
    #: their probabilities (``chance_outcomes()``'s, bit for bit); returns the count
    outcomes: Callable
    #: ``apply(s, prm, a)``: plays ``a`` on ``s`` in place
    apply: Callable
    #: ``returns(s, prm, out)``: a terminal position's returns (``returns()``'s, bit for bit)
    returns: Callable
    #: ``token(s, prm, a, player)``: what ``player`` sees of ``a`` played at
    #: ``s``, in ``0..num_tokens-1``, or -1 for nothing. Two histories must
    #: give a player the same information-state string exactly when they
    #: give it the same sequence of tokens. And whether every player gets
    #: the same token for a move (the walk's public moves) must follow from
    #: what each player has seen: a move that is public in one history may
    #: not be private in another that a player cannot tell from it (a card
    #: shown to one player as its number and to the others as 0, say, is
    #: public when the card is 0; give the others -1 or a token of its own)
    token: Callable
    num_tokens: int
    max_branch: int  #: at least the most legal actions or chance outcomes of a node
    #: ``observation(s, prm, player, out)`` (optional): writes every value of
    #: ``out`` (float32, ``game.observation_tensor_size()`` long) with
    #: ``state.observation_tensor(player)`` of the state at position ``s``,
    #: bit for bit, at every position of the game, terminal ones included
    #: (the batched environment's observations: games/batched.py)
    observation: Callable | None = None
    #: ``compact(s, prm, player, out)`` (optional, the signature of
    #: ``observation``): ``state.compact_tensor(player)`` (the game's
    #: ``compact`` encoding, ``kibitz.games.encoding``), bit for bit, at every
    #: position; what the shipped networks of Pub, Over/Under and Doubt and
    #: Bet read (the batched environment's ``encoding="compact"``)
    compact: Callable | None = None
    #: ``position_of(state)`` (optional, plain Python): the position of a
    #: Python state of the game (an int64 array like ``initial``), read from
    #: the state's rules core, not its history, so that a search's own
    #: worlds (``resample_from_infostate(..., internal=True)``) convert too;
    #: playing on from it in compiled code plays on that state (IS-MCTS's
    #: compiled rollouts, solvers/ismcts.py)
    position_of: Callable | None = None
    #: ``random_action(s, prm, u, out)`` (optional, numba): at a decision,
    #: the move ``legal[int(u * k)]`` of the ``k`` legal moves ``legal``
    #: writes, found without listing them where the rules can (Doubt and
    #: Bet's thousands of claims); ``out`` has room for ``max_branch`` moves,
    #: for when it lists them (IS-MCTS's compiled rollouts, solvers/_ismcts_kernel.py)
    random_action: Callable | None = None


def capabilities(game) -> frozenset[str]:
    """The search capabilities a pyspiel game declares (none for a game
    that is not kibitz's)."""
    spec = REGISTRY.get(game.get_type().short_name)
    return frozenset() if spec is None else spec.search
