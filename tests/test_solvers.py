"""Solvers I: the tree compiler, CFR variants, exact evaluation, policy
files and ``kibitz solve``; numbers compared with OpenSpiel's own."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import numpy as np
import pyspiel
import pytest
from click.testing import CliRunner
from open_spiel.python.algorithms import cfr as os_cfr
from open_spiel.python import policy as policy_module
from open_spiel.python.algorithms import best_response as os_best_response
from open_spiel.python.algorithms import discounted_cfr, expected_game_score, exploitability

from kibitz import games  # noqa: F401  (registers the kibitz games)
from kibitz.cli import main
from kibitz.commands import solve as solve_cmd
from kibitz.solvers import driver
from kibitz.solvers import (ALGORITHMS, CFRSolver, TreeTooLarge, best_response, compile_tree,
                     expected_returns, load_policy, make_config, nash_conv, policy_to_slots,
                     read_policy_file)
from kibitz.solvers.evaluate import exploitability as exploitability_of
from kibitz.solvers.policy_file import policy_document, write_policy_file
from kibitz.solvers.tree import CHANCE, TERMINAL, load_tree

UNDERDOG_SMALL = "underdog(players=3,cards=5,bank=2)"


@pytest.fixture(autouse=True, scope="module")
def _tree_cache(tmp_path_factory):
    """Compiled trees go to a temporary cache, not the user's."""
    old = os.environ.get("KIBITZ_CACHE")
    os.environ["KIBITZ_CACHE"] = str(tmp_path_factory.mktemp("trees"))
    yield
    if old is None:
        del os.environ["KIBITZ_CACHE"]
    else:
        os.environ["KIBITZ_CACHE"] = old


def _tree(game_string):
    return compile_tree(pyspiel.load_game(game_string))


# --- tree compiler ----------------------------------------------------------

def _replay(game, tree, node):
    path = []
    while node > 0:
        path.append(int(tree.action[node]))
        node = int(tree.parent[node])
    state = game.new_initial_state()
    for a in reversed(path):
        state.apply_action(a)
    return state


def test_kuhn_tree_has_chance_nodes_with_exact_probabilities():
    game = pyspiel.load_game("kuhn_poker")
    tree = _tree("kuhn_poker")
    # 3 deals to player 0, 2 to player 1, then 4 terminal sequences of
    # at most 3 bets: 1 + 3 + 6 + 6 * 8 = 58 nodes, 6 * 5 = 30 terminal.
    assert (tree.num_nodes, tree.num_terminals, tree.num_chance_nodes) == (58, 30, 4)
    assert tree.num_infosets == 12 and tree.num_players == 2
    assert tree.player[0] == CHANCE
    root_kids = np.arange(tree.first_child[0], tree.first_child[0] + tree.num_children[0])
    np.testing.assert_allclose(tree.chance_prob[tree.edge[root_kids] - tree.num_slots], [1 / 3] * 3)
    for i in np.flatnonzero(tree.player == CHANCE):
        kids = np.arange(tree.first_child[i], tree.first_child[i] + tree.num_children[i])
        assert tree.chance_prob[tree.edge[kids] - tree.num_slots].sum() == pytest.approx(1.0)
    for i in range(tree.num_nodes):
        state = _replay(game, tree, i)
        if tree.player[i] == TERMINAL:
            assert state.is_terminal()
            np.testing.assert_array_equal(tree.returns[i], state.returns())
        elif tree.player[i] >= 0:
            k = tree.node_infoset[i]
            assert tree.infoset_strings[k] == state.information_state_string()
            assert list(tree.legal_actions(k)) == state.legal_actions()
            kids = np.arange(tree.first_child[i], tree.first_child[i] + tree.num_children[i])
            assert list(tree.action[kids]) == state.legal_actions()


def test_one_player_tree_and_its_optimal_value():
    # Cliff walking 2x3: start bottom left, cliff between, goal bottom right;
    # the shortest safe path (up, right, right, down) costs 4.
    tree = _tree("cliff_walking(height=2,width=3,horizon=6)")
    assert tree.num_players == 1 and tree.num_chance_nodes == 0
    assert set(np.unique(tree.infoset_player)) == {0}
    value, choice = best_response(tree, tree.uniform_policy(), 0)
    assert value == pytest.approx(-4.0)
    root = tree.node_infoset[0]
    assert tree.slot_action[tree.infoset_slots[root] + choice[root]] == 1  # UP


