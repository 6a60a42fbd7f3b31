"""Compiles a pyspiel game into a flat game tree of numpy arrays.

Exact solvers (CFR, best response, NashConv) walk the whole game tree many
times. Walking pyspiel states costs a Python call per node per iteration (a
clone per child for Python games); kibitz walks the tree once, here, and
keeps it as arrays that compiled loops read.

Layout (``N`` nodes, ``I`` information states, ``S`` information-state
action slots, ``n`` players):

=====================  ==========  ==============================================
array                  shape       meaning
=====================  ==========  ==============================================
``player``             (N,) int8   acting player, ``-1`` chance, ``-4`` terminal
                                   (pyspiel's ``PlayerId`` values)
``first_child``        (N,) uint32 index of the first child (0 for terminals;
                                   computed from ``parent``, not held)
``num_children``       (N,) uint*  number of children (0 for terminals); uint8,
                                   uint16 or uint32, the smallest that holds
                                   the largest count
``parent``             (N,) int32  parent index (-1 for the root)
``action``             (N,) int*   action leading to the node (-1 for the
                                   root); int16, or int32 for actions past
                                   32,767
``edge``               (N,) uint32 where the probability of the edge into the
                                   node lives in a probability vector: a slot
                                   ``< S`` for a decision (the current policy),
                                   ``S + j`` for a chance edge of probability
                                   ``chance_prob[j]`` (0 for the root, which
                                   has no edge)
``chance_prob``        (C,) f64    the distinct chance probabilities, ascending
``terminal_outcome``   (T,) uint*  per terminal node, in node order: its row of
                                   ``returns_table`` (uint16, or uint32 past
                                   65,535 distinct rows)
``returns_table``      (R, n) f64  the distinct terminal return vectors
``infoset_player``     (I,) int8   player to act
``infoset_slots``      (I+1,) i32  slots of information state ``k`` are
                                   ``infoset_slots[k]:infoset_slots[k+1]``
``slot_action``        (S,) int*   the legal action of each slot (ascending);
                                   int16, or int32 for actions past 32,767
``infoset_parent_slot``(I,) int32  the slot of the same player's previous
                                   decision on the path (-1 if none)
``infoset_parent``     (I,) int32  the information state of that slot (-1 if
                                   none)
``infoset_strings``    I strings   ``information_state_string`` of each
=====================  ==========  ==============================================

Computed when asked, not held: ``returns`` (N, n) f64, the terminal
returns with zeros elsewhere (from ``terminal_outcome`` and
``returns_table``; held, at 8 bytes per player per node, it would be the
largest array), ``slot_infoset`` (S,) int32, the information state of
each slot (from ``infoset_slots``), and ``node_infoset`` (N,) int32, the
information state of a decision node or -1 (the information state of the
slot of its first child's edge). Chance probabilities and
return vectors repeat (a deal's ``1/k``, a win's shares), so storing each
distinct one once costs next to nothing.

Index arrays that the hot loops read are unsigned, which spares numba a
negative-index check on every access (measured: about 1.5x faster CFR).

Nodes are in breadth-first order: a parent comes before its children, and
the children of a node are contiguous, in ascending action order, so
``first_child[i] + k`` is the child reached by the ``k``-th legal action (or
``k``-th chance outcome). Top-down passes run ``i = 0..N-1``, bottom-up
passes the reverse. Information states are numbered in order of discovery
in a depth-first walk, so a player's earlier information state always has a
smaller number than a later one on the same path.

Three walkers give the identical tree: the reference walker uses the
pyspiel API alone (a clone per child); the direct one walks a game that
declares ``DIRECT`` and ``SNAPSHOT`` (``kibitz.games.search``) on a single
state, copying only the game's core per child and calling its Python rules
and information-state observer directly (:class:`_DirectDepthFirst`); the
compiled one walks a game that also declares ``COMPILED`` through its rules
in numba (:class:`_CompiledDepthFirst`, ``solvers/_walk.py``), and makes no
strings: its tree's ``infoset_strings`` are a :class:`ReplayedStrings`,
made on first use. The default (``walker="auto"``) is the fastest the game
allows.

Compiled trees are cached on disk, keyed by the game string (plus, for a
Python game, a hash of the module that defines it and of its compiled
rules, so an edited game is compiled afresh), under ``$KIBITZ_CACHE`` or
``~/.cache/kibitz/trees``.

A game whose tree exceeds ``max_nodes`` is refused with
:class:`TreeTooLarge`, naming the count reached, instead of exhausting
memory.
"""

from __future__ import annotations

import array
import collections.abc
import dataclasses
import hashlib
import importlib
import inspect
import json
import multiprocessing
import os
import re
import time
import zipfile
from pathlib import Path

import numba
import numpy as np
import pyspiel

from kibitz.games import search
from kibitz.solvers._io import atomic_write

TREE_FORMAT_VERSION = 5  # 5: strings may be left to a ReplayedStrings
DEFAULT_MAX_NODES = 20_000_000
CHANCE = int(pyspiel.PlayerId.CHANCE)
TERMINAL = int(pyspiel.PlayerId.TERMINAL)


class TreeTooLarge(ValueError):
    """The game tree has more nodes than the budget allows."""


