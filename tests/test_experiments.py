"""Experiment specs run end to end (on shrunken settings) and write CSV, PNG and a table."""

import csv
import pathlib

import numpy as np
import pyspiel
import pytest
from click.testing import CliRunner

from kibitz.experiments import runner
from kibitz.experiments.records import OtherRunError
from kibitz.cli import main
from conftest import stop_tournament_at

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", ["convergence", "strength", "mccfr_convergence", "training"])
def test_shipped_specs_parse(name):
    spec = runner.load_spec(ROOT / "experiments" / name)
    assert spec["kind"] == name and spec["games"]


def test_the_campaign_spec_continues_the_recorded_matches(tmp_path):
    """Every match of the shipped campaign is the match its recorded CSV holds
    (same game, opponent, IS-MCTS spec and seed: resuming continues it), and
    the table rewritten from the CSVs is the recorded table.md."""
    from kibitz.experiments import ismcts_strength as st
    from kibitz.experiments.records import AppendCSV
    results = ROOT / "docs" / "results" / "ismcts_strength"
    spec = runner.load_spec(ROOT / "experiments" / "ismcts_strength_campaign")
    assert spec["kind"] == "ismcts_match"
    names = [m["name"] for m in spec["matches"]]
    assert sorted(names) == sorted(p.stem for p in results.glob("*.csv"))
    for m in spec["matches"]:
        (tmp_path / f"{m['name']}.csv").write_bytes((results / f"{m['name']}.csv").read_bytes())
        args = st.match_from_options({k: v for k, v in {**spec, **m}.items() if k in st.OPTIONS},
                                     tmp_path / f"{m['name']}.csv")
        assert (st.ismcts_config(args).sims, args.games, args.seed) == (m.get("sims", 1000), 1000, 0)
        with AppendCSV(args.out, [], {"game": args.game, "opponent": st.opponent_label(args),
                                      "ismcts": st.ismcts_spec(st.ismcts_config(args)), "seed": args.seed}) as f:
            assert f.done and f.done <= set(range(1000))
    runner.run_ismcts_match({**spec, "only": "pub"}, tmp_path, log=lambda *_: None)  # all played: no game
    assert (tmp_path / "table.md").read_text() == (results / "table.md").read_text()


def test_ismcts_match_spec_plays_resumes_and_writes_the_table(tmp_path, capsys):
    from kibitz.experiments import ismcts_strength as st
    (tmp_path / "spec.toml").write_text('''
kind = "ismcts_match"
sims = 4
games = 3
seed = 2

[[matches]]
name = "small_vs_random"
game = "underdog(players=3,cards=5,bank=2)"
opponent = "random"

[[matches]]
name = "small_m0_vs_heuristic"
game = "underdog(players=3,cards=5,bank=2)"
opponent = "heuristic"
rollout_moves = 0
uct_c = 0.05
''')
    out = tmp_path / "out"
    runner.run(tmp_path, out=out, log=lambda *_: None)
    rows = list(csv.DictReader(open(out / "small_m0_vs_heuristic.csv")))
    assert [int(r["index"]) for r in rows] == [0, 1, 2]
    assert rows[0]["ismcts"] == "ismcts(sims=4,uct_c=0.05,rollout=random,rollout_moves=0)"
    assert {r["seed"] for r in rows} == {"2"}
    log = (out / "logs" / "small_vs_random.log").read_text()
    assert "games are already played" not in log
    assert "\r" not in log and "3/3 games" in log  # plain progress lines in a log file, no redrawn bar
    # a second shard of the same matches appends games 3..5 only
    runner.run(tmp_path, out=out, log=lambda *_: None, overrides={"start": 3, "only": "random"})
    rows = list(csv.DictReader(open(out / "small_vs_random.csv")))
    assert [int(r["index"]) for r in rows] == [0, 1, 2, 3, 4, 5]
    assert len(list(csv.DictReader(open(out / "small_m0_vs_heuristic.csv")))) == 3
    # the same games as one uninterrupted match
    _match(tmp_path / "script.csv", game=SMALL_UD, opponent="random", sims=4, seed=2, games=6)
    script = list(csv.DictReader(open(tmp_path / "script.csv")))
    assert [r[f"return_{p}"] for r in script for p in range(3)] == [r[f"return_{p}"] for r in rows for p in range(3)]
    lines = st.table_lines([out / "small_m0_vs_heuristic.csv", out / "small_vs_random.csv"])
    assert (out / "table.md").read_text() == "\n".join(lines) + "\n"