def test_tree_cache_round_trip():
    first = compile_tree("leduc_poker")
    files = list(Path(os.environ["KIBITZ_CACHE"]).glob("leduc_poker*.npz"))
    assert len(files) == 1
    again = load_tree(files[0])
    for name in ("player", "first_child", "edge", "chance_prob", "returns", "slot_action"):
        np.testing.assert_array_equal(getattr(first, name), getattr(again, name))
    assert again.infoset_strings == first.infoset_strings
    assert (first.num_nodes, first.num_infosets) == (9457, 936)


def test_node_budget_is_refused_with_the_count_and_a_hint():
    with pytest.raises(TreeTooLarge) as err:
        compile_tree("leduc_poker", max_nodes=1000, use_cache=False)
    msg = str(err.value)
    assert "1,001 reached" in msg and "node budget of 1,000" in msg
    assert "smaller configuration" in msg and "MCCFR" in msg


def test_cli_reports_the_node_budget(tmp_path):
    out = tmp_path / "leduc.json"
    result = CliRunner().invoke(main, ["solve", "leduc_poker", "--max-nodes", "500", "--no-cache",
                                       "--out", str(out)])
    assert result.exit_code == 1
    assert "501 reached" in result.output and not out.exists()


# --- CFR against OpenSpiel -----------------------------------------------------

@pytest.mark.parametrize("game_string,iterations", [
    ("kuhn_poker", 200), ("kuhn_poker(players=3)", 60), ("leduc_poker", 20)])
@pytest.mark.parametrize("algorithm,reference", [
    ("cfr", pyspiel.CFRSolver), ("cfr+", pyspiel.CFRPlusSolver)])
def test_cfr_matches_openspiel(game_string, iterations, algorithm, reference):
    game = pyspiel.load_game(game_string)
    tree = _tree(game_string)
    theirs = reference(game)
    for _ in range(iterations):
        theirs.evaluate_and_update_policy()
    ours = CFRSolver(tree, ALGORITHMS[algorithm])
    ours.run(iterations)
    expected = pyspiel.nash_conv(game, theirs.average_policy())
    assert nash_conv(tree, ours.average_policy()) == pytest.approx(expected, abs=1e-9)
    np.testing.assert_allclose(ours.average_policy(),
                               policy_to_slots(tree, theirs.average_policy()), atol=1e-9)


@pytest.mark.parametrize("game_string", ["kuhn_poker", "kuhn_poker(players=3)"])
@pytest.mark.parametrize("algorithm", ["lcfr", "dcfr"])
def test_discounted_variants_match_openspiel_python(game_string, algorithm):
    game = pyspiel.load_game(game_string)
    theirs = {"lcfr": discounted_cfr.LCFRSolver, "dcfr": discounted_cfr.DCFRSolver}[algorithm](game)
    for _ in range(40):
        theirs.evaluate_and_update_policy()
    tree = _tree(game_string)
    ours = CFRSolver(tree, ALGORITHMS[algorithm])
    ours.run(40)
    expected = exploitability.nash_conv(game, theirs.average_policy())
    assert nash_conv(tree, ours.average_policy()) == pytest.approx(expected, abs=1e-9)


def test_dcfr_parameters_match_openspiel_python():
    game = pyspiel.load_game("kuhn_poker")
    theirs = discounted_cfr.DCFRSolver(game, alpha=2.0, beta=0.5, gamma=1.0)
    for _ in range(30):
        theirs.evaluate_and_update_policy()
    ours = CFRSolver(_tree("kuhn_poker"), make_config("dcfr", alpha=2.0, beta=0.5, gamma=1.0))
    ours.run(30)
    expected = exploitability.nash_conv(game, theirs.average_policy())
    assert nash_conv(ours.tree, ours.average_policy()) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("algorithm,rm_plus,linear", [("cfr", False, False), ("cfr+", True, True)])
def test_simultaneous_updates_match_openspiel_python(algorithm, rm_plus, linear):
    game = pyspiel.load_game("kuhn_poker(players=3)")
    theirs = os_cfr._CFRSolver(game, alternating_updates=False, linear_averaging=linear,
                               regret_matching_plus=rm_plus)
    for _ in range(25):
        theirs.evaluate_and_update_policy()
    ours = CFRSolver(_tree("kuhn_poker(players=3)"),
                     make_config(algorithm, alternating_updates=False))
    ours.run(25)
    expected = exploitability.nash_conv(game, theirs.average_policy())
    assert nash_conv(ours.tree, ours.average_policy()) == pytest.approx(expected, abs=1e-9)


