"""Exact evaluation of policy profiles on a compiled tree, for any number of
players: expected returns, best responses, NashConv and exploitability.

A policy here is a *slot vector*: ``policy[s]`` is the probability of action
``tree.slot_action[s]`` at information state ``tree.slot_infoset[s]`` (see
:mod:`solvers.tree`). :func:`policy_to_slots` converts OpenSpiel policies and
plain dictionaries into one.

Definitions (as OpenSpiel's ``open_spiel/python/algorithms/exploitability.py``
and ``best_response.py`` use them):

* ``expected_returns``: ``v_p(sigma)`` for every player ``p``.
* ``best_response_value(p)``: ``max over pure sigma'_p of v_p(sigma'_p,
  sigma_-p)``; computed bottom-up per information state of ``p`` (choose the
  action with the largest sum over the information state's histories of
  ``pi_-p(h) * value``), deepest own decisions first. Exact for games with
  perfect recall, which :func:`solvers.tree.compile_tree` checks.
* ``nash_conv = sum_p (best_response_value(p) - v_p(sigma))``, as
  ``pyspiel.nash_conv``.
* ``exploitability = nash_conv / n``. For zero-sum and constant-sum games
  this equals OpenSpiel's ``(sum_p best_response_value(p) - utility_sum) / n``.
"""

from __future__ import annotations

import weakref

import numpy as np

from kibitz.solvers import _kernels as K
from kibitz.solvers.tree import Tree


def _infoset_levels(tree: Tree) -> np.ndarray:
    """Number of own decisions before each information state."""
    level = np.zeros(tree.num_infosets, dtype=np.int32)
    parent = tree.infoset_parent
    for k in range(tree.num_infosets):  # parents have smaller numbers
        if parent[k] >= 0:
            level[k] = level[parent[k]] + 1
    return level


#: id(tree) -> its information-state levels; an entry is dropped with its tree
_LEVELS: dict[int, np.ndarray] = {}


def _levels(tree: Tree) -> np.ndarray:
    """:func:`_infoset_levels`, computed once per tree (kept here, beside the
    evaluation that needs it, rather than written onto the tree)."""
    key = id(tree)
    cached = _LEVELS.get(key)
    if cached is None:
        cached = _LEVELS[key] = _infoset_levels(tree)
        weakref.finalize(tree, _LEVELS.pop, key, None)
    return cached


def expected_returns(tree: Tree, policy: np.ndarray) -> np.ndarray:
    """Expected returns of every player under the profile ``policy``."""
    val = tree.returns  # computed afresh: terminal rows are the returns
    K.expected_values(tree.first_child, tree.num_children, tree.edge,
                      tree.probability_vector(policy), val, val)
    return val[0].copy()


def best_response(tree: Tree, policy: np.ndarray, player: int):
    """Best response of ``player`` to the others' parts of ``policy``.

    Returns ``(value, choice)``: the best-response value and, for every
    information state of ``player``, the index among its legal actions of
    the chosen action (the first maximiser; -1 for other players'
    information states).
    """
    prob = tree.probability_vector(policy)
    opp = np.zeros(tree.num_nodes)
    first_child, node_infoset = tree.first_child, tree.node_infoset  # computed: once here
    K.opponent_reach(first_child, tree.num_children, tree.player, tree.edge, prob, player, opp)
    levels = _levels(tree)
    infosets = np.flatnonzero(tree.infoset_player == player).astype(np.int32)
    best = np.full(tree.num_infosets, -1, dtype=np.int32)
    best[infosets] = 0
    util = tree.player_returns(player)
    w = np.zeros(tree.num_nodes)
    top = int(levels[infosets].max()) if len(infosets) else -1
    q = np.zeros(tree.num_slots)
    for level in range(top, -1, -1):
        q[:] = 0.0
        K.best_response_pass(first_child, tree.num_children, tree.player, tree.edge, util,
                             player, opp, node_infoset, levels, level, best, w, q)
        K.choose_best(infosets, tree.infoset_slots, levels, level, q, best)
    K.best_response_pass(first_child, tree.num_children, tree.player, tree.edge, util,
                         player, opp, node_infoset, levels, -1, best, w, q)
    return float(w[0]), best


def best_response_policy(tree: Tree, choice: np.ndarray, base: np.ndarray | None = None) -> np.ndarray:
    """A slot vector playing ``choice`` (from :func:`best_response`) where it
    is set and ``base`` (default uniform) elsewhere."""
    out = (tree.uniform_policy() if base is None else np.array(base, dtype=np.float64))
    for k in np.flatnonzero(choice >= 0):
        lo, hi = tree.infoset_slots[k], tree.infoset_slots[k + 1]
        out[lo:hi] = 0.0
        out[lo + choice[k]] = 1.0
    return out


def best_response_values(tree: Tree, policy: np.ndarray) -> np.ndarray:
    return np.array([best_response(tree, policy, p)[0] for p in range(tree.num_players)])


def nash_conv(tree: Tree, policy: np.ndarray, *, details: bool = False):
    """``sum_p (best_response_value(p) - v_p)``; with ``details`` returns
    ``(nash_conv, best_response_values, expected_returns)``."""
    br = best_response_values(tree, policy)
    on = expected_returns(tree, policy)
    nc = float(np.sum(br - on))
    return (nc, br, on) if details else nc


def exploitability(tree: Tree, policy: np.ndarray) -> float:
    """``nash_conv / num_players``."""
    return nash_conv(tree, policy) / tree.num_players


def policy_to_slots(tree: Tree, policy, *, default: str = "error") -> np.ndarray:
    """A slot vector from an OpenSpiel policy or a mapping.

    ``policy`` may be an ``open_spiel.python.policy.TabularPolicy``, a
    ``pyspiel.Policy`` (e.g. a C++ solver's ``average_policy()``), or a mapping
    from information-state string to ``{action: prob}`` or ``[(action, prob)]``.
    An information state that the policy does not cover raises (``default``
    ``"error"``) or gets the uniform policy (``"uniform"``).
    """
    out = np.zeros(tree.num_slots)
    lookup = getattr(policy, "state_lookup", None)
    table = getattr(policy, "action_probability_array", None)
    for k, key in enumerate(tree.infoset_strings):
        lo, hi = tree.infoset_slots[k], tree.infoset_slots[k + 1]
        actions = tree.slot_action[lo:hi]
        probs = None
        if lookup is not None:
            row = lookup.get(key)
            if row is not None:
                probs = table[row][actions]
        elif hasattr(policy, "get_state_policy"):
            try:
                pairs = policy.get_state_policy(key)
            except Exception:  # noqa: BLE001 - pyspiel raises SpielError for unknown keys
                pairs = None
            if pairs is not None:
                d = dict(pairs)
                probs = np.array([d.get(int(a), 0.0) for a in actions])
        else:
            entry = policy.get(key)
            if entry is not None:
                d = dict(entry.items() if hasattr(entry, "items") else entry)
                probs = np.array([d.get(int(a), 0.0) for a in actions])
        if probs is None:
            if default != "uniform":
                raise KeyError(f"the policy has no entry for information state {key!r}")
            probs = np.full(hi - lo, 1.0 / (hi - lo))
        out[lo:hi] = probs
    return out