@dataclasses.dataclass
class Tree:
    """A compiled game tree; see the module docstring for the layout."""

    game_string: str
    num_players: int
    player: np.ndarray
    num_children: np.ndarray
    parent: np.ndarray
    action: np.ndarray
    edge: np.ndarray
    chance_prob: np.ndarray
    terminal_outcome: np.ndarray
    returns_table: np.ndarray
    infoset_player: np.ndarray
    infoset_slots: np.ndarray
    slot_action: np.ndarray
    infoset_parent_slot: np.ndarray
    infoset_parent: np.ndarray
    infoset_strings: list  # or a ReplayedStrings (the compiled walk's)
    compile_seconds: float = 0.0

    @property
    def num_nodes(self) -> int:
        return len(self.player)

    @property
    def num_infosets(self) -> int:
        return len(self.infoset_player)

    @property
    def num_slots(self) -> int:
        return len(self.slot_action)

    @property
    def num_terminals(self) -> int:
        return int(np.count_nonzero(self.player == TERMINAL))

    @property
    def num_chance_nodes(self) -> int:
        return int(np.count_nonzero(self.player == CHANCE))

    @property
    def first_child(self) -> np.ndarray:
        """(N,) index of each node's first child, 0 for terminals (computed
        from ``parent``, not held: callers that pass it to many loops keep
        their own copy, e.g. the CFR solver's fast layout)."""
        return _first_children(self.parent)

    @property
    def returns(self) -> np.ndarray:
        """(N, n) terminal returns, zero elsewhere (computed, not held)."""
        out = np.zeros((self.num_nodes, self.num_players))
        out[self.player == TERMINAL] = self.returns_table[self.terminal_outcome]
        return out

    @property
    def slot_infoset(self) -> np.ndarray:
        """(S,) information state of each slot (computed)."""
        return np.repeat(np.arange(self.num_infosets, dtype=np.int32), np.diff(self.infoset_slots))

    @property
    def node_infoset(self) -> np.ndarray:
        """(N,) information state of each decision node, -1 elsewhere (computed)."""
        out = np.full(self.num_nodes, -1, dtype=np.int32)
        decision = np.flatnonzero(self.player >= 0)
        out[decision] = self.slot_infoset[self.edge[self.first_child[decision]]]
        return out

    def player_returns(self, player: int) -> np.ndarray:
        """(N,) ``player``'s terminal returns, zero elsewhere (computed)."""
        out = np.zeros(self.num_nodes)
        out[self.player == TERMINAL] = self.returns_table[self.terminal_outcome, player]
        return out

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays (information-state strings excluded)."""
        return sum(getattr(self, f.name).nbytes for f in dataclasses.fields(self)
                   if isinstance(getattr(self, f.name), np.ndarray))

    def infoset_index(self) -> dict:
        """Maps information-state string to information-state number."""
        return {s: k for k, s in enumerate(self.infoset_strings)}

    def legal_actions(self, infoset: int) -> np.ndarray:
        return self.slot_action[self.infoset_slots[infoset]:self.infoset_slots[infoset + 1]]

    def probability_vector(self, policy_slots: np.ndarray) -> np.ndarray:
        """``[policy slots..., chance probabilities...]``, indexed by ``edge``."""
        return np.concatenate([np.asarray(policy_slots, dtype=np.float64), self.chance_prob])

    def uniform_policy(self) -> np.ndarray:
        """The uniform random policy as a slot vector."""
        counts = np.diff(self.infoset_slots)
        return np.repeat(1.0 / counts, counts)

    def summary(self) -> str:
        return (f"{self.num_nodes:,} nodes ({self.num_terminals:,} terminal, "
                f"{self.num_chance_nodes:,} chance), {self.num_infosets:,} information states, "
                f"{self.num_slots:,} information-state actions")


def cache_dir() -> Path:
    """``$KIBITZ_CACHE`` (trees go in it directly) or ``~/.cache/kibitz/trees``."""
    env = os.environ.get("KIBITZ_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "kibitz" / "trees"


def _game_fingerprint(game: pyspiel.Game) -> str:
    """The cache key: game string, tree format, pyspiel version, and the
    source of a Python game's module (so that editing the game invalidates)."""
    parts = [str(game), f"tree-format={TREE_FORMAT_VERSION}",
             f"pyspiel={getattr(pyspiel, '__version__', '?')}"]
    cls = type(game)
    if cls.__module__ not in ("pyspiel", "builtins"):
        try:
            source = Path(inspect.getsourcefile(cls)).read_bytes()
            parts.append("source=" + hashlib.sha256(source).hexdigest())
            if _compiled_walk(game):  # its compiled rules and their shared helpers
                for module in (game.compiled_rules().kind.py_func.__module__,
                               "kibitz.games._compiled"):
                    rules = Path(inspect.getsourcefile(importlib.import_module(module))).read_bytes()
                    parts.append("rules=" + hashlib.sha256(rules).hexdigest())
        except (TypeError, OSError):
            parts.append(f"class={cls.__module__}.{cls.__qualname__}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]


def _cache_path(game: pyspiel.Game) -> Path:
    name = re.sub(r"[^A-Za-z0-9_.=,-]+", "_", str(game))[:80]
    return cache_dir() / f"{name}-{_game_fingerprint(game)}.npz"


WALKERS = ("auto", "direct", "reference")


def compile_tree(game, *, max_nodes: int = DEFAULT_MAX_NODES, use_cache: bool = True,
                 progress=None, walker: str = "auto", workers: int = 1) -> Tree:
    """Returns the compiled tree of ``game`` (a pyspiel game or game string).

    Reads it from the on-disk cache when present; otherwise walks the game
    once and (with ``use_cache``) stores the result. ``progress``, if given,
    is called with the number of nodes walked so far, every 100,000 nodes.
    Raises :class:`TreeTooLarge` past ``max_nodes`` nodes.

    ``walker`` chooses how the game is walked: ``"reference"`` through the
    pyspiel API alone (a clone per child), ``"direct"`` through a kibitz
    game's Python rules (``DIRECT`` and ``SNAPSHOT``), ``"auto"`` the
    fastest walk the game allows: the compiled walk of a game with
    ``COMPILED`` (whose keys fit in int64 for ``max_nodes``: :func:`_keys_fit`),
    else the direct one, else the reference one. All give
    the identical tree. ``workers=2`` splits the direct walk of a game
    whose root is a chance node over two processes (the same tree again);
    other walks run in one.
    """
    if walker not in WALKERS:
        raise ValueError(f"walker {walker!r}: one of {', '.join(WALKERS)}")
    if workers not in (1, 2):
        raise ValueError(f"workers={workers}: 1 or 2")
    if isinstance(game, str):
        game = pyspiel.load_game(game)
    gtype = game.get_type()
    if gtype.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
        raise ValueError(f"{game}: only sequential games can be compiled "
                         "(wrap a simultaneous game with turn_based_simultaneous_game)")
    path = _cache_path(game) if use_cache else None
    if path is not None and path.exists():
        try:
            tree = load_tree(path)
            if tree.num_nodes <= max_nodes:
                return tree
            _refuse(game, tree.num_nodes, max_nodes, complete=True)
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, UnicodeDecodeError) as e:
            if isinstance(e, TreeTooLarge):
                raise
            # An unreadable cache entry (damaged, truncated, another
            # program's file) is rebuilt below and written anew.
    tree = _walk(game, max_nodes, progress, walker, workers)
    if path is not None:
        save_tree(tree, path)
    return tree