def test_kuhn_game_value_is_minus_one_eighteenth():
    tree = _tree("kuhn_poker")
    solver = CFRSolver(tree, ALGORITHMS["cfr+"])
    solver.run(1000)
    values = expected_returns(tree, solver.average_policy())
    assert values[0] == pytest.approx(-1 / 18, abs=1e-3)
    assert values[1] == pytest.approx(1 / 18, abs=1e-3)
    assert nash_conv(tree, solver.average_policy()) < 1e-3


def test_cfr_plus_reduces_nash_conv_on_leduc():
    tree = _tree("leduc_poker")
    solver = CFRSolver(tree, ALGORITHMS["cfr+"])
    solver.run(10)
    early = nash_conv(tree, solver.average_policy())
    solver.run(190)
    assert nash_conv(tree, solver.average_policy()) < early / 5


# --- exact evaluation ------------------------------------------------------------

def test_uniform_kuhn_nash_conv_is_eleven_twelfths():
    tree = _tree("kuhn_poker")
    assert nash_conv(tree, tree.uniform_policy()) == pytest.approx(11 / 12, abs=1e-12)


@pytest.mark.parametrize("game_string", ["kuhn_poker", "kuhn_poker(players=3)", "leduc_poker",
                                         "cliff_walking(height=2,width=3,horizon=6)"])
@pytest.mark.parametrize("seed", [0, 1])
def test_nash_conv_equals_pyspiel_on_random_policies(game_string, seed):
    game = pyspiel.load_game(game_string)
    tree = _tree(game_string)
    rng = np.random.default_rng(seed)
    policy = rng.random(tree.num_slots) ** 3  # skewed, with some near-zero actions
    policy[rng.random(tree.num_slots) < 0.2] = 0.0
    from kibitz.solvers.cfr import normalise
    policy = normalise(tree, policy)
    as_dict = {key: [(int(a), float(p)) for a, p in zip(tree.legal_actions(k),
                                                        policy[tree.infoset_slots[k]:
                                                               tree.infoset_slots[k + 1]])]
               for k, key in enumerate(tree.infoset_strings)}
    assert policy_to_slots(tree, as_dict) == pytest.approx(policy)
    assert nash_conv(tree, policy) == pytest.approx(pyspiel.nash_conv(game, as_dict), abs=1e-9)


def test_best_response_values_equal_openspiel_per_player():
    game = pyspiel.load_game("kuhn_poker(players=3)")
    tree = _tree("kuhn_poker(players=3)")
    rng = np.random.default_rng(7)
    from kibitz.solvers.cfr import normalise
    policy = normalise(tree, rng.random(tree.num_slots))
    tab = policy_module.TabularPolicy(game)
    for k, key in enumerate(tree.infoset_strings):
        lo, hi = tree.infoset_slots[k], tree.infoset_slots[k + 1]
        tab.policy_for_key(key)[tree.legal_actions(k)] = policy[lo:hi]
    root = game.new_initial_state()
    for p in range(3):
        expected = os_best_response.BestResponsePolicy(game, p, tab).value(root)
        assert best_response(tree, policy, p)[0] == pytest.approx(expected, abs=1e-12)
    assert expected_returns(tree, policy) == pytest.approx(
        expected_game_score.policy_value(root, [tab] * 3), abs=1e-12)


def test_exploitability_equals_pyspiel_for_two_players():
    game = pyspiel.load_game("leduc_poker")
    tree = _tree("leduc_poker")
    solver = CFRSolver(tree, ALGORITHMS["cfr+"])
    solver.run(30)
    avg = solver.average_policy()
    as_dict = {key: list(zip(tree.legal_actions(k).tolist(),
                             avg[tree.infoset_slots[k]:tree.infoset_slots[k + 1]].tolist()))
               for k, key in enumerate(tree.infoset_strings)}
    assert exploitability_of(tree, avg) == pytest.approx(pyspiel.exploitability(game, as_dict),
                                                         abs=1e-12)


# --- policy files ------------------------------------------------------------------

