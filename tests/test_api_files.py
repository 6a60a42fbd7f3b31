"""The Python API of agent files, experiments and the demo: kibitz.api's
inspect_agent_file, experiment and demo, as their commands call them."""

import csv
import json

import pytest

from kibitz import api

REPO = __import__("pathlib").Path(__file__).resolve().parent.parent


def test_inspect_agent_file_checks_a_file_against_its_game(tmp_path):
    api.solve("kuhn_poker", algorithm="cfr+", iterations=20, out=str(tmp_path / "kuhn.json"))
    api.export(tmp_path / "kuhn.json", tmp_path / "agent.json")
    result = api.inspect_agent_file(tmp_path / "agent.json", games=20, seed=3)
    assert result["kind"] == "tabular" and result["games"] == 20 and result["problems"] == []
    assert result["document"]["format"] == "kibitz-agent"
    assert 0 < result["check"]["found"] == result["check"]["visited"] <= 12
    doc = json.loads((tmp_path / "agent.json").read_text())
    key = next(iter(doc["policy"]))
    doc["policy"][key]["player"] = 1 - doc["policy"][key]["player"]
    (tmp_path / "wrong.json").write_text(json.dumps(doc))
    assert api.inspect_agent_file(tmp_path / "wrong.json", games=200)["problems"][0].startswith(repr(key))
    (tmp_path / "list.json").write_text("[]")
    with pytest.raises(api.AgentFileError, match="list.json: the document must be a JSON object"):
        api.inspect_agent_file(tmp_path / "list.json")


def test_experiment_runs_a_spec_with_overrides(tmp_path):
    spec = REPO / "experiments" / "convergence"
    lines = []
    out = api.experiment(spec, out=tmp_path / "conv", log=lines.append,
                         overrides={"games": ["kuhn_poker"], "algorithms": ["cfr+"], "iterations": 10,
                                    "openspiel_iterations": 0, "points": 2})
    assert out == tmp_path / "conv" and (out / "table.md").is_file()
    with open(out / "convergence.csv") as f:
        assert {row["solver"] for row in csv.DictReader(f)} == {"cfr+"}
    assert lines[0].startswith("experiment convergence (convergence)")
    with pytest.raises(api.ExperimentSpecError, match="unknown key 'bogus'"):
        api.experiment(spec, overrides={"bogus": 1})
    with pytest.raises(api.ConfigError, match="runs in one process") as e:
        api.experiment(spec, out=tmp_path / "ray", ray=True)
    assert e.value.param == "--ray" and not (tmp_path / "ray").exists()


def test_demo_solves_exports_and_plays_and_refuses_a_foreign_folder(tmp_path):
    lines = []
    result = api.demo(tmp_path / "demo", iterations=3, games=12, workers=1, echo=lines.append)
    assert result["outcome"].results["agents"][0]["name"].startswith("policy(")
    assert json.loads((tmp_path / "demo" / "tournament" / "results.json").read_text())["games_played"] == 12
    assert lines[0].startswith("kibitz demo") and "2. Export" in "\n".join(lines)
    assert result["agent"] == str(tmp_path / "demo" / "agent.json.gz")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "agent.json.gz").write_text("mine\n")
    with pytest.raises(api.DemoError, match="holds agent.json.gz, which kibitz demo did not write"):
        api.demo(tmp_path / "mine", iterations=3, games=12, workers=1)