def test_ismcts_match_run_stops_on_sigterm_keeps_the_games_and_leaves_no_worker(tmp_path):
    """SIGTERM to ``kibitz experiment run`` of two matches played at once
    (jobs = 2): exit 143, one line, no traceback, every game that ended kept
    in its CSV, no worker left (they were left playing their matches)."""
    import signal
    import subprocess
    import sys
    import time

    from helpers import kill_session, left_behind

    (tmp_path / "spec.toml").write_text(f'''
kind = "ismcts_match"
sims = 50
games = 2000
jobs = 2

[[matches]]
name = "a"
game = "{SMALL_UD}"
opponent = "random"

[[matches]]
name = "b"
game = "{SMALL_UD}"
opponent = "heuristic"
''')
    out = tmp_path / "out"
    with open(tmp_path / "log", "w") as f:
        proc = subprocess.Popen([sys.executable, "-c", "from kibitz.cli import main; main()", "experiment", "run",
                                 str(tmp_path), "--out", str(out)], stdin=subprocess.DEVNULL, stdout=f,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            if all((out / f"{m}.csv").exists() and len((out / f"{m}.csv").read_text().splitlines()) >= 2
                   for m in "ab"):
                break
            time.sleep(0.1)
        assert proc.poll() is None
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        assert left_behind(proc) == [], "a match's worker outlived the run"
    finally:
        kill_session(proc)
    text = (tmp_path / "log").read_text()
    assert proc.returncode == 143 and text.count("interrupted:") == 1 and "Traceback" not in text, text
    for m in "ab":
        rows = list(csv.DictReader(open(out / f"{m}.csv")))
        assert 1 <= len(rows) < 2000 and len({r["index"] for r in rows}) == len(rows)


def test_ismcts_match_spec_refuses_unknown_options_and_names(tmp_path):
    spec = {"kind": "ismcts_match", "matches": [{"name": "a", "game": "underdog", "opponent": "random",
                                                 "simulations": 5}]}
    with pytest.raises(ValueError, match="unknown match option.*simulations"):
        runner.run_ismcts_match(spec, tmp_path)
    with pytest.raises(ValueError, match="no match name contains 'b'"):
        runner.run_ismcts_match({**spec, "matches": [{"name": "a", "game": "underdog", "opponent": "random"}],
                                 "only": "b"}, tmp_path)


def test_append_csv_resumes_by_index_and_refuses_another_run(tmp_path):
    from kibitz.experiments.records import AppendCSV, OtherRunError
    path = tmp_path / "r.csv"
    with AppendCSV(path, ["run", "index", "x"], {"run": "a"}) as f:
        assert f.done == set()
        f.write({"run": "a", "index": 0, "x": 1})
        f.write({"run": "a", "index": 2, "x": 3})
    with AppendCSV(path, ["run", "index", "x", "new"], {"run": "a"}) as f:
        assert f.done == {0, 2} and f.fields == ["run", "index", "x"]
        f.write({"run": "a", "index": 1, "x": 2, "new": 9})
    assert path.read_text().splitlines() == ["run,index,x", "a,0,1", "a,2,3", "a,1,2"]
    with pytest.raises(OtherRunError, match="another match"):
        AppendCSV(path, ["run", "index"], {"run": "b"})


def test_convergence_experiment_writes_results(tmp_path):
    result = CliRunner().invoke(main, [
        "experiment", "run", str(ROOT / "experiments" / "convergence"), "--out", str(tmp_path),
        "--set", 'games=["kuhn_poker", "underdog(players=3,cards=5,bank=2)"]',
        "--set", "iterations=64", "--set", "openspiel_iterations=8", "--set", "points=4"],
        catch_exceptions=False)
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(open(tmp_path / "convergence.csv")))
    solvers = {r["solver"] for r in rows}
    assert solvers == {"cfr", "cfr+", "lcfr", "dcfr", "openspiel cfr+"}
    for solver in ("cfr+", "dcfr"):
        kuhn = [float(r["nash_conv"]) for r in rows if r["game"] == "kuhn_poker" and r["solver"] == solver]
        assert kuhn[-1] < kuhn[0] / 5
    assert (tmp_path / "convergence_kuhn_poker.png").stat().st_size > 1000
    table = (tmp_path / "table.md").read_text()
    assert "| `kuhn_poker` | openspiel cfr+ | 8 |" in table