def warm_up() -> None:
    """Compiles the compiled walk and every kibitz game's compiled rules
    into numba's on-disk cache (about 15 s the first time, then a load), by
    compiling each such game's small configuration once; set-up runs it
    (the Makefile), so that a first ``kibitz demo`` or solve does not."""
    from kibitz import games
    for spec in games.REGISTRY.values():
        if search.COMPILED in spec.search:
            compile_tree(spec.small, use_cache=False)


def _refuse(game, count, max_nodes, complete=False):
    what = f"has {count:,} nodes" if complete else f"has more than {max_nodes:,} nodes ({count:,} reached)"
    raise TreeTooLarge(
        f"{game}: the game tree {what}, over the node budget of {max_nodes:,}. "
        "Use a smaller configuration (each kibitz game lists one: `kibitz games`), "
        "raise the budget (--max-nodes) if memory allows, "
        "or use a sampling method such as MCCFR that does not hold the tree.")


def _direct_walk(game: pyspiel.Game) -> bool:
    """A kibitz game whose rules a walk may call on positions it copies
    itself (capabilities ``DIRECT`` and ``SNAPSHOT``)."""
    return {search.DIRECT, search.SNAPSHOT} <= search.capabilities(game)


def _compiled_walk(game: pyspiel.Game) -> bool:
    """A kibitz game whose rules are compiled (capability ``COMPILED``)."""
    return _direct_walk(game) and search.COMPILED in search.capabilities(game)


def _keys_fit(rules, num_players: int, max_nodes: int) -> bool:
    """Whether the compiled walk's keys stay in int64 on a walk of up to
    ``max_nodes`` nodes (or one refused past them): a key is a sequence
    number times ``num_tokens`` plus a token. A game whose tokens are too
    many for the budget (Doubt and Bet with five players, whose reveal
    tokens number the hands shown) is walked directly instead."""
    # a walk pops at most max_nodes + 1 nodes and pushes at most
    # max_branch children of each, and each child interns at most one
    # sequence per player
    most = (num_players + 2 + (max_nodes + 1) * rules.max_branch * num_players) * rules.num_tokens
    return most < 2 ** 62


def _walk(game: pyspiel.Game, max_nodes: int, progress, walker: str = "auto",
          workers: int = 1) -> Tree:
    """Walks ``game`` depth first, then lays the nodes out breadth first."""
    t0 = time.perf_counter()
    if walker == "direct" and not _direct_walk(game):
        raise ValueError(f"walker 'direct': {game} is not a kibitz game with capabilities "
                         "DIRECT and SNAPSHOT; use 'auto' or 'reference'")
    direct = walker != "reference" and _direct_walk(game)
    rules = game.compiled_rules() if walker == "auto" and _compiled_walk(game) else None
    if rules is not None and _keys_fit(rules, game.num_players(), max_nodes):
        walk = _CompiledDepthFirst(game, max_nodes, progress)
        walk.run(rules)
    elif direct and workers == 2:
        walk = _walk_two(game, max_nodes, progress)
    else:
        walk = (_DirectDepthFirst if direct else _DepthFirst)(game, max_nodes, progress)
        walk.run()
    tree = _breadth_first_tree(walk)
    tree.compile_seconds = time.perf_counter() - t0
    _check(tree)
    order = _depth_order(walk.depth)
    assert np.array_equal(tree.node_infoset, np.frombuffer(walk.node_infoset, dtype=np.int32)[order])
    return tree


class _DepthFirst:
    """One depth-first walk of a game: per-node arrays in preorder, and the
    information states in order of discovery."""

    def __init__(self, game: pyspiel.Game, max_nodes: int, progress):
        self.game, self.max_nodes, self.progress = game, max_nodes, progress
        self.n = game.num_players()
        # Per node, in depth-first preorder.
        self.parent = array.array("i")
        self.depth = array.array("i")
        self.action = array.array("i")
        self.player = array.array("b")
        self.node_infoset = array.array("i")
        self.edge_local = array.array("i")  # slot for decisions, chance-edge number for chance
        self.chance_prob = array.array("d")
        self.term_nodes = array.array("i")
        self.term_returns = array.array("d")
        # Per information state.
        self.infoset_of: dict = {}
        self.infoset_legal: list = []  # the legal actions of each, as a list
        self.infoset_player = array.array("i")
        self.infoset_slots = array.array("i", [0])
        self.slot_action = array.array("i")
        self.infoset_parent_slot = array.array("i")
        self.count = 0

    def run(self) -> None:
        """Numbers each node in preorder (refusing one past the budget),
        records its edge, and hands it to its kind's recorder."""
        # own_last[p] is carried down the walk: the slot of p's last decision.
        stack = [(self.game.new_initial_state(), -1, -1, -1, 0, (-1,) * self.n)]
        # bound once: this loop runs once per node
        parent, depth, action, edge_local = (self.parent.append, self.depth.append,
                                             self.action.append, self.edge_local.append)
        terminal, chance, decision = self._terminal, self._push_chance_children, self._push_decision_children
        count, check_at = 0, self._checkpoint(0)
        while stack:
            state, par, act, edge_idx, dep, own_last = stack.pop()
            node = count
            count += 1
            if count >= check_at:
                check_at = self._checkpoint(count)
            parent(par)
            depth(dep)
            action(act)
            edge_local(edge_idx)
            if state.is_terminal():
                terminal(state, node)
            elif state.is_chance_node():
                chance(stack, state, node, dep, own_last)
            else:
                decision(stack, state, node, dep, own_last)
        self.count = count

    def strings(self) -> list:
        """The information-state strings, by number."""
        strings = [None] * len(self.infoset_of)
        for key, k in self.infoset_of.items():
            strings[k] = key
        return strings

    def _checkpoint(self, count: int) -> int:
        """Called when ``count`` nodes are numbered and at most once per
        node: refuses the walk past the budget, reports progress every
        100,000 nodes; returns the count at which to be called next."""
        if count > self.max_nodes:
            _refuse(self.game, count, self.max_nodes)
        if self.progress is not None and count and count % 100_000 == 0:
            self.progress(count)
        return min(count - count % 100_000 + 100_000, self.max_nodes + 1)

    def _terminal(self, state, node: int) -> None:
        self.player.append(TERMINAL)
        self.node_infoset.append(-1)
        self.term_nodes.append(node)
        self.term_returns.extend(state.returns())

    def _push_chance_children(self, stack: list, state, node: int, dep: int, own_last: tuple) -> None:
        """Records a chance node and its edges; pushes its children, last outcome first."""
        self.player.append(CHANCE)
        self.node_infoset.append(-1)
        children = []
        for a, p in state.chance_outcomes():
            if not p > 0:
                raise ValueError(f"{self.game}: chance outcome {a} has probability {p}")
            children.append((a, len(self.chance_prob)))
            self.chance_prob.append(p)
        for (a, e), child in zip(reversed(children), _children(state, [a for a, _ in children])):
            stack.append((child, node, a, e, dep + 1, own_last))

    def _push_decision_children(self, stack: list, state, node: int, dep: int, own_last: tuple) -> None:
        """Records a decision node; pushes its children, last legal action first."""
        cur = state.current_player()
        if cur < 0 or cur >= self.n:
            raise ValueError(f"{self.game}: unsupported current player {cur}")
        self.player.append(cur)
        legal = state.legal_actions(cur)
        k = self.infoset(state.information_state_string(cur), cur, legal, own_last[cur])
        self.node_infoset.append(k)
        base = self.infoset_slots[k]
        for j, child in zip(range(len(legal) - 1, -1, -1), _children(state, legal)):
            last = own_last[:cur] + (base + j,) + own_last[cur + 1:]
            stack.append((child, node, legal[j], base + j, dep + 1, last))

    def infoset(self, key: str, cur: int, legal: list, own_last_slot: int) -> int:
        """The number of information state ``key``: a new one gets its slots;
        a known one must have the same legal actions and the same previous
        own decision (perfect recall)."""
        k = self.infoset_of.get(key)
        if k is None:
            k = len(self.infoset_player)
            self.infoset_of[key] = k
            self.infoset_legal.append(list(legal))
            self.infoset_player.append(cur)
            self.slot_action.extend(legal)
            self.infoset_slots.append(len(self.slot_action))
            self.infoset_parent_slot.append(own_last_slot)
            return k
        if self.infoset_legal[k] != list(legal):
            raise ValueError(f"{self.game}: information state {key!r} has different legal "
                             "actions in different histories")
        if self.infoset_parent_slot[k] != own_last_slot:
            raise ValueError(f"{self.game}: information state {key!r} is reached after different "
                             "own decisions (the game does not have perfect recall)")
        return k


