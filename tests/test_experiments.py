"""Experiment specs run end to end (on shrunken settings) and write CSV, PNG and a table."""

import csv
import pathlib

import pytest
from click.testing import CliRunner

from experiments import runner
from kibitz.cli import main

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("name", ["convergence", "strength"])
def test_shipped_specs_parse(name):
    spec = runner.load_spec(ROOT / "experiments" / name)
    assert spec["kind"] == name and spec["games"]


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


def test_strength_experiment_writes_results(tmp_path):
    runner.run(ROOT / "experiments" / "strength", out=tmp_path, log=lambda *_: None, overrides={
        "games": ["underdog(players=3,cards=5,bank=2)"], "agents": ["random", "heuristic"],
        "games_per_match": 6, "workers": 1, "progress": False})
    rows = list(csv.DictReader(open(tmp_path / "strength.csv")))
    assert [r["name"] for r in rows] == ["random", "heuristic"]
    assert all(int(r["games"]) >= 6 for r in rows)
    assert list(tmp_path.glob("strength_*.png"))
    assert "| heuristic |" in (tmp_path / "table.md").read_text()


def test_bad_spec_is_a_clear_error(tmp_path):
    (tmp_path / "spec.toml").write_text('kind = "magic"\n')
    result = CliRunner().invoke(main, ["experiment", "run", str(tmp_path)])
    assert result.exit_code == 1 and "allowed kinds: convergence, strength" in result.output