def test_mccfr_convergence_experiment_writes_results_and_nashconv_falls(tmp_path):
    out = runner.run(ROOT / "experiments" / "mccfr_convergence", out=tmp_path, log=lambda *_: None,
                     overrides={"games": ["kuhn_poker"], "iterations": 300, "points": 3})
    rows = list(csv.DictReader((out / "mccfr_convergence.csv").open()))
    assert {r["sampling"] for r in rows} == {"es", "os"}
    for sampling in ("es", "os"):
        mine = [float(r["nash_conv"]) for r in rows if r["sampling"] == sampling]
        assert mine[0] == pytest.approx(11 / 12)  # the uniform policy's NashConv in Kuhn poker
        assert mine[-1] < 0.5 * mine[0]
    assert (out / "mccfr_convergence.png").stat().st_size > 1000
    assert "| `kuhn_poker` | es | 300 |" in (out / "table.md").read_text()


class _Clock:
    """A ``time`` for the runner whose perf_counter moves 1/16 s a call
    (exact in binary): each point of a training curve gets the same steps
    whatever the load."""

    def __init__(self):
        self.now = 0.0

    def perf_counter(self):
        self.now += 1 / 16
        return self.now


def test_training_experiment_keeps_each_point_on_ctrl_c_resumes_and_nashconv_falls(tmp_path, monkeypatch):
    """Ctrl-C after the first of three points keeps it (training.csv and the
    game's checkpoint); the same command continues from it to the curve of
    an uninterrupted run, and the curve falls."""
    from kibitz.solvers.train import TreeProbe

    spec = ROOT / "experiments" / "training"
    settings = {"games": ["kuhn_poker"], "seconds": 3, "points": 3}
    monkeypatch.setattr(runner, "time", _Clock())
    whole = runner.run(spec, out=tmp_path / "whole", log=lambda *_: None, overrides=settings)
    real, calls = TreeProbe.nash_conv, []

    def stop_at_the_second_point(self, params):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(self, params)

    monkeypatch.setattr(TreeProbe, "nash_conv", stop_at_the_second_point)
    out = tmp_path / "out"
    with pytest.raises(runner.Interrupted, match="1 of 3 points of kuhn_poker finished .* run the same command"):
        runner.run(spec, out=out, log=lambda *_: None, overrides=settings)
    kept = (out / "training.csv").read_text()
    monkeypatch.setattr(TreeProbe, "nash_conv", real)
    with pytest.raises(ValueError, match="seed = 0, not 1.* give another --out, or those settings"):
        runner.run(spec, out=out, log=lambda *_: None, overrides={**settings, "seed": 1})
    runner.run(spec, out=out, log=lambda *_: None, overrides=settings)
    assert (out / "training.csv").read_text() == (whole / "training.csv").read_text()
    assert (out / "training.csv").read_text().startswith(kept) and len(kept.splitlines()) == 3
    rows = list(csv.DictReader((out / "training.csv").open()))
    steps = [int(r["steps"]) for r in rows]
    assert steps[0] == 0 and steps == sorted(set(steps)) and float(rows[-1]["seconds"]) >= 3
    assert float(rows[0]["nash_conv"]) == pytest.approx(11 / 12)  # uniform Kuhn
    assert float(rows[-1]["nash_conv"]) < 0.8 * 11 / 12  # learning (the curve in docs/results/training)
    assert (out / "training.png").stat().st_size > 1000 and "| `kuhn_poker` |" in (out / "table.md").read_text()
    # once complete, the same command again trains nothing and writes the same table
    table = (out / "table.md").read_text()
    monkeypatch.setattr("kibitz.solvers.train.MMDTrainer.iterate", lambda self: pytest.fail("trained again"))
    runner.run(spec, out=out, log=lambda *_: None, overrides=settings)
    assert (out / "table.md").read_text() == table


def test_strength_experiment_writes_results(tmp_path):
    runner.run(ROOT / "experiments" / "strength", out=tmp_path, log=lambda *_: None, overrides={
        "games": ["underdog(players=3,cards=5,bank=2)"], "agents": ["random", "heuristic"],
        "games_per_match": 6, "workers": 1, "progress": False})
    rows = list(csv.DictReader(open(tmp_path / "strength.csv")))
    assert [r["name"] for r in rows] == ["random", "heuristic"]
    assert all(int(r["games"]) >= 6 for r in rows)
    assert list(tmp_path.glob("strength_*.png"))
    assert "| heuristic |" in (tmp_path / "table.md").read_text()


