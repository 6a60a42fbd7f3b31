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
``first_child``        (N,) uint32 index of the first child (0 for terminals)
``num_children``       (N,) uint32 number of children (0 for terminals)
``parent``             (N,) int32  parent index (-1 for the root)
``action``             (N,) int32  action leading to the node (-1 for the root)
``edge``               (N,) uint32 where the probability of the edge into the
                                   node lives in a probability vector: a slot
                                   ``< S`` for a decision (the current policy),
                                   ``S + j`` for the ``j``-th chance edge (0 for
                                   the root, which has no edge)
``chance_prob``        (C,) f64    probabilities of the chance edges
``node_infoset``       (N,) int32  information state of a decision node, or -1
``returns``            (N, n) f64  terminal returns (0 elsewhere)
``infoset_player``     (I,) int32  player to act
``infoset_slots``      (I+1,) i32  slots of information state ``k`` are
                                   ``infoset_slots[k]:infoset_slots[k+1]``
``slot_action``        (S,) int32  the legal action of each slot (ascending)
``slot_infoset``       (S,) int32  the information state of each slot
``infoset_parent_slot``(I,) int32  the slot of the same player's previous
                                   decision on the path (-1 if none)
``infoset_strings``    I strings   ``information_state_string`` of each
=====================  ==========  ==============================================

Index arrays that the hot loops read are unsigned, which spares numba a
negative-index check on every access (measured: about 1.5x faster CFR).

Nodes are in breadth-first order: a parent comes before its children, and
the children of a node are contiguous, in ascending action order, so
``first_child[i] + k`` is the child reached by the ``k``-th legal action (or
``k``-th chance outcome). Top-down passes run ``i = 0..N-1``, bottom-up
passes the reverse. Information states are numbered in order of discovery
in a depth-first walk, so a player's earlier information state always has a
smaller number than a later one on the same path.

Compiled trees are cached on disk, keyed by the game string (plus, for a
Python game, a hash of the module that defines it, so an edited game is
compiled afresh), under ``$KIBITZ_CACHE`` or ``~/.cache/kibitz/trees``.

