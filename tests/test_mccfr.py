"""Monte Carlo CFR (solvers/mccfr.py)."""

import os

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import exploitability

from kibitz import games
from kibitz.agents import make_agent
from kibitz.agents.heuristics import HEURISTICS
from kibitz.solvers import evaluate as ev
from kibitz.solvers.mccfr import MCCFR, PolicyPlayer, regret_matching
from kibitz.solvers.tree import compile_tree


def nash_conv(game, solver):
    return exploitability.nash_conv(game, solver.tabular_policy())


def test_regret_matching():
    assert regret_matching([1.0, -2.0, 3.0]) == pytest.approx([0.25, 0.0, 0.75])
    assert regret_matching([0.0, -1.0]) == [0.5, 0.5]


@pytest.mark.parametrize("sampling, iters, bound", [("es", 2000, 0.08), ("os", 4000, 0.25)])
def test_kuhn_nash_conv_falls(sampling, iters, bound):
    game = pyspiel.load_game("kuhn_poker")
    solver = MCCFR(game, np.random.default_rng(0), sampling)
    solver.run(20)
    early = nash_conv(game, solver)
    solver.run(iters - 20)
    late = nash_conv(game, solver)
    # uniform play has NashConv 11/12 in Kuhn poker
    assert late < bound < early
    assert len(solver.table) == 12  # every information state of Kuhn poker is visited


def test_three_player_kuhn():
    game = pyspiel.load_game("kuhn_poker(players=3)")
    solver = MCCFR(game, np.random.default_rng(1), "es")
    solver.run(10)
    early = nash_conv(game, solver)
    solver.run(1500)
    assert nash_conv(game, solver) < 0.5 * early


def test_leduc_nash_conv_falls():
    game = pyspiel.load_game("leduc_poker")
    solver = MCCFR(game, np.random.default_rng(2), "es")
    solver.run(50)
    early = nash_conv(game, solver)
    solver.run(1950)
    late = nash_conv(game, solver)
    assert late < 0.6 * early


@pytest.mark.parametrize("name", ["underdog", "pub"])
def test_small_kibitz_configuration_nash_conv_falls(name):
    # NashConv by the exact evaluator on the compiled tree
    game = pyspiel.load_game(games.REGISTRY[name].small)
    tree = compile_tree(game, use_cache=False)
    uniform = ev.nash_conv(tree, tree.uniform_policy())
    solver = MCCFR(game, np.random.default_rng(3), "es")
    solver.run(300)
    late = ev.nash_conv(tree, ev.policy_to_slots(tree, solver.average_policy(), default="uniform"))
    assert late < 0.5 * uniform


def test_same_seed_same_tables():
    game = pyspiel.load_game("leduc_poker")
    for sampling in ("es", "os"):
        a = MCCFR(game, np.random.default_rng(7), sampling)
        b = MCCFR(game, np.random.default_rng(7), sampling)
        c = MCCFR(game, np.random.default_rng(8), sampling)
        for s in (a, b, c):
            s.run(100)
        assert a.table == b.table
        assert a.average_policy() == b.average_policy()
        assert a.table != c.table


def test_checkpoint_resume_is_exact():
    game = pyspiel.load_game(games.REGISTRY["pub"].small)
    whole = MCCFR(game, np.random.default_rng(5), "os")
    whole.run(200)
    first = MCCFR(game, np.random.default_rng(5), "os")
    first.run(120)
    data = first.checkpoint()
    resumed = MCCFR(game, np.random.default_rng(99), "os")
    resumed.load_state_dict(first.state_dict())  # through the JSON of a checkpoint file
    resumed.run(80)
    assert resumed.iteration == 200
    assert resumed.table == whole.table
    with pytest.raises(ValueError, match="sampling"):
        MCCFR(game, np.random.default_rng(5), "es").restore(data)


def test_forced_moves_have_no_entry_and_entries_are_real_decisions():
    game = pyspiel.load_game(games.REGISTRY["doubt_and_bet"].small)
    solver = MCCFR(game, np.random.default_rng(0), "es")
    solver.run(100)
    assert solver.table
    assert all(len(legal) >= 2 for legal, _, _, _ in solver.table.values())
    for probs in solver.average_policy().values():
        assert sum(probs.values()) == pytest.approx(1.0)