def test_strength_experiment_stops_on_ctrl_c_and_continues(tmp_path, monkeypatch):
    settings = {"games": ["underdog(players=3,cards=5,bank=2)"], "agents": ["random", "heuristic"],
                "games_per_match": 12, "workers": 1, "progress": False}
    stop_tournament_at(monkeypatch, 7)
    with pytest.raises(runner.Interrupted, match="7 of 12 games .* run the same command again"):
        runner.run(ROOT / "experiments" / "strength", out=tmp_path / "a", log=lambda *_: None, overrides=settings)
    assert not (tmp_path / "a" / "table.md").exists()
    monkeypatch.undo()
    runner.run(ROOT / "experiments" / "strength", out=tmp_path / "a", log=lambda *_: None, overrides=settings)
    runner.run(ROOT / "experiments" / "strength", out=tmp_path / "b", log=lambda *_: None, overrides=settings)
    assert (tmp_path / "a" / "table.md").read_text() == (tmp_path / "b" / "table.md").read_text()
    assert "| 12 |" in (tmp_path / "a" / "table.md").read_text()
    # once complete, the same command again rewrites the same table
    runner.run(ROOT / "experiments" / "strength", out=tmp_path / "a", log=lambda *_: None, overrides=settings)
    assert (tmp_path / "a" / "table.md").read_text() == (tmp_path / "b" / "table.md").read_text()


def test_an_earlier_runs_games_are_refused_in_this_commands_terms(tmp_path):
    settings = {"games": [SMALL_UD], "agents": ["random", "heuristic"], "games_per_match": 12, "workers": 1,
                "progress": False}
    runner.run(ROOT / "experiments" / "strength", out=tmp_path, log=lambda *_: None, overrides=settings)
    for change, words in (({"seed": 5}, "holds a tournament with seed=0, not 5"),
                          ({"games_per_match": 6}, "games_per_match = 6 would drop 6 of them; give games_per_match "
                                                   "= 12 or more")):
        sets = {**settings, **change}
        result = CliRunner().invoke(main, [
            "experiment", "run", str(ROOT / "experiments" / "strength"), "--out", str(tmp_path),
            "--set", f'games=["{SMALL_UD}"]', "--set", 'agents=["random", "heuristic"]',
            "--set", f"games_per_match={sets['games_per_match']}", "--set", "workers=1",
            "--set", "progress=false", "--set", f"seed={sets.get('seed', 0)}"])
        assert result.exit_code == 1 and words in result.output, result.output
        assert "--resume" not in result.output and "give another --out, or those settings" in result.output
    # a failure that is not about an earlier run is not blamed on one
    result = CliRunner().invoke(main, [
        "experiment", "run", str(ROOT / "experiments" / "strength"), "--out", str(tmp_path / "fresh"),
        "--set", 'games=["goofspiel(num_cards=3)"]', "--set", 'agents=["random", "random"]',
        "--set", "games_per_match=2", "--set", "workers=1", "--set", "progress=false"])
    assert result.exit_code == 1 and "simultaneous-move game" in result.output
    assert "earlier run" not in result.output


def test_a_failed_match_says_why_and_a_spec_named_by_its_folder(tmp_path, monkeypatch):
    (tmp_path / "tiny").mkdir()
    (tmp_path / "tiny" / "spec.toml").write_text(f'''
kind = "ismcts_match"
sims = 3
games = 1
[[matches]]
name = "m"
game = "{SMALL_UD}"
opponent = "random"
''')
    monkeypatch.chdir(tmp_path / "tiny")
    result = CliRunner().invoke(main, ["experiment", "run", "."])
    assert result.exit_code == 0, result.output
    assert "experiment tiny (ismcts_match) -> runs/tiny" in result.output  # "." is the folder it names
    result = CliRunner().invoke(main, ["experiment", "run", ".", "--set", "sims=4"])
    assert result.exit_code == 1
    error = next(ln for ln in result.output.splitlines() if ln.startswith("Error:"))
    assert error.startswith("Error: 1 match(es) failed: m: kibitz.experiments.records.OtherRunError: ")
    assert "ismcts(sims=3," in error and "(logs in runs/tiny/logs)" in error


def test_bad_spec_is_a_clear_error(tmp_path):
    (tmp_path / "spec.toml").write_text('kind = "magic"\n')
    result = CliRunner().invoke(main, ["experiment", "run", str(tmp_path)])
    assert result.exit_code == 1 and "allowed kinds: convergence, strength, mccfr_convergence, training, ismcts_match" in result.output


SMALL_UD = "underdog(players=3,cards=5,bank=2)"


