"""Outcome-sampling MCCFR on the games' compiled rules (solvers/mccfr_compiled.py)."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest
from click.testing import CliRunner

import kibitz.games  # noqa: F401  (registers the games)
from kibitz.cli import main
from kibitz.games import REGISTRY
from kibitz.solvers import evaluate as ev
from kibitz.solvers import _mccfr_kernels as K
from kibitz.solvers import mccfr, read_policy_file
from kibitz.solvers import tree as tree_mod
from kibitz.solvers.mccfr_compiled import ARRAYS, CompiledMCCFR

GAMES = ("pub", "underdog", "over_under", "doubt_and_bet")


def _solver(name, seed=0, **kw):
    return CompiledMCCFR(pyspiel.load_game(REGISTRY[name].small), np.random.default_rng(seed), **kw)


def _same(a, b):
    for name in ARRAYS:
        n = a.ctr[K.NH] if name == "hist" else a.ctr[K.NE] if name.startswith("e_") else a.ctr[K.NS]
        np.testing.assert_array_equal(getattr(a, name)[:n], getattr(b, name)[:n], err_msg=name)
    kept = [i for i in range(K.CTR_SIZE) if i not in (K.NEED, K.NJ, K.NJE)]  # not the scratch counters
    np.testing.assert_array_equal(a.ctr[kept], b.ctr[kept])
    np.testing.assert_array_equal(a.rng, b.rng)


@pytest.mark.parametrize("sampling", ["os", "es"])
@pytest.mark.parametrize("name", GAMES)
def test_its_information_states_are_the_trees_and_it_converges(name, sampling):
    """Every information state the hashed tokens tell apart is one of the
    compiled tree's, with its player and legal actions; most of the tree's
    real decisions (more than one action) are met; and the average policy's
    NashConv falls to a third of the uniform policy's in 20,000 iterations
    (outcome sampling) or 2,000 (external sampling)."""
    s = _solver(name, sampling=sampling)
    s.run(20000 if sampling == "os" else 2000)
    tree = tree_mod.compile_tree(s.game)
    index = {key: k for k, key in enumerate(tree.infoset_strings)}
    for key, (legal, regrets, avg, player) in s.table.items():
        k = index[key]
        lo, hi = int(tree.infoset_slots[k]), int(tree.infoset_slots[k + 1])
        assert legal == tree.slot_action[lo:hi].tolist() and player == int(tree.infoset_player[k])
    real = sum(int(tree.infoset_slots[k + 1] - tree.infoset_slots[k]) > 1 for k in range(tree.num_infosets))
    assert 0.85 * real <= len(s.table) <= real and s.collisions == 0
    uniform = ev.nash_conv(tree, tree.uniform_policy())
    assert ev.nash_conv(tree, ev.policy_to_slots(tree, s.average_policy(), default="uniform")) < uniform / 3


@pytest.mark.parametrize("sampling", ["os", "es"])
def test_a_run_is_the_same_whatever_its_batches_and_resumes(sampling):
    whole = _solver("underdog", sampling=sampling)
    whole.run(2000)
    part = _solver("underdog", sampling=sampling)
    part._batch = 3
    part.run(700)
    state = part.state_dict()
    resumed = _solver("underdog", seed=99, sampling=sampling)  # the seed is the checkpoint's
    resumed.load_state_dict(state)
    resumed._batch = 1
    resumed.run(1300)
    _same(whole, resumed)
    other = _solver("underdog", seed=1, sampling=sampling)
    other.run(2000)
    assert not np.array_equal(other.regret[:100], whole.regret[:100])


@pytest.mark.parametrize("sampling", ["os", "es"])
def test_the_memory_limit_undoes_the_iteration_in_progress(sampling):
    """Tables that cannot grow stop the run with "memory" where an
    iteration began; resumed without the limit it ends where an
    uninterrupted run does."""
    whole = _solver("over_under", sampling=sampling)
    whole.run(3000)
    small = _solver("over_under", max_bytes=60_000, sampling=sampling)
    small.iteration_limit = 3000
    reason = None
    while small.iteration < 3000 and reason is None:
        reason = small.iterate()
    assert reason == "memory" and 0 < small.iteration < 3000
    assert small.table_bytes() <= 60_000
    resumed = _solver("over_under", sampling=sampling)
    resumed.load_state_dict(small.state_dict())
    resumed.run(3000 - resumed.iteration)
    _same(whole, resumed)


def test_solve_uses_it_for_mccfr_os_and_resumes_exactly(tmp_path):
    game = REGISTRY["pub"].small
    run = lambda *a: CliRunner().invoke(main, ["solve", game, "-a", "mccfr-os", "--no-progress", *a])  # noqa: E731
    r = run("-n", "4000", "-o", str(tmp_path / "whole.json"))
    assert r.exit_code == 0, r.output
    assert "NashConv:" in r.output and "not computed" not in r.output
    r = run("-n", "1500", "-o", str(tmp_path / "part.json"))
    assert r.exit_code == 0, r.output
    r = run("-n", "4000", "-o", str(tmp_path / "part.json"), "--resume")
    assert r.exit_code == 0, r.output
    whole, part = read_policy_file(tmp_path / "whole.json"), read_policy_file(tmp_path / "part.json")
    assert whole["iterations"] == part["iterations"] == 4000
    assert whole["policy"] == part["policy"] and whole["nash_conv"] == part["nash_conv"]
    # the Python solver's checkpoint is another solver's: refused in one line
    r = CliRunner().invoke(main, ["solve", game, "-a", "mccfr-es", "-n", "10", "--no-progress",
                                  "-o", str(tmp_path / "part.json"), "--resume"])
    assert r.exit_code != 0 and "Traceback" not in r.output


def test_solve_stops_at_the_tables_share_of_max_memory(tmp_path):
    out = tmp_path / "ud.json"
    r = CliRunner().invoke(main, ["solve", REGISTRY["underdog"].small, "-a", "mccfr-os", "-n", "100000",
                                  "--max-memory", "500k", "--out", str(out), "--no-progress"])
    assert r.exit_code == 0, r.output
    assert "stopped at the memory limit: the tables (" in r.output and "(memory limit)" in r.output
    assert 0 < read_policy_file(out)["iterations"] < 100000


def test_make_solver_picks_the_backend():
    kuhn = pyspiel.load_game("kuhn_poker")
    pub = pyspiel.load_game(REGISTRY["pub"].small)
    assert mccfr.make_solver(pub, 0, "mccfr-os")[1] == "compiled"
    assert mccfr.make_solver(pub, 0, "mccfr-es", es_states=2000)[1] == "compiled"
    # an iteration too long to run without stopping part-way, or of unknown length: the Python solver
    assert mccfr.make_solver(pub, 0, "mccfr-es", es_states=10**6)[1] == "python"
    assert mccfr.make_solver(pub, 0, "mccfr-es")[1] == "python"
    assert mccfr.make_solver(kuhn, 0, "mccfr-es", es_states=10)[1] == "python"
    assert mccfr.make_solver(kuhn, 0, "mccfr-os")[1] == "python"
    assert mccfr.make_solver(pub, 0, "mccfr-os", backend="python")[1] == "python"
    with pytest.raises(ValueError, match="no compiled rules"):
        mccfr.make_solver(kuhn, 0, "mccfr-os", backend="compiled")
    with pytest.raises(ValueError, match="allowed: auto, compiled, python"):
        mccfr.make_solver(pub, 0, "mccfr-os", backend="fast")