def _state_at_unseen_and_seen(game, policy, seed):
    rng = np.random.default_rng(seed)
    seen = unseen = None
    for _ in range(200):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[int(rng.integers(len(outcomes)))][0])
                continue
            legal = state.legal_actions()
            if len(legal) > 1:
                key = state.information_state_string(state.current_player())
                if key in policy and seen is None:
                    seen = state.clone()
                if key not in policy and unseen is None:
                    unseen = state.clone()
            state.apply_action(legal[int(rng.integers(len(legal)))])
        if seen is not None and unseen is not None:
            return seen, unseen
    raise AssertionError("no unseen information state found")


def test_fallback_on_unseen_information_states():
    game = pyspiel.load_game("underdog")
    solver = MCCFR(game, np.random.default_rng(0), "os", fallback="heuristic")
    solver.run(5)
    policy = solver.average_policy()
    seen, unseen = _state_at_unseen_and_seen(game, policy, seed=1)

    uniform = PolicyPlayer(game, policy, fallback="uniform")
    legal = unseen.legal_actions()
    assert uniform.action_probabilities(unseen) == {a: 1.0 / len(legal) for a in legal}
    assert uniform.last_source == "fallback"
    key = seen.information_state_string(seen.current_player())
    assert uniform.action_probabilities(seen) == policy[key]
    assert uniform.last_source == "policy"

    player = unseen.current_player()
    by_agent = PolicyPlayer(game, policy, fallback=lambda seat: make_agent(solver.fallback, game, seat, 4))
    expected = HEURISTICS["underdog"](game, player, 4).action_probabilities(unseen)
    assert by_agent.action_probabilities(unseen) == expected
    assert by_agent.last_source == "fallback"


def test_bad_arguments():
    game = pyspiel.load_game("kuhn_poker")
    with pytest.raises(ValueError, match="sampling"):
        MCCFR(game, np.random.default_rng(0), "vanilla")
    with pytest.raises(ValueError, match="epsilon"):
        MCCFR(game, np.random.default_rng(0), "os", epsilon=0.0)


def test_kibitz_solve_mccfr_writes_a_loadable_policy_and_resumes_exactly(tmp_path):
    from click.testing import CliRunner

    from kibitz.cli import main
    from kibitz.solvers import load_policy, read_policy_file

    small = games.REGISTRY["doubt_and_bet"].small
    whole, part = tmp_path / "whole.json", tmp_path / "part.json"
    run = CliRunner().invoke
    r = run(main, ["solve", small, "-a", "mccfr-es", "-n", "60", "--seed", "4", "--out", str(whole),
                   "--no-progress"])
    assert r.exit_code == 0, r.output
    assert "mccfr-es" in r.output and "NashConv" in r.output
    doc = read_policy_file(whole)
    assert doc["algorithm"] == "mccfr-es" and doc["iterations"] == 60 and doc["fallback"] == "uniform"
    cov = doc["coverage"]
    assert cov["complete"] and cov["visited"] + cov["filled_with_fallback"] == len(doc["policy"])
    tab = load_policy(whole)  # every information state is in the file
    assert tab.action_probability_array.sum(axis=1) == pytest.approx(1.0)
    # 25 iterations, then --resume to 60: the same policy as one run of 60
    for n, extra in (("25", []), ("60", ["--resume"])):
        r = run(main, ["solve", small, "-a", "mccfr-es", "-n", n, "--seed", "4", "--out", str(part),
                       "--no-progress", *extra])
        assert r.exit_code == 0, r.output
    assert read_policy_file(part)["policy"] == doc["policy"]
    r = run(main, ["solve", small, "-a", "mccfr-os", "-n", "60", "--seed", "4", "--out", str(part),
                   "--no-progress", "--resume"])
    assert r.exit_code != 0 and "checkpoint" in r.output


def test_kibitz_solve_mccfr_records_a_fallback_agent(tmp_path):
    from click.testing import CliRunner

    from kibitz.cli import main
    from kibitz.solvers import read_policy_file

    out = tmp_path / "ud.json.gz"
    r = CliRunner().invoke(main, ["solve", "underdog", "-a", "mccfr-os", "-n", "3", "--fallback", "heuristic",
                                  "--max-nodes", "100", "--out", str(out), "--no-progress"])
    assert r.exit_code == 0, r.output
    doc = read_policy_file(out)
    assert doc["fallback"] == "heuristic" and doc["nash_conv"] is None
    assert doc["coverage"] == {"visited": len(doc["policy"]), "filled_with_fallback": 0, "complete": False}
    r = CliRunner().invoke(main, ["solve", "kuhn_poker", "-a", "mccfr-es", "-n", "3", "--fallback", "heuristic",
                                  "--out", str(tmp_path / "k.json"), "--no-progress"])
    assert r.exit_code != 0 and "no heuristic agent" in r.output