class _DirectDepthFirst(_DepthFirst):
    """The same walk, on one state of a game with ``DIRECT`` and ``SNAPSHOT``
    (``kibitz.games.search``): a child is a snapshot of its parent's
    position and the action into it, played when the child is popped; the
    first child, popped next, plays on the parent's position itself. No
    pyspiel state is cloned and no call goes through C++: the rules
    (``_apply_action``, ``_legal_actions``), ``chance_outcomes``,
    ``returns`` and the information-state observer's ``string_from`` are
    called directly. Nodes, edges and information states come out in the
    reference walk's order."""

    def run(self, state=None, stack=None, stop_at: int = -1) -> None:
        """Walks from ``stack`` (the root's entry by default) on ``state`` (a
        new initial state by default) until the stack is empty or
        ``stop_at`` nodes are numbered; ``self.state`` and ``self.stack``
        are left where the walk stopped."""
        game, n = self.game, self.n
        self.state = state = game.new_initial_state() if state is None else state
        string_from = game.make_py_observer(
            pyspiel.IIGObservationType(perfect_recall=True)).string_from
        snapshot, restore, play = state.snapshot, state.restore, state._apply_action
        is_terminal, current, outcomes_of = state.is_terminal, state.current_player, state.chance_outcomes
        legal_of, returns_of = state._legal_actions, state.returns
        parent, depth, action, edge_local = (self.parent.append, self.depth.append,
                                             self.action.append, self.edge_local.append)
        player, node_infoset = self.player.append, self.node_infoset.append
        term_node, term_returns = self.term_nodes.append, self.term_returns.extend
        chance_prob = self.chance_prob
        slots = self.infoset_slots
        infoset, known = self.infoset, self.infoset_of.get
        legal_of_known, parent_slot = self.infoset_legal, self.infoset_parent_slot
        # (parent's position or None: the one the state holds; action into
        # the node; parent; slot or chance-edge number; depth; own_last)
        if stack is None:
            stack = [(None, -1, -1, -1, 0, (-1,) * n)]
        self.stack = stack
        pop, push = stack.pop, stack.append
        count = self.count
        check_at = self._checkpoint(count)
        while stack and count != stop_at:
            position, act, par, edge_idx, dep, own_last = pop()
            if position is not None:
                restore(position)
            if act >= 0:
                play(act)
            node = count
            count += 1
            if count >= check_at:
                check_at = self._checkpoint(count)
            parent(par)
            depth(dep)
            action(act)
            edge_local(edge_idx)
            dep += 1
            if is_terminal():
                player(TERMINAL)
                node_infoset(-1)
                term_node(node)
                term_returns(returns_of())
                continue
            cur = current()
            if cur == CHANCE:
                player(CHANCE)
                node_infoset(-1)
                outcomes = outcomes_of()
                e0 = len(chance_prob)
                for a, p in outcomes:
                    if not p > 0:
                        raise ValueError(f"{game}: chance outcome {a} has probability {p}")
                    chance_prob.append(p)
                for j in range(len(outcomes) - 1, 0, -1):
                    push((snapshot(), outcomes[j][0], node, e0 + j, dep, own_last))
                push((None, outcomes[0][0], node, e0, dep, own_last))
                continue
            if cur < 0 or cur >= n:
                raise ValueError(f"{game}: unsupported current player {cur}")
            cur = int(cur)
            player(cur)
            legal = legal_of(cur)
            key = string_from(state, cur)
            # a known information state, checked as infoset() checks it
            k = known(key)
            if k is None or legal_of_known[k] != legal or parent_slot[k] != own_last[cur]:
                k = infoset(key, cur, legal, own_last[cur])
            node_infoset(k)
            base = slots[k]
            head, tail = own_last[:cur], own_last[cur + 1:]
            for j in range(len(legal) - 1, 0, -1):
                push((snapshot(), legal[j], node, base + j, dep, head + (base + j,) + tail))
            push((None, legal[0], node, base, dep, head + (base,) + tail))
        self.count = count


