"""Many games stepped at once on a game's compiled rules: the batched environment.

:class:`BatchedEnv` holds ``batch`` games of one kibitz game as rows of
compiled positions (``kibitz.games.search.CompiledRules``) and steps them
all in one numba call: the actions of the players to move go in, chance is
sampled in compiled code, and out come, as arrays, what reinforcement
learning code reads: the player to move in each game, its legal actions as
a boolean mask over the game's distinct actions, its observation tensor
(``state.observation_tensor(player)``, bit for bit, from the rules'
``observation``), and the returns of the games that ended. A game that
ends starts again in the same row (its returns stay readable in
``returns``/``ended`` until the next step).

    env = BatchedEnv(pyspiel.load_game("pub"), batch=256, seed=0)
    env.reset()
    for _ in range(1000):
        env.step(env.random_actions())   # or a network's choice from env.obs and env.mask
        finished = env.returns[env.ended]

Randomness is passed in: one seed gives the same chance outcomes and the
same random actions, whatever else runs. The positions are the compiled
rules' own, so a batched game is the same game as the pyspiel one (the
rules' differential tests: tests/test_compiled_observation_*.py and
tests/test_compile.py).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from pathlib import Path

import numba
import numpy as np
from numba import types as nt

from kibitz.games import search
from kibitz.games.compiled_random import pick, seeded_rng, uniform

_JIT = dict(cache=True, nogil=True, boundscheck=False)


@numba.njit(search.RULE_SIGNATURES["observation"], **_JIT)
def _no_observation(s, prm, player, out):
    out[:] = 0.0


_I64 = nt.int64[::1]
#: the compiled modules of each game's rule functions (:func:`rules_module`)
_STEPPERS: dict = {}

# The step loop, compiled once per game into a module of its own whose
# globals are that game's rule functions: numba inlines them (measured
# 1.3-3.8x faster than calling them as function values, which one
# compilation for every game would need) and caches the module's
# compilation on disk like any other (a closure over them it would not).
_LOOP = """\
import numba
import numpy as np

from kibitz.games.compiled_random import pick, uniform
from kibitz.games.batched import _JIT
from {module} import kind, legal, outcomes, apply, returns
from {observation_module} import {observation} as observation


@numba.njit(**_JIT)
def advance(initial, prm, max_branch, pos, rng, actions, play, player, mask, legal_actions, num_legal,
            obs, rets, ended, steps, hist, hist_len, final, final_len):
    # Applies actions (when play), then plays chance up to the next decision in
    # every row, restarting ended games; fills player, mask, obs. With hist (not
    # 0 columns) every move is recorded, and an ended game's moves kept in final.
    acts = np.empty(max_branch, dtype=np.int64)
    probs = np.empty(max_branch, dtype=np.float64)
    record = hist.shape[1] > 0
    for b in range(pos.shape[0]):
        s = pos[b]
        ended[b] = False
        a = actions[b]
        move = play  # a move or chance outcome ``a`` to apply first
        while True:
            if move:
                apply(s, prm, a)
                steps[0] += 1
                if record:
                    hist[b, hist_len[b]] = a
                    hist_len[b] += 1
            move = True
            who = kind(s, prm)
            if who == -1:
                k = outcomes(s, prm, acts, probs)
                a = acts[pick(probs, k, uniform(rng))]
                continue
            if who == -4:
                returns(s, prm, rets[b])
                ended[b] = True
                s[:] = initial
                if record:
                    final[b, :] = hist[b, :]
                    final_len[b] = hist_len[b]
                    hist_len[b] = 0
                move = False
                continue
            break
        player[b] = who
        row = legal_actions[b]
        for j in range(num_legal[b]):  # the last mask's entries, not the whole row
            mask[b, row[j]] = False
        k = legal(s, prm, row)
        num_legal[b] = k
        for j in range(k):
            mask[b, row[j]] = True
        if obs.shape[1] > 0:
            observation(s, prm, who, obs[b])


@numba.njit(**_JIT)
def features(s, prm, n, size, out):
    # Every player's observation of position s, one after the other, then
    # who moves: n + 2 flags (a player, chance, the end).
    for p in range(n):
        observation(s, prm, p, out[p * size:(p + 1) * size])
    flags = out[n * size:]
    flags[:] = 0.0
    who = kind(s, prm)
    flags[who if who >= 0 else (n if who == -1 else n + 1)] = 1.0