def test_an_agent_fallback_gets_no_nash_conv_and_an_incomplete_file_is_refused_by_load_policy(tmp_path,
                                                                                              monkeypatch):
    from click.testing import CliRunner

    from kibitz.cli import main
    from kibitz.solvers import load_policy, read_policy_file
    from kibitz.solvers.policy_file import PolicyFileError
    from open_spiel.python import policy as os_policy

    out = tmp_path / "db.json"
    small = games.REGISTRY["doubt_and_bet"].small  # compiles within --max-nodes' default for MCCFR
    r = CliRunner().invoke(main, ["solve", small, "-a", "mccfr-os", "-n", "3", "--fallback", "heuristic",
                                  "--out", str(out), "--no-progress"])
    assert r.exit_code == 0, r.output
    doc = read_policy_file(out)
    assert doc["tree"] is not None and not doc["coverage"]["complete"]
    # the tree is there, but the policy on unseen states is the heuristic's
    assert doc["nash_conv"] is None and doc["expected_returns"] is None
    assert "not computed (the fallback heuristic plays the unseen" in r.output

    def no_table(*args, **kwargs):
        raise AssertionError("the game's table was built")

    monkeypatch.setattr(os_policy, "TabularPolicy", no_table)
    with pytest.raises(PolicyFileError, match="coverage.complete is false.*'heuristic'"):
        load_policy(out)
    monkeypatch.undo()
    # once every choice was visited, the unvisited states are forced moves: the exact NashConv is written
    r = CliRunner().invoke(main, ["solve", small, "-a", "mccfr-es", "-n", "200", "--fallback", "heuristic",
                                  "--out", str(out), "--overwrite", "--no-progress"])
    assert r.exit_code == 0, r.output
    doc = read_policy_file(out)
    assert doc["coverage"]["complete"] and doc["coverage"]["filled_with_fallback"] > 0
    assert doc["nash_conv"] is not None and "unvisited forced moves written with their one action" in r.output
    assert all(len(e["actions"]) > 1 or e["probs"] == [1.0] for e in doc["policy"].values())
    assert load_policy(out).action_probability_array.sum(axis=1) == pytest.approx(1.0)


@pytest.mark.parametrize("sampling", ["es", "os"])
def test_both_lookup_orders_give_the_same_tables(monkeypatch, sampling):
    from kibitz.solvers import mccfr

    game = pyspiel.load_game(games.REGISTRY["doubt_and_bet"].small)  # has forced moves
    tables = []
    for share in (-1.0, 2.0):  # always legal actions first / always the key first
        monkeypatch.setattr(mccfr, "FORCED_SHARE", share)
        solver = MCCFR(game, np.random.default_rng(6), sampling)
        solver.run(150)
        assert solver._legal_first == (share < 0)
        assert 0 < solver.forced_decisions < solver.decisions
        tables.append(solver.table)
    assert tables[0] == tables[1]


@pytest.mark.parametrize("args, message", [
    (["-a", "mccfr-es", "--target-nashconv", "0.1"], "--target-nashconv: CFR options"),
    (["-a", "mccfr-os", "--simultaneous"], "--simultaneous: CFR options"),
    (["-a", "mccfr-es", "--epsilon", "0.3"], "--epsilon"),
    (["-a", "cfr+", "--seed", "3"], "MCCFR options"),
    (["-a", "cfr", "--fallback", "heuristic"], "MCCFR options")])
def test_kibitz_solve_rejects_options_of_the_other_family(tmp_path, args, message):
    from click.testing import CliRunner

    from kibitz.cli import main

    r = CliRunner().invoke(main, ["solve", "kuhn_poker", *args, "-n", "5", "--out", str(tmp_path / "p.json"),
                                  "--no-progress"])
    assert r.exit_code == 2 and message in r.output
    assert not (tmp_path / "p.json").exists()


# ---------------------------------------------------------------------- cost, stops, memory
#: a configuration whose external-sampling iterations are long (the first at
#: seed 0 walks over a million decision nodes), yet estimated under the limit
LONG_ES = "underdog(players=3,cards=8,bank=5)"


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker", games.REGISTRY["underdog"].small,
                                  games.REGISTRY["pub"].small])
