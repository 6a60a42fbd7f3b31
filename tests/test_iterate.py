"""Expert iteration (agents/training/iterate.py, ``kibitz iterate``): a
generation runs end to end and records its match and a decision that
follows the acceptance rule, a second run continues without redoing work,
bad input is one line naming the option."""

import dataclasses
import json

import pytest
from click.testing import CliRunner

import kibitz
from kibitz.api import ConfigError, IterateConfig, TrainConfig
from kibitz.cli import main

GAME = "underdog(players=3,cards=5,bank=2)"
TINY = dict(generations=1, sims=4, games=4, chunk=2, epochs=1, match_games=12, opponent="heuristic", seed=1)


@pytest.fixture(scope="module")
def start(tmp_path_factory):
    """A tiny network agent file of GAME, exported at temperature 0.5."""
    folder = tmp_path_factory.mktemp("start")
    kibitz.train(GAME, steps=20, out=str(folder / "net.npz"), config=TrainConfig(hidden=(8,)))
    kibitz.export(folder / "net.npz", folder / "start.json.gz", temperature=0.5)
    return str(folder / "start.json.gz")


@pytest.fixture(scope="module")
def one_generation(start, tmp_path_factory):
    out = tmp_path_factory.mktemp("iter") / "run"
    lines = []
    result = kibitz.iterate(GAME, start=start, out=str(out), log=lines.append, **TINY)
    return out, result, lines


def test_a_generation_runs_end_to_end_and_its_decision_follows_the_rule(one_generation):
    out, result, lines = one_generation
    record = json.loads((out / "iterate.json").read_text())
    assert record == result.record
    assert record["settings"]["sims"] == 4 and record["temperature"] == pytest.approx(0.5)
    (gen,) = record["generations"]
    assert gen["steps"] == ["distill", "export", "match"] and gen["best_before"] == 0
    assert gen["distill"]["teacher"].startswith("ismcts(prior=net(") and gen["distill"]["init"] == "gen0"
    assert gen["distill"]["games"] == 4 and gen["distill"]["hidden"] == [8]
    match = gen["match"]
    assert match["games"] == 12 and match["deals"] == 2 and match["ci95_low"] <= match["difference"] <= match["ci95_high"]
    assert match["difference"] == pytest.approx(match["new"] - match["best"])
    assert gen["kept"] == (match["ci95_low"] > 0)
    assert record["best"] == (1 if gen["kept"] else 0)
    assert result.best == out / f"gen{record['best']}.json.gz" and result.best.is_file()
    for name in ("gen0.json.gz", "gen0.npz", "gen1.json.gz", "gen1/net.npz", "gen1/data", "gen1/match_new/games.jsonl",
                 "gen1/match_best/games.jsonl"):
        assert (out / name).exists(), name
    assert any(line.startswith("generation 1: ") and ("kept" in line or "rejected" in line) for line in lines)
    assert result.lines()[-1].startswith("best:")


def test_running_again_resumes_without_redoing_work(one_generation, start):
    out, result, _ = one_generation
    files = ("gen1/net.npz", "gen1.json.gz", "gen1/match_new/games.jsonl", "gen1/match_best/games.jsonl")
    stamps = {name: (out / name).stat().st_mtime_ns for name in files}
    lines = []
    again = kibitz.iterate(GAME, start=start, out=str(out), log=lines.append, **TINY)
    assert again.record["generations"] == result.record["generations"]
    assert {name: (out / name).stat().st_mtime_ns for name in files} == stamps
    assert lines == []  # no step began
    with pytest.raises(ConfigError) as e:  # the same folder with other settings is refused
        kibitz.iterate(GAME, start=start, out=str(out), **{**TINY, "sims": 5})
    assert e.value.param == "--out" and "sims" in str(e.value)


def test_an_unfinished_generation_is_finished_by_the_next_run(start, tmp_path):
    out = tmp_path / "run"
    stopped = kibitz.iterate(GAME, start=start, out=str(out), **{**TINY, "time_limit": 1e-9})
    assert stopped.stopped == "time" and stopped.record["generations"] == []
    done = kibitz.iterate(GAME, start=start, out=str(out), **TINY)
    assert done.stopped is None and done.record["generations"][0]["steps"] == ["distill", "export", "match"]


def test_an_interrupted_match_keeps_the_steps_before_it(start, tmp_path, monkeypatch):
    from kibitz.agents.matches import tournament
    from kibitz.api import SolveStopped

    out, run = tmp_path / "run", tournament.TournamentConfig.run
    monkeypatch.setattr(tournament.TournamentConfig, "run",
                        lambda self, log=None: dataclasses.replace(run(self), interrupted=True))
    with pytest.raises(SolveStopped) as e:
        kibitz.iterate(GAME, start=start, out=str(out), **TINY)
    assert e.value.code == 130 and "the same command continues" in str(e.value)
    assert json.loads((out / "iterate.json").read_text())["generations"][0]["steps"] == ["distill", "export"]
    monkeypatch.undo()
    done = kibitz.iterate(GAME, start=start, out=str(out), **TINY)
    assert done.record["generations"][0]["steps"] == ["distill", "export", "match"]


@pytest.mark.parametrize("options, param", [
    (dict(generations=0), "--generations"),
    (dict(sims=0), "--sims"),
    (dict(match_games=1), "--match-games"),
    (dict(lr=0.0), "--lr"),
    (dict(hidden=()), "--hidden"),
    (dict(opponent="nobody"), "--opponent"),
    (dict(start="missing.json.gz"), "--start"),
    (dict(out=None), "--out"),
    (dict(time_limit=0), "--time"),
])
def test_bad_input_names_the_option(options, param, start, tmp_path):
    settings = {"start": start, "out": str(tmp_path / "run"), **options}
    with pytest.raises(ConfigError) as e:
        IterateConfig(GAME, **settings)
    assert e.value.param == param
    assert not (tmp_path / "run").exists()


def test_a_start_of_another_game_or_none_shipped_is_refused(start, tmp_path):
    with pytest.raises(ConfigError) as e:
        IterateConfig("underdog(players=3,cards=6,bank=2)", start=start, out=str(tmp_path))
    assert e.value.param == "--start" and "not for" in str(e.value)
    with pytest.raises(ConfigError) as e:  # no network ships for kuhn_poker
        IterateConfig("kuhn_poker", out=str(tmp_path))
    assert e.value.param == "--start"


def test_the_command_runs_it_and_gives_bad_input_in_one_line(start, tmp_path):
    out = tmp_path / "run"
    args = ["iterate", GAME, "--start", start, "--out", str(out), "--generations", "1", "--sims", "4",
            "--games", "4", "--chunk", "2", "--epochs", "1", "--match-games", "12", "--seed", "1"]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 0, r.output
    assert "generation 1: " in r.stdout and "best:" in r.stdout
    assert json.loads((out / "iterate.json").read_text())["generations"][0]["steps"][-1] == "match"
    r = CliRunner().invoke(main, [*args, "--sims", "0"])
    assert r.exit_code == 2 and "--sims" in r.output
    r = CliRunner().invoke(main, ["iterate", GAME, "--start", start, "--out", str(tmp_path / "x"),
                                  "--opponent", "nobody"])
    errors = [line for line in r.output.splitlines() if line.startswith("Error:")]
    assert r.exit_code == 2 and len(errors) == 1 and "--opponent" in errors[0] and "Traceback" not in r.output
