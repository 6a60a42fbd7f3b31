"""The tree compiler's fast walkers give the reference walker's tree.

``compile_tree(walker="auto")`` walks a kibitz game with compiled rules
(capability ``COMPILED``) through them (solvers/_walk.py), another kibitz
game through its Python rules and core snapshots (``DIRECT`` and
``SNAPSHOT``; also ``walker="direct"``, in two processes with
``workers=2``), any other game through the pyspiel API;
``walker="reference"`` always walks the pyspiel API. Every array (values
and dtypes), the information-state strings and CFR+'s NashConv must be
the same on every tree.
"""

import numba
import numpy as np
import pyspiel
import pytest

from kibitz import games
from kibitz.games import search
from kibitz.solvers.cfr import ALGORITHMS, CFRSolver
from kibitz.solvers.evaluate import nash_conv
from kibitz.solvers import tree as tree_module
from kibitz.solvers.tree import (_ARRAYS, ReplayedStrings, TreeTooLarge, _compiled_walk, _direct_walk,
                                 _unique_rows, compile_tree, load_tree, save_tree)

SMALL = sorted(spec.small for spec in games.REGISTRY.values())
#: kuhn_poker and leduc_poker are C++ games, python_kuhn_poker a Python game
#: without capabilities: all three take the reference path under "auto"
OPENSPIEL = ["kuhn_poker", "leduc_poker", "python_kuhn_poker"]


def _trees(game_string, workers=1, walker="auto"):
    game = pyspiel.load_game(game_string)
    if workers == 2 and _direct_walk(game):
        walker = "direct"  # the walk that two processes split
    return (compile_tree(game, use_cache=False, walker="reference"),
            compile_tree(game, use_cache=False, walker=walker, workers=workers))


def _assert_same(ref, fast):
    for name in _ARRAYS + ("first_child", "node_infoset", "slot_infoset", "returns"):  # stored, and computed
        a, b = getattr(ref, name), getattr(fast, name)
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert np.array_equal(a, b), name
    assert fast.infoset_strings == ref.infoset_strings
    assert list(fast.infoset_strings) == list(ref.infoset_strings)
    assert (fast.game_string, fast.num_players) == (ref.game_string, ref.num_players)


@pytest.mark.parametrize("game_string, workers, walker",
                         [(g, 1, "auto") for g in SMALL + OPENSPIEL] +
                         [(g, 1, "direct") for g in SMALL] +
                         [(g, 2, "auto") for g in SMALL + ["leduc_poker"]])
def test_every_walker_gives_the_same_tree(game_string, workers, walker):
    _assert_same(*_trees(game_string, workers, walker))


#: configurations beyond the small ones, with every parameter of each game
#: with compiled rules changed from its small configuration somewhere
COMPILED_MORE = [
    "pub(players=4,suits=2,ranks=3,removed=0,hand=1,payoff=score)",
    "pub(players=3,suits=2,ranks=3,removed=1,hand=1)",
    "pub(players=3,suits=3,ranks=2,removed=1,hand=1)",
    "pub(players=3,suits=1,ranks=6,removed=0,hand=1,payoff=score)",
    "over_under(players=3,copies=1,stacks=2,rounds=1,variant=cutthroat,payoff=score)",
    "over_under(players=1,copies=1,stacks=1,jokers=true)",
    "over_under(players=2,copies=1,stacks=5,rounds=1,variant=cutthroat)",
    "underdog(players=4,cards=6,bank=1,chips=1)",
    "underdog(players=3,cards=5,chips=1,bank=5,last_round_stake=1,max_rounds=1,payoff=chips)",
    "doubt_and_bet(players=2,chips=0,slots=2,colours=1,copies=2,max_rounds=2)",
    "doubt_and_bet(players=2,chips=1,slots=1,colours=2,copies=1,single_bet=true)",
    "doubt_and_bet(players=2,chips=1,slots=1,colours=4,copies=1,single_bet=true)",
    "doubt_and_bet(players=2,chips=2,slots=1,colours=1,copies=1,max_rounds=2,shuffle_every=1,"
    "upkeep_start=0)",
    "doubt_and_bet(players=4,chips=1,slots=1,colours=1,copies=0,single_bet=true)",
    "doubt_and_bet(players=5,chips=1,slots=1,colours=1,copies=3,single_bet=true)",
    "doubt_and_bet(players=2,chips=1,slots=2,colours=1,copies=2,max_rounds=3,upkeep_start=2,"
    "upkeep_every=1)",
    "doubt_and_bet(players=2,chips=3,slots=1,colours=1,copies=1,max_rounds=3,upkeep_start=2,"
    "upkeep_every=1,payoff=rank)",
]