def test_knuth_estimates_match_the_compiled_tree_and_the_walked_iterations(name):
    from kibitz.solvers import mccfr

    game = pyspiel.load_game(name)
    nodes = compile_tree(game, max_nodes=100_000, use_cache=False).num_nodes
    assert mccfr.estimate_tree_nodes(game, seed=0, probes=400) == pytest.approx(nodes, rel=0.15)
    # the first iterations play uniformly, as the estimator assumes
    solver = MCCFR(game, np.random.default_rng(0), "es")
    solver.run(200)
    walked = solver.decisions / 200
    assert mccfr.estimate_es_states(game, seed=0, probes=400) == pytest.approx(walked, rel=0.2)


def test_an_estimate_gives_up_early_and_leaves_the_solver_stream_alone():
    from kibitz.solvers import mccfr

    game = games.load_game("doubt_and_bet")
    assert mccfr.estimate_es_states(game, give_up_above=1e6) > 1e6
    small = pyspiel.load_game("leduc_poker")
    a, b = MCCFR(small, np.random.default_rng(3), "es"), MCCFR(small, np.random.default_rng(3), "es")
    mccfr.estimate_es_states(small, seed=3)
    a.run(20)
    b.run(20)
    assert a.checkpoint() == b.checkpoint()


def test_an_abandoned_iteration_is_undone_exactly(monkeypatch):
    """A stop inside an iteration leaves the tables, counts and generator as
    the previous iteration left them: what follows equals an uninterrupted run."""
    from kibitz.solvers import mccfr

    monkeypatch.setattr(mccfr, "JOURNAL_DECISIONS", 0)
    monkeypatch.setattr(mccfr, "STOP_POLL", 4)
    game = games.load_game(games.REGISTRY["underdog"].small)
    whole, part = MCCFR(game, np.random.default_rng(5), "es"), MCCFR(game, np.random.default_rng(5), "es")
    whole.run(31)
    for _ in range(30):
        assert part.iterate(lambda: None) is None
    polls = []

    def stop_at_third_poll():
        polls.append(1)
        return "time" if len(polls) == 3 else None

    before = part.checkpoint()
    assert part.iterate(stop_at_third_poll) == "time"
    assert len(polls) == 3 and part.abandoned_decisions >= 12
    assert part.checkpoint() == before and part.iteration == 30
    assert part.iterate(lambda: None) is None
    assert part.checkpoint() == whole.checkpoint() and part.decisions == whole.decisions


def test_an_exception_inside_an_iteration_undoes_it(monkeypatch):
    from kibitz.solvers import mccfr

    monkeypatch.setattr(mccfr, "JOURNAL_DECISIONS", 0)
    monkeypatch.setattr(mccfr, "STOP_POLL", 4)
    game = games.load_game(games.REGISTRY["underdog"].small)
    solver = MCCFR(game, np.random.default_rng(2), "es")
    solver.run(10)
    before = solver.checkpoint()

    def out_of_memory():
        raise MemoryError

    with pytest.raises(MemoryError):
        solver.iterate(out_of_memory)
    assert solver.checkpoint() == before


def test_solve_refuses_external_sampling_it_cannot_afford_in_one_line(tmp_path):
    from click.testing import CliRunner

    from kibitz.cli import main

    out = tmp_path / "ud.json"
    r = CliRunner().invoke(main, ["solve", "underdog", "-a", "mccfr-es", "--time", "10s", "--out", str(out)])
    assert r.exit_code == 1
    error = [line for line in r.output.splitlines() if line.startswith("Error")]
    assert len(error) == 1 and "mccfr-es cannot afford" in error[0] and "mccfr-os" in error[0]
    assert "Traceback" not in r.output and not out.exists()


def test_time_stops_a_long_external_sampling_iteration_with_a_checkpoint(tmp_path):
    import time

    from click.testing import CliRunner

    from kibitz.cli import main
    from kibitz.solvers import driver, read_policy_file

    out = tmp_path / "long.json"
    t0 = time.perf_counter()
    r = CliRunner().invoke(main, ["solve", LONG_ES, "-a", "mccfr-es", "--time", "1", "--out", str(out),
                                  "--no-progress"])
    assert r.exit_code == 0, r.output
    assert time.perf_counter() - t0 < 10  # the first iteration alone takes minutes
    assert "no external-sampling iteration finished" in r.output and "undone" in r.output
    assert read_policy_file(out)["iterations"] == 0
    assert driver.read_checkpoint(driver.checkpoint_path(out))[0]["game"] == str(games.load_game(LONG_ES))