@pytest.mark.parametrize("name", ["kuhn.json", "kuhn.json.gz"])
def test_policy_file_round_trip(tmp_path, name):
    game = pyspiel.load_game("kuhn_poker")
    tree = _tree("kuhn_poker")
    solver = CFRSolver(tree, ALGORITHMS["cfr+"])
    solver.run(100)
    avg = solver.average_policy()
    nc = nash_conv(tree, avg)
    path = tmp_path / name
    write_policy_file(path, policy_document(tree, avg, algorithm="cfr+",
                                            settings=solver.config.as_dict(), iterations=100,
                                            nash_conv=nc))
    doc = read_policy_file(path)
    assert doc["format"] == "kibitz-policy" and doc["format_version"] == 1
    assert doc["game"] == "kuhn_poker()" and doc["iterations"] == 100
    assert doc["settings"]["regret_matching_plus"] is True
    lo = tree.infoset_slots[tree.infoset_index()["0"]]  # player 0 holding the jack
    assert doc["policy"]["0"] == {"player": 0, "actions": [0, 1], "probs": list(avg[lo:lo + 2])}
    tab = load_policy(path)
    assert exploitability.nash_conv(game, tab) == pytest.approx(nc, abs=1e-12)
    assert policy_to_slots(tree, tab) == pytest.approx(avg, abs=0)


def test_load_policy_refuses_a_file_for_another_game(tmp_path):
    tree = _tree("kuhn_poker")
    doc = policy_document(tree, tree.uniform_policy(), algorithm="cfr")
    doc["game"] = "leduc_poker()"
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="missing"):
        load_policy(path)
    doc["format_version"] = 99
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="version"):
        load_policy(path)


# --- kibitz solve ---------------------------------------------------------------

def _solve(*args):
    result = CliRunner().invoke(main, ["solve", *args, "--no-progress"])
    assert result.exit_code == 0, result.output
    return result


def _policy(path):
    return read_policy_file(path)["policy"]


def test_solve_writes_a_policy_and_a_summary(tmp_path):
    out = tmp_path / "kuhn.json"
    result = _solve("kuhn_poker", "--algorithm", "cfr+", "--iterations", "300", "--out", str(out))
    doc = read_policy_file(out)
    assert doc["iterations"] == 300 and doc["algorithm"] == "cfr+"
    assert doc["nash_conv"] < 0.01
    for needle in ("game:", "kuhn_poker()", "58 nodes", "iterations:  300", "seconds:", "NashConv:"):
        assert needle in result.output
    tab = load_policy(out)
    assert exploitability.nash_conv(pyspiel.load_game("kuhn_poker"), tab) == \
        pytest.approx(doc["nash_conv"], abs=1e-12)


def test_resumed_run_ends_with_the_straight_runs_policy(tmp_path):
    straight = tmp_path / "straight.json"
    _solve("leduc_poker", "-a", "dcfr", "-n", "40", "--eval-every", "7", "--out", str(straight))
    split = tmp_path / "split.json"
    _solve("leduc_poker", "-a", "dcfr", "-n", "15", "--out", str(split))
    assert read_policy_file(split)["iterations"] == 15
    result = _solve("leduc_poker", "-a", "dcfr", "-n", "40", "--out", str(split), "--resume")
    assert "resumed" in result.output and read_policy_file(split)["iterations"] == 40
    assert _policy(split) == _policy(straight)


def test_interrupted_run_checkpoints_and_resumes(tmp_path):
    """A stop request (what SIGINT/SIGTERM set) mid-run writes a checkpoint;
    --resume then finishes with the uninterrupted run's policy."""
    straight = tmp_path / "straight.json"
    _solve("kuhn_poker(players=3)", "-a", "cfr", "-n", "50", "--out", str(straight))

    class StopAfter(dict):
        def __init__(self, calls):
            super().__init__(signal=None)
            self.calls = calls

        def get(self, key, default=None):
            self.calls -= 1
            return self.calls < 0

    tree = _tree("kuhn_poker(players=3)")
    config = ALGORITHMS["cfr"]
    solver = CFRSolver(tree, config)
    out = tmp_path / "cut.json"
    ckpt = driver.checkpoint_path(out)
    meta = driver.checkpoint_meta(tree.game_string, "cfr", config.as_dict(),
                                  nodes=int(tree.num_nodes), slots=int(tree.num_slots))
    reason, _, _ = driver.run_solver(
        solver, iterations=50, checkpoint=ckpt, meta=meta,
        stop_flag=StopAfter(17), progress=False, evaluate=None)
    assert reason == "interrupted" and solver.iteration == 17 and ckpt.exists()
    _solve("kuhn_poker(players=3)", "-a", "cfr", "-n", "50", "--out", str(out), "--resume")
    assert _policy(out) == _policy(straight)