@pytest.mark.parametrize("game_string", COMPILED_MORE)
def test_the_compiled_walk_gives_the_direct_walks_tree(game_string):
    # the direct walk is the reference walk's tree (above); it is faster
    game = pyspiel.load_game(game_string)
    assert _compiled_walk(game)
    _assert_same(compile_tree(game, use_cache=False, walker="direct"),
                 compile_tree(game, use_cache=False))


def test_the_compiled_walk_grows_its_arrays_and_reports_progress(monkeypatch):
    # a stack of one node's children, tables of 4 places, pauses every 1,000
    # nodes: every array is grown many times over, and the tree is the same
    monkeypatch.setattr(tree_module._CompiledDepthFirst, "STACK", 1)
    monkeypatch.setattr(tree_module._CompiledDepthFirst, "TABLE", 4)
    monkeypatch.setattr(tree_module._CompiledDepthFirst, "CHUNK", 1000)
    monkeypatch.setattr(tree_module._CompiledDepthFirst, "OUTPUT", 16)
    seen = []
    game_string = games.REGISTRY["pub"].small
    small = compile_tree(game_string, use_cache=False, progress=seen.append)
    _assert_same(compile_tree(game_string, use_cache=False, walker="reference"), small)
    assert seen == list(range(1000, small.num_nodes + 1, 1000))


def test_strings_of_a_compiled_tree_are_made_when_asked_and_stored_once_made(tmp_path):
    game_string = games.REGISTRY["pub"].small
    tree = compile_tree(game_string, use_cache=False)
    strings = tree.infoset_strings
    assert isinstance(strings, ReplayedStrings) and not strings.made
    assert len(strings) == tree.num_infosets and not strings.made
    save_tree(tree, tmp_path / "lazy.npz")
    loaded = load_tree(tmp_path / "lazy.npz")
    assert isinstance(loaded.infoset_strings, ReplayedStrings) and not loaded.infoset_strings.made
    ref = compile_tree(game_string, use_cache=False, walker="reference").infoset_strings
    assert list(loaded.infoset_strings) == ref and loaded.infoset_strings.made
    assert list(strings) == ref and strings[3] == ref[3] and strings.made
    save_tree(tree, tmp_path / "made.npz")
    assert load_tree(tmp_path / "made.npz").infoset_strings == ref
    assert tree.infoset_index() == {s: k for k, s in enumerate(ref)}


@pytest.mark.parametrize("seed", range(4))
def test_unique_rows_is_numpys(seed):
    rng = np.random.default_rng(seed)
    rows = rng.integers(-3, 4, size=(500, 1 + seed)) / rng.integers(1, 4, size=(1, 1 + seed))
    rows[rng.random(rows.shape) < 0.1] = -0.0
    table, inverse = _unique_rows(rows)
    want_table, want_inverse = np.unique(rows, axis=0, return_inverse=True)
    assert np.array_equal(table, want_table) and np.array_equal(inverse, want_inverse.reshape(-1))
    assert np.array_equal(table[inverse], rows)


def test_unique_rows_falls_back_when_its_codes_would_not_fit():
    rows = np.arange(200 * 9, dtype=np.float64).reshape(200, 9) % 197  # 197**9 > 2**62
    table, inverse = _unique_rows(rows)
    want_table, want_inverse = np.unique(rows, axis=0, return_inverse=True)
    assert np.array_equal(table, want_table) and np.array_equal(inverse, want_inverse.reshape(-1))