class _CompiledDepthFirst(_DepthFirst):
    """The same walk, compiled: ``solvers/_walk.py`` walks the game's
    compiled rules (``search.COMPILED``) in chunks of 100,000 nodes (the
    progress reports between them) into arrays this class grows when the
    walk stops to say they are full. Information states are keyed by their players' token
    sequences, so the walk makes no strings; the tree's
    ``infoset_strings`` are a :class:`ReplayedStrings`."""

    CHUNK = 100_000  #: nodes between progress reports
    # first sizes, small so that a small tree costs little (grown as needed)
    STACK = 4  #: of the stack, in nodes' children (grown by doubling)
    TABLE = 1 << 12  #: of the two hash tables (a power of two; grown 4x)
    OUTPUT = 1 << 12  #: of the per-node outputs (grown by doubling)

    def run(self, rules) -> None:
        """Walks the game with ``rules`` (its ``compiled_rules()``)."""
        from kibitz.solvers import _walk
        n, width, branch = self.n, len(rules.initial), rules.max_branch
        cap = self.STACK * branch
        stack = dict(state=np.zeros((cap, width), np.int64), parent=np.zeros(cap, np.int64),
                     action=np.zeros(cap, np.int64), edge=np.zeros(cap, np.int64),
                     depth=np.zeros(cap, np.int64), own=np.full((cap, n), -1, np.int64),
                     key=np.zeros((cap, n + 1), np.int64))
        stack["state"][0] = rules.initial
        stack["parent"][0] = stack["action"][0] = stack["edge"][0] = -1
        stack["key"][0] = np.arange(n + 1)  # the empty private sequences, the empty public one
        size = min(self.OUTPUT, self.max_nodes + 1)
        out = {name: np.zeros(size, dtype) for name, dtype in _COMPILED_OUT}
        out["chance_prob"] = np.zeros(size * 2 + branch, np.float64)
        out["term_returns"] = np.zeros(size * n, np.float64)
        out["slot_action"] = np.zeros(size * 2 + branch, np.int32)
        out["infoset_slots"] = np.zeros(size + 1, np.int32)
        ctr = np.zeros(9, np.int64)
        ctr[_walk.SP] = 1
        tables = {name: (np.full(self.TABLE, -1, np.int64), np.zeros(self.TABLE, np.int64),
                         np.zeros(self.TABLE, np.int64)) for name in ("intern", "infoset")}
        stop_at = self.CHUNK
        functions = _as_cfuncs(rules)
        # the compiled walk's entry point: its one signature, so no call
        # needs numba's dispatch (which types the six function values anew
        # each time: a fifth of a small tree's compile)
        walk = _walk.walk.overloads[_walk.walk.signatures[0]].entry_point
        while True:
            status = walk(*functions, rules.params, n, rules.num_tokens, branch, ctr,
                          stack["state"], stack["parent"], stack["action"], stack["edge"],
                          stack["depth"], stack["own"], stack["key"],
                          out["parent"], out["depth"], out["action"], out["player"],
                          out["node_infoset"], out["edge_local"], out["chance_prob"],
                          out["term_nodes"], out["term_returns"], out["infoset_player"],
                          out["infoset_slots"], out["slot_action"], out["infoset_parent_slot"],
                          *tables["intern"], *tables["infoset"], stop_at, self.max_nodes)
            if status == _walk.DONE:
                # the reference walk reports a last multiple of 100,000 too
                count = int(ctr[_walk.COUNT])
                if self.progress is not None and count and count % self.CHUNK == 0:
                    self.progress(count)
                break
            if status == _walk.PAUSED:
                if self.progress is not None:
                    self.progress(int(ctr[_walk.COUNT]))
                stop_at += self.CHUNK
            elif status == _walk.FULL:
                # double each group of arrays that is full, the per-node
                # ones up to the budget (a group's arrays keep their ratio)
                count = int(ctr[_walk.COUNT])
                full = {"node": count >= len(out["parent"]),
                        "chance": int(ctr[_walk.CHANCE_EDGES]) + branch > len(out["chance_prob"]),
                        "terminal": int(ctr[_walk.TERMINALS]) >= len(out["term_nodes"]),
                        "infoset": int(ctr[_walk.INFOSETS]) >= len(out["infoset_player"]),
                        "slot": int(ctr[_walk.SLOTS]) + branch > len(out["slot_action"])}
                for name, arr in out.items():
                    group = _OUTPUT_GROUP.get(name, "node")
                    if full[group]:
                        size = 2 * len(arr)
                        if group == "node":
                            size = max(min(size, self.max_nodes + 1), count + 1)
                        grown = np.zeros(size, arr.dtype)
                        grown[:len(arr)] = arr
                        out[name] = grown
            elif status == _walk.FULL_STACK:
                for name, arr in stack.items():
                    stack[name] = np.concatenate([arr, np.zeros_like(arr)])
            elif status == _walk.FULL_TABLE:
                # grow the table that is full (the walk keeps each at most half full)
                need = {"intern": int(ctr[_walk.INTERNED]) + n * branch,
                        "infoset": int(ctr[_walk.INFOSETS]) + 1}
                for name, table in tables.items():
                    if 2 * need[name] > len(table[0]):
                        tables[name] = _walk.regrown(*table, 4 * len(table[0]))
            elif status == _walk.OVER_BUDGET:
                _refuse(self.game, int(ctr[_walk.COUNT]), self.max_nodes)
            else:
                self._raise(int(ctr[_walk.ERROR]), int(ctr[_walk.ERROR_AT]))
        count, ninf = int(ctr[_walk.COUNT]), int(ctr[_walk.INFOSETS])
        nterm = int(ctr[_walk.TERMINALS])
        sizes = {"chance_prob": int(ctr[_walk.CHANCE_EDGES]), "term_nodes": nterm,
                 "term_returns": nterm * n, "infoset_player": ninf, "infoset_slots": ninf + 1,
                 "slot_action": int(ctr[_walk.SLOTS]), "infoset_parent_slot": ninf}
        for name, arr in out.items():
            setattr(self, name, arr[:sizes.get(name, count)])
        self.count = count

    def _raise(self, error: int, at: int) -> None:
        from kibitz.solvers import _walk
        what = {_walk.BAD_PLAYER: f"unsupported current player at node {at}",
                _walk.BAD_CHANCE: f"chance outcome {at} has probability <= 0",
                _walk.OTHER_LEGAL: f"information state {at} has different legal actions in "
                                   "different histories",
                _walk.NO_RECALL: f"information state {at} is reached after different own "
                                 "decisions (the game does not have perfect recall)"}[error]
        raise ValueError(f"{self.game}: {what} (compiled walk)")

    def strings(self) -> None:
        """None: the walk made no strings (the tree gets a :class:`ReplayedStrings`)."""
        return None