A game whose tree exceeds ``max_nodes`` is refused with
:class:`TreeTooLarge`, naming the count reached, instead of exhausting
memory.
"""

from __future__ import annotations

import array
import dataclasses
import hashlib
import inspect
import json
import os
import re
import time
from pathlib import Path

import numpy as np
import pyspiel

from kibitz.solvers._io import atomic_write

TREE_FORMAT_VERSION = 2
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
    first_child: np.ndarray
    num_children: np.ndarray
    parent: np.ndarray
    action: np.ndarray
    edge: np.ndarray
    chance_prob: np.ndarray
    node_infoset: np.ndarray
    returns: np.ndarray
    infoset_player: np.ndarray
    infoset_slots: np.ndarray
    slot_action: np.ndarray
    slot_infoset: np.ndarray
    infoset_parent_slot: np.ndarray
    infoset_strings: list
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
        except (TypeError, OSError):
            parts.append(f"class={cls.__module__}.{cls.__qualname__}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]


def _cache_path(game: pyspiel.Game) -> Path:
    name = re.sub(r"[^A-Za-z0-9_.=,-]+", "_", str(game))[:80]
    return cache_dir() / f"{name}-{_game_fingerprint(game)}.npz"


def compile_tree(game, *, max_nodes: int = DEFAULT_MAX_NODES, use_cache: bool = True,
                 progress=None) -> Tree:
    """Returns the compiled tree of ``game`` (a pyspiel game or game string).

    Reads it from the on-disk cache when present; otherwise walks the game
    once and (with ``use_cache``) stores the result. ``progress``, if given,
    is called with the number of nodes walked so far, every 100,000 nodes.
    Raises :class:`TreeTooLarge` past ``max_nodes`` nodes.
    """
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
        except (OSError, ValueError, KeyError) as e:
            if isinstance(e, TreeTooLarge):
                raise
            # An unreadable cache entry is rebuilt below.
    tree = _walk(game, max_nodes, progress)
    if path is not None:
        save_tree(tree, path)
    return tree


def _refuse(game, count, max_nodes, complete=False):
    what = f"has {count:,} nodes" if complete else f"has more than {max_nodes:,} nodes ({count:,} reached)"
    raise TreeTooLarge(
        f"{game}: the game tree {what}, over the node budget of {max_nodes:,}. "
        "Use a smaller configuration (each kibitz game lists one: `kibitz games`), "
        "raise the budget (--max-nodes) if memory allows, "
        "or use a sampling method such as MCCFR that does not hold the tree.")


def _walk(game: pyspiel.Game, max_nodes: int, progress) -> Tree:
    t0 = time.perf_counter()
    n = game.num_players()
    # Per node, in depth-first preorder.
    parent = array.array("i")
    depth = array.array("i")
    action = array.array("i")
    player = array.array("b")
    node_infoset = array.array("i")
    edge_local = array.array("i")  # slot for decisions, chance-edge number for chance
    chance_prob = array.array("d")
    term_nodes = array.array("i")
    term_returns = array.array("d")
    # Per information state.
    infoset_of: dict = {}
    infoset_player = array.array("i")
    infoset_slots = array.array("i", [0])
    slot_action = array.array("i")
    infoset_parent_slot = array.array("i")
    # own_last[p] is carried down the walk: the slot of p's last decision.
    stack = [(game.new_initial_state(), -1, -1, -1, 0, (-1,) * n)]
    count = 0
    while stack:
        state, par, act, edge_idx, dep, own_last = stack.pop()
        node = count
        count += 1
        if count > max_nodes:
            _refuse(game, count, max_nodes)
        if progress is not None and count % 100_000 == 0:
            progress(count)
        parent.append(par)
        depth.append(dep)
        action.append(act)
        edge_local.append(edge_idx)
        if state.is_terminal():
            player.append(TERMINAL)
            node_infoset.append(-1)
            term_nodes.append(node)
            term_returns.extend(state.returns())
            continue
        if state.is_chance_node():
            player.append(CHANCE)
            node_infoset.append(-1)
            outcomes = state.chance_outcomes()
            children = []
            for a, p in outcomes:
                if not p > 0:
                    raise ValueError(f"{game}: chance outcome {a} has probability {p}")
                children.append((a, len(chance_prob)))
                chance_prob.append(p)
            for (a, e), child in zip(reversed(children), _children(state, [a for a, _ in children])):
                stack.append((child, node, a, e, dep + 1, own_last))
            continue
        cur = state.current_player()
        if cur < 0 or cur >= n:
            raise ValueError(f"{game}: unsupported current player {cur}")
        player.append(cur)
        key = state.information_state_string(cur)
        legal = state.legal_actions(cur)
        k = infoset_of.get(key)
        if k is None:
            k = len(infoset_player)
            infoset_of[key] = k
            infoset_player.append(cur)
            slot_action.extend(legal)
            infoset_slots.append(len(slot_action))
            infoset_parent_slot.append(own_last[cur])
        else:
            base, end = infoset_slots[k], infoset_slots[k + 1]
            if list(slot_action[base:end]) != list(legal):
                raise ValueError(f"{game}: information state {key!r} has different legal "
                                 "actions in different histories")
            if infoset_parent_slot[k] != own_last[cur]:
                raise ValueError(f"{game}: information state {key!r} is reached after different "
                                 "own decisions (the game does not have perfect recall)")
        node_infoset.append(k)
        base = infoset_slots[k]
        for j, child in zip(range(len(legal) - 1, -1, -1), _children(state, legal)):
            last = own_last[:cur] + (base + j,) + own_last[cur + 1:]
            stack.append((child, node, legal[j], base + j, dep + 1, last))
    num_nodes = count
    num_slots = len(slot_action)

    # Renumber into breadth-first order: a stable sort by depth keeps the
    # children of one parent together and in order.
    depth_np = np.frombuffer(depth, dtype=np.int32)
    order = np.argsort(depth_np, kind="stable").astype(np.int32)
    new_of_old = np.empty(num_nodes, dtype=np.int32)
    new_of_old[order] = np.arange(num_nodes, dtype=np.int32)

    player_np = np.frombuffer(player, dtype=np.int8)[order].copy()
    parent_old = np.frombuffer(parent, dtype=np.int32)[order]
    parent_np = np.where(parent_old >= 0, new_of_old[np.maximum(parent_old, 0)], -1).astype(np.int32)
    action_np = np.frombuffer(action, dtype=np.int32)[order].copy()
    edge_local_np = np.frombuffer(edge_local, dtype=np.int32)[order]
    parent_is_chance = np.zeros(num_nodes, dtype=bool)
    parent_is_chance[1:] = player_np[parent_np[1:]] == CHANCE
    edge_np = np.where(parent_is_chance, edge_local_np + num_slots, edge_local_np)
    edge_np[0] = 0
    edge_np = edge_np.astype(np.uint32)
    num_children = np.bincount(parent_np[1:], minlength=num_nodes).astype(np.uint32)
    first_child = np.zeros(num_nodes, dtype=np.uint32)
    # Children are contiguous: the first child of a parent is where its run starts.
    kids = np.arange(1, num_nodes, dtype=np.uint32)
    starts = np.ones(num_nodes - 1, dtype=bool)
    starts[1:] = parent_np[2:] != parent_np[1:-1]
    first_child[parent_np[1:][starts]] = kids[starts]
    returns_np = np.zeros((num_nodes, n), dtype=np.float64)
    if len(term_nodes):
        returns_np[new_of_old[np.frombuffer(term_nodes, dtype=np.int32)]] = \
            np.frombuffer(term_returns, dtype=np.float64).reshape(-1, n)

    slots_np = np.frombuffer(infoset_slots, dtype=np.int32).copy()
    strings = [None] * len(infoset_of)
    for s, k in infoset_of.items():
        strings[k] = s
    tree = Tree(
        game_string=str(game),
        num_players=n,
        player=player_np,
        first_child=first_child,
        num_children=num_children,
        parent=parent_np,
        action=action_np,
        edge=edge_np,
        chance_prob=np.frombuffer(chance_prob, dtype=np.float64).copy(),
        node_infoset=np.frombuffer(node_infoset, dtype=np.int32)[order].copy(),
        returns=returns_np,
        infoset_player=np.frombuffer(infoset_player, dtype=np.int32).copy(),
        infoset_slots=slots_np,
        slot_action=np.frombuffer(slot_action, dtype=np.int32).copy(),
        slot_infoset=np.repeat(np.arange(len(strings), dtype=np.int32), np.diff(slots_np)),
        infoset_parent_slot=np.frombuffer(infoset_parent_slot, dtype=np.int32).copy(),
        infoset_strings=strings,
        compile_seconds=time.perf_counter() - t0,
    )
    _check(tree)
    return tree


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
    assert np.all(tree.first_child[tree.parent[kids]] <= kids)
    assert np.all(kids < tree.first_child[tree.parent[kids]] + nc[tree.parent[kids]])


_ARRAYS = ("player", "first_child", "num_children", "parent", "action", "edge", "chance_prob",
           "node_infoset", "returns", "infoset_player", "infoset_slots", "slot_action",
           "slot_infoset", "infoset_parent_slot")


def save_tree(tree: Tree, path) -> None:
    """Writes the tree as ``.npz`` atomically (temporary file, then rename)."""
    encoded = [s.encode("utf-8") for s in tree.infoset_strings]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(b) for b in encoded])
    meta = {"game_string": tree.game_string, "num_players": tree.num_players,
            "tree_format_version": TREE_FORMAT_VERSION, "compile_seconds": tree.compile_seconds}
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
    return Tree(game_string=meta["game_string"], num_players=meta["num_players"],
                infoset_strings=strings, compile_seconds=meta.get("compile_seconds", 0.0),
                **arrays)