def test_a_game_whose_keys_would_overflow_is_walked_directly(monkeypatch):
    game = pyspiel.load_game(games.REGISTRY["pub"].small)
    rules = game.compiled_rules()
    assert tree_module._keys_fit(rules, 3, tree_module.DEFAULT_MAX_NODES)
    many = rules._replace(num_tokens=2 ** 40)
    assert not tree_module._keys_fit(many, 3, tree_module.DEFAULT_MAX_NODES)
    monkeypatch.setattr(type(game), "compiled_rules", lambda self: many)
    monkeypatch.setattr(tree_module._CompiledDepthFirst, "run", None)  # never called
    _assert_same(compile_tree(game, use_cache=False, walker="reference"),
                 compile_tree(game, use_cache=False))


@numba.njit(search.RULE_SIGNATURES["token"])
def _sees_nothing(s, prm, a, player):
    return -1


def test_compiled_rules_that_break_perfect_recall_are_refused(monkeypatch):
    # a token function that shows nothing merges pub's take-or-draw and
    # keep-or-both decisions into one information state
    game = pyspiel.load_game(games.REGISTRY["pub"].small)
    rules = game.compiled_rules()._replace(token=_sees_nothing)
    monkeypatch.setattr(type(game), "compiled_rules", lambda self: rules)
    with pytest.raises(ValueError, match=r"information state \d+ (has different legal actions|is reached after different own decisions)"):
        compile_tree(game, use_cache=False)


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
        game = pyspiel.load_game(spec.small)
        assert _direct_walk(game), spec.short_name
        assert _compiled_walk(game) == (search.COMPILED in spec.search), spec.short_name
    assert _compiled_walk(pyspiel.load_game(games.REGISTRY["pub"].small))
    for game_string in OPENSPIEL:
        assert not _direct_walk(pyspiel.load_game(game_string))
        assert not _compiled_walk(pyspiel.load_game(game_string))
    with pytest.raises(ValueError, match=r"walker 'direct': kuhn_poker\(\) is not a kibitz game"):
        compile_tree("kuhn_poker", use_cache=False, walker="direct")


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


@pytest.mark.parametrize("walker", ["reference", "direct", "auto"])
def test_every_walker_refuses_past_the_budget_at_the_same_count(walker):
    with pytest.raises(TreeTooLarge, match=r"\(1,001 reached\)"):
        compile_tree(games.REGISTRY["pub"].small, use_cache=False, walker=walker, max_nodes=1000)


def test_two_processes_refuse_past_the_budget():
    # each half is under the budget, the whole tree over it
    with pytest.raises(TreeTooLarge, match="over the node budget of 4,000"):
        compile_tree(games.REGISTRY["pub"].small, use_cache=False, walker="direct", workers=2,
                     max_nodes=4000)
    # the worker's refusal reaches the caller
    with pytest.raises(TreeTooLarge, match="over the node budget of 1,000"):
        compile_tree(games.REGISTRY["pub"].small, use_cache=False, walker="direct", workers=2,
                     max_nodes=1000)


def test_warm_up_compiles_every_game_with_compiled_rules(monkeypatch):
    compiled = []
    monkeypatch.setattr(tree_module, "compile_tree", lambda g, **kw: compiled.append((g, kw)))
    tree_module.warm_up()
    want = sorted(spec.small for spec in games.REGISTRY.values() if search.COMPILED in spec.search)
    assert sorted(g for g, _ in compiled) == want and len(want) >= 4  # the four first games and any new one
    assert all(kw == {"use_cache": False} for _, kw in compiled)


def test_the_cache_key_of_a_compiled_game_is_made_in_a_fresh_process():
    # the key hashes the game's compiled rules and games/_compiled.py, which
    # nothing may have imported yet (Pub's rules do not import it)
    import subprocess
    import sys
    code = ("import pyspiel; from kibitz.solvers.tree import _game_fingerprint; "
            f"print(_game_fingerprint(pyspiel.load_game({games.REGISTRY['pub'].small!r})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == tree_module._game_fingerprint(pyspiel.load_game(games.REGISTRY["pub"].small))