_RULES = ("kind", "legal", "outcomes", "apply", "returns", "token")
_CFUNCS: dict = {}  # a rules function (numba dispatcher) -> its C callback


def _as_cfuncs(rules) -> tuple:
    """``rules``' functions as numba C callbacks, made (or read from numba's
    cache) once per process: the walk takes them as function values, and a
    callback converts to one at a third of a dispatcher's cost per call
    (80 against 230 us for six, measured; what a small tree's compile
    costs)."""
    from kibitz.games.search import RULE_SIGNATURES
    out = []
    for name in _RULES:
        fn = getattr(rules, name)
        cf = _CFUNCS.get(fn)
        if cf is None:
            cf = _CFUNCS[fn] = numba.cfunc(RULE_SIGNATURES[name], cache=True)(fn.py_func)
        out.append(cf)
    return tuple(out)


#: the group of each output that is not per node (the walk's capacity checks)
_OUTPUT_GROUP = {"chance_prob": "chance", "term_nodes": "terminal", "term_returns": "terminal",
                 "infoset_player": "infoset", "infoset_slots": "infoset",
                 "infoset_parent_slot": "infoset", "slot_action": "slot"}

#: the compiled walk's per-node and per-information-state outputs: (name, dtype)
_COMPILED_OUT = (("parent", np.int32), ("depth", np.int32), ("action", np.int32),
                 ("player", np.int8), ("node_infoset", np.int32), ("edge_local", np.int32),
                 ("chance_prob", np.float64), ("term_nodes", np.int32),
                 ("term_returns", np.float64), ("infoset_player", np.int32),
                 ("infoset_slots", np.int32), ("slot_action", np.int32),
                 ("infoset_parent_slot", np.int32))