@numba.njit(**_JIT)
def child_features(s, prm, n, size, actions, out, ended, rets):
    # The features of s after each of actions (row j of out); ended[j] and
    # rets[j] say whether that child is the end of the game, and its returns.
    t = np.empty_like(s)
    for j in range(len(actions)):
        t[:] = s
        apply(t, prm, actions[j])
        ended[j] = kind(t, prm) == -4
        if ended[j]:
            returns(t, prm, rets[j])
        features(t, prm, n, size, out[j])


@numba.njit(**_JIT)
def replay_features(initial, prm, n, size, hist, hist_len, picks, first, out):
    # Replays each game g (hist[g, :hist_len[g]]) from the initial position
    # and writes the features of the position before move picks[i] into
    # out[i], for i in first[g]:first[g + 1] (picks ascending within a game).
    s = np.empty_like(initial)
    for g in range(hist.shape[0]):
        s[:] = initial
        i = first[g]
        for m in range(hist_len[g]):
            while i < first[g + 1] and picks[i] == m:
                features(s, prm, n, size, out[i])
                i += 1
            apply(s, prm, hist[g, m])


@numba.njit(**_JIT)
def game_child_features(initial, prm, n, size, moves, steps, first, actions, out, ended, rets, nodes):
    # Replays one game (moves) from the initial position and, at each node i
    # (before move steps[i], steps ascending), writes the features of the
    # position after each of actions[first[i]:first[i + 1]] into those rows of
    # out, with ended and rets as child_features: a whole game's children;
    # and the node's own features into nodes[i] (when nodes has rows).
    s = initial.copy()
    i = 0
    for m in range(len(moves) + 1):
        while i < len(steps) and steps[i] == m:
            lo, hi = first[i], first[i + 1]
            if nodes.shape[0] > 0:
                features(s, prm, n, size, nodes[i])
            child_features(s, prm, n, size, actions[lo:hi], out[lo:hi], ended[lo:hi], rets[lo:hi])
            i += 1
        if m < len(moves):
            apply(s, prm, moves[m])


@numba.njit(**_JIT)
def playout(s, prm, max_branch, rng, out):
    # Plays position s to its end (chance by its probabilities, every move
    # uniformly among the legal ones); its returns into out.
    acts = np.empty(max_branch, dtype=np.int64)
    probs = np.empty(max_branch, dtype=np.float64)
    while True:
        who = kind(s, prm)
        if who == -4:
            returns(s, prm, out)
            return
        if who == -1:
            k = outcomes(s, prm, acts, probs)
            a = acts[pick(probs, k, uniform(rng))]
        else:
            k = legal(s, prm, acts)
            a = acts[int(uniform(rng) * k)]
        apply(s, prm, a)