def test_signals_set_the_stop_flag():
    with driver.stop_on_signals() as flag:
        os.kill(os.getpid(), signal.SIGTERM)
        assert flag["signal"] == signal.SIGTERM
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_resume_refuses_another_algorithms_checkpoint(tmp_path):
    out = tmp_path / "k.json"
    _solve("kuhn_poker", "-a", "cfr", "-n", "5", "--out", str(out))
    result = CliRunner().invoke(main, ["solve", "kuhn_poker", "-a", "cfr+", "-n", "9", "--out",
                                       str(out), "--resume", "--no-progress"])
    assert result.exit_code != 0 and "algorithm" in result.output
    result = CliRunner().invoke(main, ["solve", "kuhn_poker", "-n", "9", "--out",
                                       str(tmp_path / "none.json"), "--resume"])
    assert result.exit_code != 0 and "no checkpoint" in result.output


def test_solve_stops_at_the_target_nash_conv(tmp_path):
    out = tmp_path / "k.json"
    result = _solve("kuhn_poker", "-n", "100000", "--target-nashconv", "0.01", "--eval-every", "10",
                    "--out", str(out))
    doc = read_policy_file(out)
    assert doc["nash_conv"] <= 0.01 and doc["iterations"] < 100000
    assert doc["iterations"] % 10 == 0 and "target NashConv reached" in result.output


def test_solve_stops_at_the_time_limit(tmp_path):
    out = tmp_path / "k.json"
    result = _solve("kuhn_poker", "-n", "100000000", "--time", "0.3s", "--eval-every", "0",
                    "--out", str(out))
    assert "time limit" in result.output
    assert 0 < read_policy_file(out)["iterations"] < 100000000


def test_solve_one_player_game_reports_the_optimal_value(tmp_path):
    out = tmp_path / "cliff.json"
    result = _solve("cliff_walking(height=2,width=3,horizon=6)", "--out", str(out))
    assert "optimal expected value: -4" in result.output
    doc = read_policy_file(out)
    assert doc["optimal_value"] == pytest.approx(-4.0) and doc["nash_conv"] == 0.0


def test_duration_parsing():
    assert solve_cmd.parse_duration("90") == 90.0
    assert solve_cmd.parse_duration("1h30m") == 5400.0
    assert solve_cmd.parse_duration("0.5s") == 0.5
    with pytest.raises(Exception, match="duration"):
        solve_cmd.parse_duration("ten minutes")


# --- a kibitz game ---------------------------------------------------------------

def test_underdog_small_compiles_and_solves():
    game = pyspiel.load_game(UNDERDOG_SMALL)
    tree = _tree(UNDERDOG_SMALL)
    assert tree.num_players == 3 and tree.num_chance_nodes > 0
    assert tree.num_nodes == 5966 and tree.num_infosets == 980
    uniform_nc = nash_conv(tree, tree.uniform_policy())
    solver = CFRSolver(tree, ALGORITHMS["cfr+"])
    solver.run(100)
    avg = solver.average_policy()
    nc = nash_conv(tree, avg)
    assert nc < uniform_nc / 10
    values = expected_returns(tree, avg)
    assert values.sum() == pytest.approx(1.0)  # payoff "win": the winners share 1
    as_dict = {key: list(zip(tree.legal_actions(k).tolist(),
                             avg[tree.infoset_slots[k]:tree.infoset_slots[k + 1]].tolist()))
               for k, key in enumerate(tree.infoset_strings)}
    assert nc == pytest.approx(pyspiel.nash_conv(game, as_dict), abs=1e-9)


def test_clustered_mean_by_hand():
    """values 1, 2 | 3 | 6 in three clusters: mean 3; cluster sums 3, 3, 6
    against 3 x sizes 6, 3, 3 leave -3, 0, 3, so se = sqrt(18 * 3/2) / 4."""
    from kibitz.solvers.stats import clustered_mean
    mean, se, k = clustered_mean([1, 2, 3, 6], ["a", "a", "b", "c"])
    assert (mean, k) == (3.0, 3) and se == pytest.approx(27 ** 0.5 / 4)
    # one item per cluster: the usual standard error of the mean
    x = [0.5, 1.5, -2.0, 4.0, 1.0]
    assert clustered_mean(x, range(5))[1] == pytest.approx(np.std(x, ddof=1) / 5 ** 0.5)
    assert clustered_mean([], [])[2] == 0