class ReplayedStrings(collections.abc.Sequence):
    """The information-state strings of a tree whose walk made none (the
    compiled walk), made on first use: one history of each information
    state is replayed through the game's Python rules (the histories share
    their prefixes: the walk visits the union of the paths from the root
    to one decision node of each information state) and its player's
    ``information_state_string`` taken. CFR never reads them; writing a
    policy and MCCFR's exact NashConv do. :func:`save_tree` stores them
    only once made."""

    def __init__(self, tree: Tree):
        self._tree = tree
        self._strings = None

    @property
    def made(self) -> bool:
        return self._strings is not None

    def _made(self) -> list:
        if self._strings is None:
            self._strings = _replay_strings(self._tree)
        return self._strings

    def __len__(self) -> int:
        return self._tree.num_infosets

    def __getitem__(self, k):
        return self._made()[k]

    def __iter__(self):
        return iter(self._made())

    def __eq__(self, other) -> bool:
        if isinstance(other, (list, tuple, ReplayedStrings)):
            return self._made() == list(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"ReplayedStrings({len(self)} strings, {'made' if self.made else 'not made yet'})"


def _replay_strings(tree: Tree) -> list:
    """``tree``'s information-state strings, from one replayed history each
    (:class:`ReplayedStrings`)."""
    game = pyspiel.load_game(tree.game_string)
    node_infoset = tree.node_infoset
    decisions = np.flatnonzero(node_infoset >= 0)
    _, first = np.unique(node_infoset[decisions], return_index=True)
    wanted = np.full(tree.num_nodes, -1, dtype=np.int64)  # the information state to read here
    wanted[decisions[first]] = node_infoset[decisions[first]]
    on_path = np.zeros(tree.num_nodes, dtype=bool)
    frontier = np.unique(decisions[first])
    parent = tree.parent.astype(np.int64)
    while len(frontier):
        on_path[frontier] = True
        up = parent[frontier]
        up = up[up >= 0]
        frontier = np.unique(up[~on_path[up]])
    string_from = game.make_py_observer(pyspiel.IIGObservationType(perfect_recall=True)).string_from
    # the nodes on the paths, grouped by parent (breadth-first order keeps
    # a parent's children together), as Python lists for the loop below
    nodes = np.flatnonzero(on_path)
    kids: dict = {}
    for node, up in zip(nodes[1:].tolist(), parent[nodes[1:]].tolist()):
        kids.setdefault(up, []).append(node)
    action, player, wanted = tree.action.tolist(), tree.player.tolist(), wanted.tolist()
    strings = [None] * tree.num_infosets
    state = game.new_initial_state()
    snapshot, restore, play = state.snapshot, state.restore, state._apply_action
    # (node, the position to play its action on, or None: the state's own)
    stack = [(0, None)]
    while stack:
        node, position = stack.pop()
        if position is not None:
            restore(position)
        if node:
            play(action[node])
        k = wanted[node]
        if k >= 0:
            strings[k] = string_from(state, player[node])
        below = kids.get(node)
        if below:
            # the first child, popped next, plays on this position itself
            stack.extend((c, snapshot()) for c in reversed(below[1:]))
            stack.append((below[0], None))
    return strings


_PART_ARRAYS = ("parent", "depth", "action", "player", "node_infoset", "edge_local", "chance_prob",
                "term_nodes", "term_returns", "infoset_player", "infoset_slots", "slot_action",
                "infoset_parent_slot")
_ROOT_CHILD = -2  # a second worker's parent entry for the root's children


def _walk_two(game: pyspiel.Game, max_nodes: int, progress) -> _DirectDepthFirst:
    """The direct walk in two processes: when the root is a chance node,
    a forked worker walks the subtrees of the second half of its outcomes
    while this process walks the first half; :func:`_merge` appends the
    worker's nodes and its new information states as the one walk would
    have. Otherwise (or with a single outcome) one process walks. Each
    process holds to the node budget, the merged walk too; ``progress``
    counts this process's nodes."""
    walk = _DirectDepthFirst(game, max_nodes, progress)
    walk.run(stop_at=1)
    stack = walk.stack
    if walk.player[0] != CHANCE or len(stack) < 2:
        walk.run(walk.state, stack)
        return walk
    theirs = [(pos, act, _ROOT_CHILD, e, dep, own) for pos, act, _, e, dep, own in
              stack[:len(stack) // 2]]
    mine = stack[len(stack) // 2:]
    ctx = multiprocessing.get_context("fork")
    receive, send = ctx.Pipe(duplex=False)
    worker = ctx.Process(target=_walk_part, args=(game, max_nodes, walk.state, theirs, send),
                         daemon=True)
    worker.start()
    send.close()
    try:
        walk.run(walk.state, mine)
        kind, part = receive.recv()
    finally:
        if worker.is_alive():
            worker.terminate()
        worker.join()
    if kind == "error":
        raise part
    _merge(walk, part)
    if walk.count > max_nodes:
        _refuse(game, walk.count, max_nodes)
    return walk


def _walk_part(game, max_nodes, state, stack, send) -> None:
    """A worker of :func:`_walk_two`: walks ``stack`` and sends back the arrays."""
    try:
        part = _DirectDepthFirst(game, max_nodes, None)
        part.run(state, stack)
        keys = [None] * len(part.infoset_of)
        for key, k in part.infoset_of.items():
            keys[k] = key
        send.send(("ok", {"count": part.count, "keys": keys,
                          **{name: getattr(part, name) for name in _PART_ARRAYS}}))
    except BaseException as e:  # raised again in the parent
        send.send(("error", e))
    finally:
        send.close()


def _merge(walk: _DepthFirst, part: dict) -> None:
    """Appends a worker's walk to ``walk``: its nodes after ``walk``'s (in
    preorder, as the one walk numbers them), its chance edges after
    ``walk``'s, and its information states in order of discovery, each one
    ``walk`` already knows checked as :meth:`_DepthFirst.infoset` checks."""
    offset, chance_offset = walk.count, len(walk.chance_prob)
    slots, actions, parent_slot = part["infoset_slots"], part["slot_action"], part["infoset_parent_slot"]
    slot_map = np.empty(len(actions), dtype=np.int64)
    infoset_map = np.empty(len(part["keys"]), dtype=np.int64)
    for i, key in enumerate(part["keys"]):
        lo, hi = slots[i], slots[i + 1]
        own_last = parent_slot[i]
        k = walk.infoset(key, part["infoset_player"][i], list(actions[lo:hi]),
                          int(slot_map[own_last]) if own_last >= 0 else -1)
        infoset_map[i] = k
        slot_map[lo:hi] = np.arange(walk.infoset_slots[k], walk.infoset_slots[k] + hi - lo)
    par = np.frombuffer(part["parent"], dtype=np.int32).astype(np.int64)
    player = np.frombuffer(part["player"], dtype=np.int8)
    edge = np.frombuffer(part["edge_local"], dtype=np.int32).astype(np.int64)
    root_child = par == _ROOT_CHILD
    par_player = np.where(root_child, CHANCE, player[np.maximum(par, 0)])
    below_decision = ~root_child & (par_player != CHANCE)
    below_chance = ~root_child & (par_player == CHANCE)
    edge[below_decision] = slot_map[edge[below_decision]]
    edge[below_chance] += chance_offset
    par = np.where(root_child, 0, par + offset)
    node_infoset = np.frombuffer(part["node_infoset"], dtype=np.int32).astype(np.int64)
    decision = node_infoset >= 0
    node_infoset[decision] = infoset_map[node_infoset[decision]]
    walk.parent.frombytes(par.astype(np.int32).tobytes())
    walk.edge_local.frombytes(edge.astype(np.int32).tobytes())
    walk.node_infoset.frombytes(node_infoset.astype(np.int32).tobytes())
    walk.term_nodes.frombytes((np.frombuffer(part["term_nodes"], dtype=np.int32) + offset)
                              .astype(np.int32).tobytes())
    for name in ("depth", "action", "player", "chance_prob", "term_returns"):
        getattr(walk, name).extend(part[name])
    walk.count += part["count"]


def _breadth_first_tree(walk: _DepthFirst) -> Tree:
    """The tree of a finished walk, its nodes renumbered breadth first: a
    stable sort by depth keeps the children of one parent together and in order."""
    num_nodes, n = walk.count, walk.n
    num_slots = len(walk.slot_action)
    order = _depth_order(walk.depth).astype(np.int32)
    new_of_old = np.empty(num_nodes, dtype=np.int32)
    new_of_old[order] = np.arange(num_nodes, dtype=np.int32)

    player_np = np.frombuffer(walk.player, dtype=np.int8)[order].copy()
    parent_old = np.frombuffer(walk.parent, dtype=np.int32)[order]
    parent_np = np.where(parent_old >= 0, new_of_old[np.maximum(parent_old, 0)], -1).astype(np.int32)
    edge_local_np = np.frombuffer(walk.edge_local, dtype=np.int32)[order]
    # terminal returns in breadth-first node order, each distinct vector once
    term_new = new_of_old[np.frombuffer(walk.term_nodes, dtype=np.int32)]
    term_returns = np.frombuffer(walk.term_returns, dtype=np.float64).reshape(-1, n)
    term_returns = term_returns[np.argsort(term_new, kind="stable")]
    returns_table, outcome = _unique_rows(term_returns)
    chance_prob, chance_index = np.unique(np.frombuffer(walk.chance_prob, dtype=np.float64),
                                          return_inverse=True)
    slots_np = np.frombuffer(walk.infoset_slots, dtype=np.int32).copy()
    slot_infoset = np.repeat(np.arange(len(slots_np) - 1, dtype=np.int32), np.diff(slots_np))
    parent_slot = np.frombuffer(walk.infoset_parent_slot, dtype=np.int32).copy()
    strings = walk.strings()
    tree = Tree(
        game_string=str(walk.game),
        num_players=n,
        player=player_np,
        num_children=_compact(np.bincount(parent_np[1:], minlength=num_nodes),
                              np.uint8, np.uint16, np.uint32),
        parent=parent_np,
        action=_compact(np.frombuffer(walk.action, dtype=np.int32)[order], np.int16, np.int32),
        edge=_edges(edge_local_np, player_np, parent_np, num_slots, chance_index),
        chance_prob=chance_prob,
        terminal_outcome=_compact(outcome.reshape(-1), np.uint16, np.uint32),
        returns_table=returns_table.reshape(-1, n),
        infoset_player=np.frombuffer(walk.infoset_player, dtype=np.int32).astype(np.int8),
        infoset_slots=slots_np,
        slot_action=_compact(np.frombuffer(walk.slot_action, dtype=np.int32), np.int16, np.int32),
        infoset_parent_slot=parent_slot,
        infoset_parent=np.where(parent_slot >= 0, slot_infoset[np.maximum(parent_slot, 0)],
                                -1).astype(np.int32),
        infoset_strings=strings,
    )
    if strings is None:
        tree.infoset_strings = ReplayedStrings(tree)
    return tree


def _depth_order(depth) -> np.ndarray:
    """The preorder nodes' breadth-first order: a stable sort by depth, in
    the smallest unsigned type that holds the depths (numpy then sorts by
    radix, in linear time)."""
    depth = np.frombuffer(depth, dtype=np.int32)
    small = _compact(depth, np.uint8, np.uint16, np.int32) if len(depth) else depth
    return np.argsort(small, kind="stable")


def _unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(rows, axis=0, return_inverse=True)``, by integer codes:
    each column's distinct values are numbered in order, a row's numbers
    make one integer in mixed radix (its order is the rows' lexicographic
    order), and the integers are made unique. Falls back to ``np.unique``
    when the codes would not fit in int64 (equal results: tests)."""
    if rows.size == 0:
        return np.unique(rows, axis=0, return_inverse=True)
    codes = np.zeros(len(rows), dtype=np.int64)
    columns = []
    span = 1
    for j in range(rows.shape[1]):
        values, inverse = np.unique(rows[:, j], return_inverse=True)
        span *= len(values)
        if span >= 2 ** 62:
            return np.unique(rows, axis=0, return_inverse=True)
        codes = codes * len(values) + inverse.reshape(-1)
        columns.append(values)
    distinct, inverse = np.unique(codes, return_inverse=True)
    table = np.empty((len(distinct), rows.shape[1]), dtype=rows.dtype)
    for j in range(rows.shape[1] - 1, -1, -1):
        values = columns[j]
        table[:, j] = values[distinct % len(values)]
        distinct = distinct // len(values)
    return table, inverse.reshape(-1)


_RANGES: dict = {}  # integer dtype -> (min, max)


def _compact(values: np.ndarray, *dtypes) -> np.ndarray:
    """``values`` in the first of ``dtypes`` that holds them all."""
    lo, hi = (int(values.min()), int(values.max())) if len(values) else (0, 0)
    for dtype in dtypes:
        low, high = _RANGES.get(dtype) or _RANGES.setdefault(
            dtype, (int(np.iinfo(dtype).min), int(np.iinfo(dtype).max)))
        if low <= lo and hi <= high:
            return values.astype(dtype)
    raise ValueError(f"values {lo}..{hi} fit none of {dtypes}")


def _edges(edge_local: np.ndarray, player: np.ndarray, parent: np.ndarray, num_slots: int,
           chance_index: np.ndarray) -> np.ndarray:
    """``edge`` from the walk's per-node slot or chance-edge number (see the
    layout); ``chance_index`` maps a chance-edge number to its distinct
    probability."""
    parent_is_chance = np.zeros(len(player), dtype=bool)
    parent_is_chance[1:] = player[parent[1:]] == CHANCE
    edge = edge_local.astype(np.int64)
    edge[parent_is_chance] = chance_index.reshape(-1)[edge[parent_is_chance]] + num_slots
    edge[0] = 0
    return edge.astype(np.uint32)


def _first_children(parent: np.ndarray) -> np.ndarray:
    """``first_child`` of breadth-first nodes: children are contiguous, so a
    parent's first child is where its run of children starts."""
    num_nodes = len(parent)
    first_child = np.zeros(num_nodes, dtype=np.uint32)
    kids = np.arange(1, num_nodes, dtype=np.uint32)
    starts = np.ones(num_nodes - 1, dtype=bool)
    starts[1:] = parent[2:] != parent[1:-1]
    first_child[parent[1:][starts]] = kids[starts]
    return first_child


def _children(state, actions):
    """The children of ``state`` for ``actions``, last action first. The
    last child is ``state`` itself, advanced in place (one clone fewer per
    node: cloning is most of the cost of walking a Python game)."""
    kids = [state.child(a) for a in actions[:-1]]
    state.apply_action(actions[-1])
    kids.append(state)
    return reversed(kids)


def _check(tree: Tree) -> None:
    """Cheap structural checks of a compiled tree."""
    nc = tree.num_children.astype(np.int64)
    internal = tree.player != TERMINAL
    assert np.all(nc[internal] > 0) and np.all(nc[~internal] == 0)
    kids = np.arange(1, tree.num_nodes)
    assert np.all(tree.parent[kids] < kids)
    first = tree.first_child
    assert np.all(first[tree.parent[kids]] <= kids)
    assert np.all(kids < first[tree.parent[kids]] + nc[tree.parent[kids]])


_ARRAYS = ("player", "num_children", "parent", "action", "edge", "chance_prob",
           "terminal_outcome", "returns_table", "infoset_player", "infoset_slots", "slot_action",
           "infoset_parent_slot", "infoset_parent")


def save_tree(tree: Tree, path) -> None:
    """Writes the tree as ``.npz`` atomically (temporary file, then rename).
    Strings a :class:`ReplayedStrings` has not made yet are not written (a
    loaded tree makes them again when asked)."""
    replayed = isinstance(tree.infoset_strings, ReplayedStrings) and not tree.infoset_strings.made
    encoded = [] if replayed else [s.encode("utf-8") for s in tree.infoset_strings]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(b) for b in encoded])
    meta = {"game_string": tree.game_string, "num_players": tree.num_players,
            "tree_format_version": TREE_FORMAT_VERSION, "compile_seconds": tree.compile_seconds,
            "strings": "replayed" if replayed else "stored"}
    atomic_write(path, lambda f: np.savez(
        f, meta=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8),
        strings=np.frombuffer(b"".join(encoded), dtype=np.uint8), string_offsets=offsets,
        **{name: getattr(tree, name) for name in _ARRAYS}))


def load_tree(path) -> Tree:
    with np.load(path, allow_pickle=False) as z:
        meta = json.loads(z["meta"].tobytes().decode())
        if meta.get("tree_format_version") != TREE_FORMAT_VERSION:
            raise ValueError(f"{path}: tree format {meta.get('tree_format_version')}")
        blob = z["strings"].tobytes()
        off = z["string_offsets"]
        strings = [blob[off[k]:off[k + 1]].decode("utf-8") for k in range(len(off) - 1)]
        arrays = {name: z[name] for name in _ARRAYS}
    tree = Tree(game_string=meta["game_string"], num_players=meta["num_players"],
                infoset_strings=strings, compile_seconds=meta.get("compile_seconds", 0.0),
                **arrays)
    if meta.get("strings") == "replayed":
        tree.infoset_strings = ReplayedStrings(tree)
    return tree