"""


#: the encodings the batched environment hands out: name -> the field of
#: CompiledRules that computes it, and the game's method giving its size
#: what a batched agent may read instead of an encoding: the rows' compiled
#: positions themselves (``BatchedEnv.pos``), for code that keeps to what
#: the mover may see (agents/heuristics/underdog_batched.py)
POSITION = "position"
ENCODINGS = {"observation_tensor": ("observation", "observation_tensor_size"),
             "compact": ("compact", "compact_tensor_size")}


def _stepper(rules, encoding=None):
    """The step loop of ``rules`` handing out ``encoding`` (:func:`compiled_loops`)."""
    return compiled_loops(rules, encoding).advance


def compiled_loops(rules, encoding=None):
    """The module of ``rules``' compiled loops (see ``_LOOP``: ``advance``,
    handing out ``encoding`` (a name of :data:`ENCODINGS`, or None), the
    features of positions and of children (``features``, ``child_features``,
    ``replay_features``, ``game_child_features``) and ``playout``): see
    :func:`rules_module`."""
    observation = (getattr(rules, ENCODINGS[encoding][0]) if encoding else None) or _no_observation
    return rules_module(rules, _LOOP, "loop", observation_module=observation.py_func.__module__,
                        observation=observation.py_func.__name__)


def rules_module(rules, template: str, tag: str, depends: tuple = (), **fields):
    """The module of ``template`` compiled for ``rules``: the source, formatted
    with ``module`` (the module of the rules' functions, which it imports
    by name so that numba inlines them: measured 1.3-3.8x faster than
    calling them as function values, and without the call's per-call
    typing of function values) and ``fields``, written on first use under
    the cache folder (``$KIBITZ_CACHE/batched`` or ``~/.cache/kibitz/batched``)
    and imported from there; numba caches its compilation on disk like any
    other module's. ``depends``: modules it imports besides the rules'
    (their sources go into its name, with the rules' own, so that an edited
    one compiles afresh)."""
    module = rules.kind.py_func.__module__
    key = (tag, module, tuple(sorted(fields.items())))
    if key not in _STEPPERS:
        source = template.format(module=module, **fields)
        # numba's cache checks only the module's own file: the sources it
        # inlines go into its name, so that an edited rule compiles afresh
        digest = hashlib.sha256(source.encode())
        names = {module, "kibitz.games.compiled_random", *depends, *(v for v in fields.values() if v in sys.modules),
                 *_kibitz_imports(module)}
        for name in sorted(names):
            digest.update(Path(sys.modules[name].__file__).read_bytes())
        digest = digest.hexdigest()[:16]
        folder = _cache_folder()
        path = folder / f"{tag}_{module.rsplit('.', 1)[-1].strip('_')}_{digest}.py"
        if not path.is_file():
            folder.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(source)
            os.replace(tmp, path)
        spec = importlib.util.spec_from_file_location(f"kibitz_batched_{path.stem}", path)
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = loaded  # numba's disk cache finds the module by its name
        spec.loader.exec_module(loaded)
        _STEPPERS[key] = loaded
    return _STEPPERS[key]


def _kibitz_imports(module: str) -> set:
    """The kibitz modules that ``module`` imports, or imports functions from
    (Doubt and Bet's rules call ``games/_compiled.py``): numba inlines
    their code too, so their sources go into a compiled module's name."""
    found = set()
    for value in vars(sys.modules[module]).values():
        name = getattr(value, "__name__", "") if isinstance(value, type(sys)) else \
            getattr(getattr(value, "py_func", value), "__module__", "") or ""
        if name.startswith("kibitz.") and name != module and name in sys.modules:
            found.add(name)
    return found


def _cache_folder() -> Path:
    env = os.environ.get("KIBITZ_CACHE")
    return Path(env) / "batched" if env else Path.home() / ".cache" / "kibitz" / "batched"


@numba.njit(nt.none(nt.int64[:, ::1], _I64, nt.uint64[::1], _I64), **_JIT)
def _random_actions(legal_actions, num_legal, rng, out):
    """A uniformly random legal action of each row."""
    for b in range(len(out)):
        out[b] = legal_actions[b, int(uniform(rng) * num_legal[b])]


class BatchedEnv:
    """``batch`` games of ``game`` (a kibitz game with compiled rules) stepped together.

    Attributes after :meth:`reset` and each :meth:`step` (row ``b`` is game ``b``):
    ``player`` (int64, the player to move), ``mask`` (bool, ``batch`` x
    ``game.num_distinct_actions()``: its legal actions; also listed, ascending,
    in ``legal_actions[b, :num_legal[b]]``), ``obs`` (float32,
    ``batch`` x the encoding's size: the mover's ``encoding``, by default
    its observation tensor, or ``"compact"``, the game's compact encoding;
    none with ``observe=False``), ``ended`` (bool: the game in this row ended
    in the last step and started again) and ``returns`` (float64, ``batch``
    x players: the returns of each row's last ended game). ``steps`` counts
    the moves and chance outcomes applied. With ``record=True`` each row's
    moves since its game began (chance outcomes included) are in
    ``history[b, :history_len[b]]``, and the last ended game's in
    ``final_history[b, :final_len[b]]``: pyspiel's ``apply_action`` on them
    gives the same game (tests/test_batched.py).
    """

    def __init__(self, game, batch: int, seed: int = 0, observe: bool = True, record: bool = False,
                 encoding: str = "observation_tensor"):
        if search.COMPILED not in search.capabilities(game):
            raise ValueError(f"game {game.get_type().short_name!r} has no compiled rules")
        if not isinstance(batch, int) or batch < 1:
            raise ValueError(f"batch={batch!r}; allowed: a whole number >= 1")
        if encoding not in ENCODINGS:
            raise ValueError(f"encoding={encoding!r}; allowed: {', '.join(ENCODINGS)}")
        self.game = game
        self.rules = game.compiled_rules()
        field, size = ENCODINGS[encoding]
        if observe and getattr(self.rules, field) is None:
            raise ValueError(f"game {game.get_type().short_name!r}: its compiled rules do not compute the "
                             f"{encoding} encoding; use observe=False")
        self.batch = batch
        self.observe = observe
        self.encoding = encoding if observe else None
        self.rng = seeded_rng(seed)
        n = game.num_players()
        self.pos = np.tile(self.rules.initial, (batch, 1))
        self.player = np.zeros(batch, dtype=np.int64)
        self.mask = np.zeros((batch, game.num_distinct_actions()), dtype=np.bool_)
        self.legal_actions = np.zeros((batch, self.rules.max_branch), dtype=np.int64)
        self.num_legal = np.zeros(batch, dtype=np.int64)
        self.obs = np.zeros((batch, getattr(game, size)() if observe else 0), dtype=np.float32)
        self.returns = np.zeros((batch, n), dtype=np.float64)
        self.ended = np.zeros(batch, dtype=np.bool_)
        self._steps = np.zeros(1, dtype=np.int64)
        self._actions = np.zeros(batch, dtype=np.int64)
        # record=True: each row's moves so far (chance outcomes included), and its last ended game's
        width = game.max_game_length() + 1 if record else 0
        self.history = np.zeros((batch, width), dtype=np.int64)
        self.history_len = np.zeros(batch, dtype=np.int64)
        self.final_history = np.zeros((batch, width), dtype=np.int64)
        self.final_len = np.zeros(batch, dtype=np.int64)

    @property
    def steps(self) -> int:
        return int(self._steps[0])

    def _advance(self, actions, play: bool) -> None:
        r = self.rules
        _stepper(r, self.encoding)(r.initial, r.params, r.max_branch, self.pos, self.rng, actions, play, self.player,
                 self.mask, self.legal_actions, self.num_legal, self.obs, self.returns, self.ended, self._steps,
                 self.history, self.history_len, self.final_history, self.final_len)

    def reset(self) -> None:
        """Every row a new game, played up to its first decision."""
        self.pos[:] = self.rules.initial
        self.mask[:] = False
        self.num_legal[:] = 0
        self.history_len[:] = 0
        self._advance(self._actions, False)

    def step(self, actions) -> None:
        """Plays ``actions[b]`` (an int array of ``batch``) in each row; each must be legal there."""
        actions = np.ascontiguousarray(actions, dtype=np.int64)
        if actions.shape != (self.batch,):
            raise ValueError(f"actions: shape {actions.shape}, expected ({self.batch},)")
        if not self.mask[np.arange(self.batch), actions].all():
            bad = int(np.flatnonzero(~self.mask[np.arange(self.batch), actions])[0])
            raise ValueError(f"actions[{bad}]={int(actions[bad])} is not legal in game {bad} "
                             f"(legal: {np.flatnonzero(self.mask[bad]).tolist()})")
        self._advance(actions, True)

    def random_actions(self) -> np.ndarray:
        """A uniformly random legal action in each row (from the environment's generator)."""
        _random_actions(self.legal_actions, self.num_legal, self.rng, self._actions)
        return self._actions.copy()

    def play_random(self, moves: int) -> None:
        """``moves`` steps of uniformly random actions, without the per-step check of :meth:`step`."""
        for _ in range(moves):
            _random_actions(self.legal_actions, self.num_legal, self.rng, self._actions)
            self._advance(self._actions, True)


class CompiledPlayouts:
    """Random playouts of a game's states on its compiled rules: IS-MCTS's
    rollouts (solvers/ismcts.py). ``playouts(state)`` plays ``state`` (any
    state of the game, a search's own worlds included: the rules'
    ``position_of`` reads its core) to the end, chance by its probabilities
    and every move uniformly among the legal ones, drawing from the
    object's generator (seeded with ``seed``), and returns the returns.
    ``state`` is not changed."""

    def __init__(self, game, seed: int = 0):
        if search.COMPILED not in search.capabilities(game):
            raise ValueError(f"game {game.get_type().short_name!r} has no compiled rules")
        self.rules = rules = game.compiled_rules()
        if rules.position_of is None:
            raise ValueError(f"game {game.get_type().short_name!r}: its compiled rules read no Python state "
                             "(CompiledRules.position_of)")
        self._play = compiled_loops(rules).playout
        self._out = np.empty(game.num_players(), dtype=np.float64)
        self.rng = seeded_rng(seed)

    def __call__(self, state) -> list[float]:
        r = self.rules
        self._play(r.position_of(state), r.params, r.max_branch, self.rng, self._out)
        return self._out.tolist()


def compiled_playouts(game, seed: int = 0) -> CompiledPlayouts | None:
    """:class:`CompiledPlayouts` of ``game`` seeded with ``seed``, or None
    when its rules do not compile or cannot read a Python state."""
    if search.COMPILED not in search.capabilities(game) or game.compiled_rules().position_of is None:
        return None
    return CompiledPlayouts(game, seed)