def test_ctrl_c_stops_a_long_external_sampling_iteration_within_a_second(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "long.json"
    kibitz = os.path.join(os.path.dirname(sys.executable), "kibitz")
    proc = subprocess.Popen([kibitz, "solve", LONG_ES, "-a", "mccfr-es",
                             "--out", str(out), "--no-progress"],
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        for line in proc.stderr:  # the estimate is printed before the first iteration starts
            if "decision nodes an iteration" in line:
                break
        time.sleep(1.0)
        assert proc.poll() is None
        proc.send_signal(signal.SIGINT)
        t0 = time.perf_counter()
        rest = proc.communicate(timeout=30)[1]
        assert time.perf_counter() - t0 < 3  # well within a second when the machine is quiet
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, rest
    assert "interrupted at iteration 0; checkpoint written" in rest and "Traceback" not in rest
    assert (tmp_path / "long.json.ckpt.npz").stat().st_size > 0


def test_max_memory_stops_the_run_with_its_policy_and_checkpoint(tmp_path):
    from click.testing import CliRunner

    from kibitz.cli import main
    from kibitz.solvers import driver, read_policy_file

    out = tmp_path / "kuhn.json"  # the Python solver (kuhn_poker has no compiled rules)
    r = CliRunner().invoke(main, ["solve", "kuhn_poker", "-a", "mccfr-os", "-n", "100000",
                                  "--max-memory", "1M", "--out", str(out), "--no-progress"])
    assert r.exit_code == 0, r.output
    assert "stopped at the memory limit" in r.output and "--max-memory 0.000977 GiB" in r.output
    assert "(memory limit)" in r.output
    assert read_policy_file(out)["iterations"] < 100000
    assert driver.checkpoint_path(out).exists()


@pytest.mark.parametrize("value, message", [
    ("lots", "not a size"), ("0", "at least 1 byte"), ("4X", "not a size")])
def test_max_memory_takes_sizes_only(tmp_path, value, message):
    from click.testing import CliRunner

    from kibitz.cli import main

    r = CliRunner().invoke(main, ["solve", "kuhn_poker", "-a", "mccfr-os", "--max-memory", value,
                                  "--out", str(tmp_path / "k.json")])
    assert r.exit_code == 2 and "--max-memory" in r.output and message in r.output


def test_sizes_and_max_memory_is_an_mccfr_option(tmp_path):
    from click.testing import CliRunner

    from kibitz.cli import main
    from kibitz.commands.solve import parse_size

    assert parse_size("4G") == parse_size("4GiB") == parse_size("4gb") == 4 * 2**30
    assert parse_size("512M") == 512 * 2**20 and parse_size("1.5k") == 1536 and parse_size("100") == 100
    r = CliRunner().invoke(main, ["solve", "kuhn_poker", "--max-memory", "1G", "--out", str(tmp_path / "k.json")])
    assert r.exit_code == 2 and "MCCFR options" in r.output


def test_checkpoint_arrays_round_trip_and_the_older_json_form_still_loads():
    import gzip
    import json

    game = games.load_game(games.REGISTRY["doubt_and_bet"].small)
    solver = MCCFR(game, np.random.default_rng(1), "os")
    solver.run(50)
    arrays = solver.state_dict()
    assert arrays["mccfr_regrets"].dtype == np.float64 and arrays["mccfr_sizes"].sum() == arrays["mccfr_avg"].size
    again = MCCFR(game, np.random.default_rng(9), "os")
    again.load_state_dict(arrays)
    assert again.checkpoint() == solver.checkpoint()
    older = {"mccfr": np.frombuffer(gzip.compress(json.dumps(solver.checkpoint()).encode()), dtype=np.uint8)}
    third = MCCFR(game, np.random.default_rng(9), "os")
    third.load_state_dict(older)
    assert third.checkpoint() == solver.checkpoint()
    arrays["mccfr_sizes"] = arrays["mccfr_sizes"][:-1]
    with pytest.raises(ValueError, match="do not match"):
        MCCFR(game, np.random.default_rng(9), "os").load_state_dict(arrays)
