"""The tree compiler's fast walker gives the reference walker's tree.

``compile_tree(walker="auto")`` walks a kibitz game through its rules and
core snapshots (capabilities ``DIRECT`` and ``SNAPSHOT``), any other game
through the pyspiel API, in two processes with ``workers=2``;
``walker="reference"`` always walks the pyspiel API. Every array (values and dtypes), the information-state strings and
CFR+'s NashConv must be the same on both trees.
"""

import numpy as np
import pyspiel
import pytest

from kibitz import games
from kibitz.games import search
from kibitz.solvers.cfr import ALGORITHMS, CFRSolver
from kibitz.solvers.evaluate import nash_conv
from kibitz.solvers.tree import _ARRAYS, TreeTooLarge, _direct_walk, compile_tree

SMALL = sorted(spec.small for spec in games.REGISTRY.values())
#: kuhn_poker and leduc_poker are C++ games, python_kuhn_poker a Python game
#: without capabilities: all three take the reference path under "auto"
OPENSPIEL = ["kuhn_poker", "leduc_poker", "python_kuhn_poker"]


def _trees(game_string, workers=1):
    game = pyspiel.load_game(game_string)
    return (compile_tree(game, use_cache=False, walker="reference"),
            compile_tree(game, use_cache=False, walker="auto", workers=workers))


@pytest.mark.parametrize("game_string, workers", [(g, 1) for g in SMALL + OPENSPIEL] +
                         [(g, 2) for g in SMALL + ["leduc_poker"]])
def test_both_walkers_give_the_same_tree(game_string, workers):
    ref, fast = _trees(game_string, workers)
    for name in _ARRAYS + ("first_child", "node_infoset", "slot_infoset", "returns"):  # stored, and computed
        a, b = getattr(ref, name), getattr(fast, name)
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert np.array_equal(a, b), name
    assert fast.infoset_strings == ref.infoset_strings
    assert (fast.game_string, fast.num_players) == (ref.game_string, ref.num_players)


@pytest.mark.parametrize("game_string", SMALL + ["leduc_poker"])
def test_cfr_plus_nash_conv_is_the_same_on_both_trees(game_string):
    values = []
    for tree in _trees(game_string):
        solver = CFRSolver(tree, ALGORITHMS["cfr+"])
        solver.run(50)
        values.append(nash_conv(tree, solver.average_policy()))
    assert values[0] == values[1]


def test_kibitz_games_take_the_direct_walk_and_others_do_not():
    for spec in games.REGISTRY.values():
        assert _direct_walk(pyspiel.load_game(spec.small)), spec.short_name
    for game_string in OPENSPIEL:
        assert not _direct_walk(pyspiel.load_game(game_string))


@pytest.mark.parametrize("name", sorted(games.REGISTRY))
def test_a_restored_snapshot_is_the_position_it_was_taken_from(name):
    game = pyspiel.load_game(games.REGISTRY[name].small)
    assert search.SNAPSHOT in search.capabilities(game)
    state = game.new_initial_state()
    rng = np.random.default_rng(5)
    observer = game.make_py_observer(pyspiel.IIGObservationType(perfect_recall=True))
    while not state.is_terminal():
        before = str(state)
        position = state.snapshot()
        if state.is_chance_node():
            actions = [a for a, _ in state.chance_outcomes()]
        else:
            actions = state.legal_actions()
            player = state.current_player()
            strings = observer.string_from(state, player)
        state._apply_action(actions[-1])  # changes the state, not the snapshot
        state.restore(position)
        assert str(state) == before
        if not state.is_chance_node():
            assert observer.string_from(state, player) == strings
        state._apply_action(actions[int(rng.integers(len(actions)))])


def test_an_unknown_walker_or_worker_count_is_refused():
    with pytest.raises(ValueError, match="walker"):
        compile_tree("kuhn_poker", use_cache=False, walker="fast")
    with pytest.raises(ValueError, match="workers"):
        compile_tree("kuhn_poker", use_cache=False, workers=3)


@pytest.mark.parametrize("walker", ["reference", "auto"])
def test_both_walkers_refuse_past_the_budget_at_the_same_count(walker):
    with pytest.raises(TreeTooLarge, match=r"\(1,001 reached\)"):
        compile_tree(games.REGISTRY["pub"].small, use_cache=False, walker=walker, max_nodes=1000)


def test_two_processes_refuse_past_the_budget():
    # each half is under the budget, the whole tree over it
    with pytest.raises(TreeTooLarge, match="over the node budget of 4,000"):
        compile_tree(games.REGISTRY["pub"].small, use_cache=False, workers=2, max_nodes=4000)
    # the worker's refusal reaches the caller
    with pytest.raises(TreeTooLarge, match="over the node budget of 1,000"):
        compile_tree(games.REGISTRY["pub"].small, use_cache=False, workers=2, max_nodes=1000)