def _match(out, **options):
    """Plays (or resumes) one match into ``out``, as the runner does."""
    from kibitz.experiments import ismcts_strength as st
    return st.play_match(st.match_from_options(options, out))


def test_ismcts_strength_match_resumes_and_refuses_another_match(tmp_path, capsys):
    from kibitz.experiments import ismcts_strength as st
    out = tmp_path / "m.csv"
    match = dict(game=SMALL_UD, opponent="random", sims=5, seed=3)
    _match(out, **match, games=4)
    with out.open() as f:
        first = list(csv.DictReader(f))
    assert [int(r["index"]) for r in first] == [0, 1, 2, 3]
    assert [int(r["ismcts_seat"]) for r in first] == [0, 1, 2, 0]
    assert first[0]["ismcts"] == "ismcts(sims=5,uct_c=0.7,rollout=random)"
    assert [r["opponent_seats"] for r in first] == ["1 2", "0 2", "0 1", "1 2"]
    _match(out, **match, games=6)  # plays only games 4 and 5
    with out.open() as f:
        rows = list(csv.DictReader(f))
    assert [int(r["index"]) for r in rows] == [0, 1, 2, 3, 4, 5]
    assert rows[:4] == first
    # the same seed gives the same games: replay game 4 into another file
    again = tmp_path / "again.csv"
    _match(again, **match, games=1, start=4)
    with again.open() as f:
        replay = list(csv.DictReader(f))
    assert [replay[0][f"return_{p}"] for p in range(3)] == [rows[4][f"return_{p}"] for p in range(3)]
    with pytest.raises(OtherRunError, match="another match"):
        _match(out, **{**match, "sims": 6}, games=6)
    table = "\n".join(st.table_lines([out]))
    assert "| underdog(players=3,cards=5,bank=2) | `ismcts(sims=5,uct_c=0.7,rollout=random)` | random | 6 (2) |" in table


def test_ismcts_strength_shards_of_a_match_share_one_file(tmp_path):
    """Two runs splitting a match (--start) at the same time, appending to
    one new file: one header, every game's row intact."""
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    out = tmp_path / "shared.csv"
    code = ("import sys; from kibitz.experiments import ismcts_strength as st; "
            "st.play_match(st.match_from_options(dict(game=sys.argv[1], opponent='random', sims=5, games=4, "
            "start=int(sys.argv[2])), sys.argv[3]))")
    runs = [subprocess.Popen([sys.executable, "-c", code, SMALL_UD, str(start), str(out)], cwd=root,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for start in (0, 4)]
    for run in runs:
        assert run.wait(timeout=120) == 0, run.stderr.read()
    lines = out.read_text().splitlines()
    assert sum(line.startswith("game,") for line in lines) == 1 and lines[0].startswith("game,")
    with out.open() as f:
        rows = list(csv.DictReader(f))
    assert sorted(int(r["index"]) for r in rows) == list(range(8))
    assert all(r["return_2"] != "" for r in rows)


def test_ismcts_strength_one_opponent_seat_among_fillers(tmp_path, capsys):
    from kibitz.experiments import ismcts_strength as st
    out = tmp_path / "os.csv"
    _match(out, game=SMALL_UD, opponent="openspiel", fill="random", sims=4, games=6)
    with out.open() as f:
        rows = list(csv.DictReader(f))
    assert {r["opponent"] for r in rows} == {"openspiel (other seats random)"}
    # deal 0: the opponent sits one seat after IS-MCTS; deal 1: two seats after
    assert [(r["ismcts_seat"], r["opponent_seats"]) for r in rows] == [
        ("0", "1"), ("1", "2"), ("2", "0"), ("0", "2"), ("1", "0"), ("2", "1")]


def test_openspiel_bot_in_a_match_is_reproducible():
    # OpenSpiel's ISMCTSBot resamples with an unseeded sampler unless given
    # one; the match seeds it, so the same seed searches the same way
    from kibitz.experiments import ismcts_strength as st
    game = pyspiel.load_game("doubt_and_bet(players=3,chips=2,slots=2,colours=2)")
    state = game.new_initial_state()
    rng = np.random.default_rng(0)
    while state.is_chance_node():
        outcomes = state.chance_outcomes()
        state.apply_action(outcomes[rng.integers(len(outcomes))][0])
    while state.is_chance_node() or len(state.legal_actions()) < 3:
        if state.is_chance_node():
            state.apply_action(state.chance_outcomes()[0][0])
        else:
            state.apply_action(state.legal_actions()[0])
    p = state.current_player()
    policies = [st.openspiel_bot(game, p, 5, 60, 0.7).get_policy(state) for _ in range(3)]
    assert policies[0] == policies[1] == policies[2]


@pytest.mark.parametrize("game_string, every", [
    ("doubt_and_bet(players=3)", 15), ("doubt_and_bet", 40), ("underdog(players=3,cards=5,bank=2)", 1),
    ("pub(players=3)", 5), ("over_under", 6)])
def test_openspiel_bot_searches_as_with_the_full_replay(game_string, every):
    # the match hands ISMCTSBot the kibitz games' internal resample (only the
    # current round replayed): from the same seed it must search exactly as
    # with the public full replay, through whole games of several rounds (a
    # world drawn differently, or from other draws of the sampler, would
    # change the later simulations and so the visit counts)
    import random

    from kibitz.experiments import ismcts_strength as st
    from kibitz.agents.registry import make_agent
    from open_spiel.python.algorithms import ismcts, mcts
    from kibitz.games.chance import sample_chance

    def full_replay_bot(game, seed, sims):
        rs = np.random.RandomState(seed)
        bot = ismcts.ISMCTSBot(game, mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rs),
                               0.7, sims, random_state=rs)
        sampler = pyspiel.UniformProbabilitySampler(seed, 0.0, 1.0)
        bot.set_resampler(lambda state, player: state.resample_from_infostate(player, sampler))
        return bot

    game = pyspiel.load_game(game_string)
    bots = [make_agent("heuristic", game, p, p) for p in range(game.num_players())]
    rand = random.Random(3).random
    state = game.new_initial_state()
    compared, k = 0, 0
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(sample_chance(state, rand))
            continue
        k += 1
        if k % every == 0 and len(state.legal_actions()) > 1:
            p = state.current_player()
            fast = st.openspiel_bot(game, p, 7, 16, 0.7)
            slow = full_replay_bot(game, 7, 16)
            assert fast.get_policy(state) == slow.get_policy(state)
            compared += 1
        state.apply_action(bots[state.current_player()].step(state))
    assert compared >= 4


def test_ismcts_strength_opponent_model_options_are_in_the_spec(tmp_path, capsys):
    from kibitz.experiments import ismcts_strength as st
    out = tmp_path / "m.csv"
    _match(out, game=SMALL_UD, opponent="heuristic", sims=8, belief="heuristic", belief_eps=0.2,
           max_world_samples=4, opponents="heuristic", games=3)
    with out.open() as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 3
    assert rows[0]["ismcts"] == ("ismcts(sims=8,uct_c=0.7,rollout=random,max_world_samples=4,"
                                 "belief=heuristic,belief_eps=0.2,opponents=heuristic)")
    assert all(sum(float(r[f"return_{p}"]) for p in range(3)) == pytest.approx(1.0) for r in rows)
    capsys.readouterr()


def test_a_match_that_fails_makes_the_run_fail_and_names_it(tmp_path):
    (tmp_path / "spec.toml").write_text('kind = "ismcts_match"\nsims = 2\ngames = 1\n'
                                        '[[matches]]\nname = "m"\ngame = "kuhn_poker"\nopponent = "random"\n')
    # the match's CSV already holds another match (seed 9): playing into it fails at run time
    (tmp_path / "o").mkdir()
    _match(tmp_path / "o" / "m.csv", game="kuhn_poker", opponent="random", sims=2, games=1, seed=9)
    before = (tmp_path / "o" / "m.csv").read_text()
    result = CliRunner().invoke(main, ["experiment", "run", str(tmp_path), "--out", str(tmp_path / "o")])
    assert result.exit_code == 1 and "1 match(es) failed: m" in result.output
    assert "another match" in (tmp_path / "o" / "logs" / "m.log").read_text()
    assert (tmp_path / "o" / "m.csv").read_text() == before  # nothing lost


def test_a_match_option_the_game_cannot_take_is_refused_before_the_run(tmp_path):
    (tmp_path / "spec.toml").write_text('kind = "ismcts_match"\n[[matches]]\nname = "m"\ngame = "pub"\n'
                                        'opponent = "random"\nmoves = "shortlist"\n')
    result = CliRunner().invoke(main, ["experiment", "run", str(tmp_path), "--out", str(tmp_path / "o")])
    assert result.exit_code == 1 and "match 'm'" in result.output and "shortlist" in result.output
    assert not (tmp_path / "o").exists()
