"""Agent files: export, the stdlib loader, the policy(path) agent, inspect, the schema."""

import json
import os
import subprocess
import sys

import numpy as np
import pyspiel
import jsonschema
import pytest
from click.testing import CliRunner

from kibitz.agents.formats.export import read_agent_file
from kibitz.agents.formats.kibitz_agent_loader import KibitzAgent, UnseenInformationState, document_problems
from kibitz.agents.registry import make_agent
from kibitz.commands.export import export, inspect
from kibitz.commands.solve import solve
from kibitz.solvers import load_policy

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOADER = os.path.join(ROOT, "agents", "formats", "kibitz_agent_loader.py")
SMALL = "underdog(players=3,cards=5,bank=2)"


def invoke(command, args):
    r = CliRunner().invoke(command, args)
    assert r.exit_code == 0, r.output
    return r.output


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("export")
    out = {}
    for key, game, n in (("kuhn", "kuhn_poker", 200), ("underdog", SMALL, 30)):
        pol = d / f"{key}.policy.json.gz"
        invoke(solve, [game, "-n", str(n), "-o", str(pol), "--no-progress", "--no-cache"])
        agent = d / f"{key}.agent.json.gz"
        invoke(export, [str(pol), "-o", str(agent)])
        out[key] = (pol, agent)
    return d, out


def decision_states(game):
    """Every decision state of a small game, depth first."""
    out, stack = [], [game.new_initial_state()]
    while stack:
        s = stack.pop()
        if s.is_terminal():
            continue
        if not s.is_chance_node():
            out.append(s)
        for a in s.legal_actions():
            stack.append(s.child(a))
    return out


@pytest.mark.parametrize("key", ["kuhn", "underdog"])
def test_loader_agent_and_solver_give_the_same_probabilities(files, key):
    _, paths = files
    pol_path, agent_path = paths[key]
    loader = KibitzAgent.load(agent_path)
    tab = load_policy(pol_path)
    game = pyspiel.load_game(loader.game)
    agents = [make_agent(f"policy({agent_path})", game, p, seed=0) for p in range(game.num_players())]
    states = decision_states(game)
    assert len(states) > 10
    for s in states:
        p = s.current_player()
        key_ = s.information_state_string(p)
        mine = loader.action_probabilities(key_, s.legal_actions())
        assert mine == agents[p].action_probabilities(s)
        assert mine == {a: float(q) for a, q in tab.action_probabilities(s).items()}
    assert all(a.unseen_count == 0 for a in agents)


def test_loader_needs_only_the_standard_library(files):
    _, paths = files
    agent_path = paths["underdog"][1]
    doc = read_agent_file(agent_path)
    keys = sorted(doc["policy"])[:25]
    script = (
        "import importlib.util, json, sys\n"
        f"spec = importlib.util.spec_from_file_location('loader', {LOADER!r})\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        f"a = m.KibitzAgent.load({str(agent_path)!r})\n"
        f"keys = {keys!r}\n"
        "out = [sorted(a.action_probabilities(k).items()) for k in keys]\n"
        "assert not any(n in sys.modules for n in ('numpy', 'pyspiel', 'agents', 'games'))\n"
        "print(json.dumps(out))\n")
    # -S: no site-packages at all, -I: isolated (no user site, no PYTHONPATH)
    r = subprocess.run([sys.executable, "-I", "-S", "-c", script], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    for k, pairs in zip(keys, got):
        e = doc["policy"][k]
        assert [[a, p] for a, p in zip(e["actions"], e["probs"])] == pairs


def test_checkpoint_export_equals_policy_file_export(files):
    d, paths = files
    pol, agent = paths["kuhn"]
    from_ckpt = d / "kuhn.ckpt.agent.json"
    invoke(export, [str(pol) + ".ckpt.npz", "-o", str(from_ckpt), "--unseen", "error"])
    a, b = read_agent_file(agent), read_agent_file(from_ckpt)
    assert a["policy"] == b["policy"] and a["iterations"] == b["iterations"] == 200
    assert a["nash_conv"] == pytest.approx(b["nash_conv"], abs=1e-12)
    assert b["source"] == {"kind": "checkpoint", "file": "kuhn.policy.json.gz.ckpt.npz"}
    assert b["unseen"] == {"behaviour": "error"} and a["unseen"] == {"behaviour": "uniform"}


def test_metadata_and_schema(files):
    _, paths = files
    doc = read_agent_file(paths["underdog"][1])
    with open(os.path.join(ROOT, "docs", "formats", "agent-file.schema.json")) as f:
        schema = json.load(f)
    for key in schema["required"]:
        assert key in doc, key
    props = schema["properties"]
    assert doc["format"] == props["format"]["const"] and doc["format_version"] == 1
    assert doc["unseen"]["behaviour"] in props["unseen"]["properties"]["behaviour"]["enum"]
    assert doc["game"] == str(pyspiel.load_game(SMALL)) and doc["algorithm"] == "cfr+"
    assert doc["created"].endswith("Z") and doc["nash_conv"] >= 0
    assert doc["information_state"]["documentation"] == "docs/rules/underdog.md#information-state-string"
    assert document_problems(doc) == []
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(doc, schema)
    broken = dict(doc, format_version="one")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, schema)


def test_unseen_behaviours(files, tmp_path):
    _, paths = files
    doc = read_agent_file(paths["kuhn"][1])
    game = pyspiel.load_game("kuhn_poker")
    state = game.new_initial_state()
    for a in (0, 1):
        state.apply_action(a)
    key = state.information_state_string(0)
    del doc["policy"][key]
    for behaviour in ("uniform", "error"):
        doc["unseen"] = {"behaviour": behaviour}
        (tmp_path / f"{behaviour}.json").write_text(json.dumps(doc))
    uni = KibitzAgent.load(tmp_path / "uniform.json")
    assert uni.action_probabilities(key, [0, 1]) == {0: 0.5, 1: 0.5}
    with pytest.raises(UnseenInformationState):
        KibitzAgent.load(tmp_path / "error.json").action_probabilities(key, [0, 1])
    agent = make_agent(f"policy({tmp_path / 'uniform.json'})", game, 0, seed=1)
    assert agent.action_probabilities(state) == {0: 0.5, 1: 0.5} and agent.unseen_count == 1
    strict = make_agent(f"policy(path={tmp_path / 'uniform.json'},unseen=error)", game, 0, seed=1)
    with pytest.raises(UnseenInformationState):
        strict.action_probabilities(state)
    rnd = make_agent(f"policy(path={tmp_path / 'error.json'},unseen=random)", game, 0, seed=1)
    assert rnd.action_probabilities(state) == {0: 0.5, 1: 0.5}


def test_policy_agent_refuses_another_game(files):
    _, paths = files
    with pytest.raises(ValueError, match="is an agent for kuhn_poker"):
        make_agent(f"policy({paths['kuhn'][1]})", pyspiel.load_game("leduc_poker"), 0)
    with pytest.raises(ValueError, match="does not exist"):
        make_agent("policy(/nonexistent/agent.json)", pyspiel.load_game("kuhn_poker"), 0)


def test_inspect_reports_and_catches_mismatches(files, tmp_path):
    _, paths = files
    out = invoke(inspect, [str(paths["underdog"][1]), "--games", "50"])
    assert "algorithm:        cfr+" in out and "ok: the file matches its game" in out
    doc = read_agent_file(paths["kuhn"][1])
    key = sorted(doc["policy"])[0]
    doc["policy"][key]["actions"] = [0, 2]
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    r = CliRunner().invoke(inspect, [str(tmp_path / "bad.json")])
    assert r.exit_code == 1 and r.output.count("file has player") == 1  # each state once, however often met
    doc = read_agent_file(paths["kuhn"][1])
    doc["game"] = "leduc_poker()"
    (tmp_path / "other.json").write_text(json.dumps(doc))
    r = CliRunner().invoke(inspect, [str(tmp_path / "other.json")])
    assert r.exit_code == 1 and "none of the visited information states is in the file" in r.output
    doc = read_agent_file(paths["kuhn"][1])
    doc["policy"][key]["probs"] = [0.9, 0.9]
    (tmp_path / "sum.json").write_text(json.dumps(doc))
    r = CliRunner().invoke(inspect, [str(tmp_path / "sum.json")])
    assert r.exit_code == 1 and "sum to 1.8; they must sum to 1" in r.output
    (tmp_path / "junk.json").write_text('{"format": "something-else"}')
    r = CliRunner().invoke(inspect, [str(tmp_path / "junk.json")])
    assert r.exit_code == 1 and "'format' is 'something-else'; a kibitz agent file has" in r.output


def test_exported_agent_plays_a_tournament(files):
    from kibitz.agents.matches.tournament import run_tournament
    _, paths = files
    out = run_tournament("kuhn_poker", [f"policy({paths['kuhn'][1]})", "random"], 400, seed=3,
                         progress=False)
    cfr, rnd = out.results["agents"]
    assert cfr["mean_payoff"] > 0 > rnd["mean_payoff"]  # CFR+ beats uniform random at Kuhn
    assert cfr["mean_payoff"] == pytest.approx(-rnd["mean_payoff"])


def test_a_failing_agent_names_its_game(files, tmp_path):
    from kibitz.agents.matches.tournament import GameFailed, run_tournament
    _, paths = files
    doc = read_agent_file(paths["kuhn"][1])
    doc["unseen"] = {"behaviour": "error"}
    del doc["policy"]["1p"]  # seat 1 holding the queen after a pass
    (tmp_path / "holes.json").write_text(json.dumps(doc))
    for workers in (1, 2):
        with pytest.raises(GameFailed, match=r"game \d+ \(deal \d+, seats .*UnseenInformationState"):
            run_tournament("kuhn_poker", [f"policy({tmp_path / 'holes.json'})", "random"], 60, seed=1,
                           workers=workers, out_dir=str(tmp_path / f"w{workers}"), progress=False)


def test_mccfr_checkpoint_and_its_fallback_agent(tmp_path):
    pol = tmp_path / "mc.json"
    invoke(solve, [SMALL, "-a", "mccfr-os", "-n", "200", "--fallback", "heuristic", "-o", str(pol),
                   "--no-progress"])
    invoke(export, [str(pol), "-o", str(tmp_path / "a.json")])
    invoke(export, [str(pol) + ".ckpt.npz", "-o", str(tmp_path / "b.json")])
    a, b = read_agent_file(tmp_path / "a.json"), read_agent_file(tmp_path / "b.json")
    assert a["policy"] == b["policy"] and a["iterations"] == b["iterations"] == 200
    assert a["unseen"] == {"behaviour": "uniform", "kibitz_fallback": "heuristic"}
    # kibitz plays the recorded fallback agent where the table has no entry
    game = pyspiel.load_game(SMALL)
    agent = make_agent(f"policy({tmp_path / 'a.json'})", game, 0, seed=0)
    heur = make_agent("heuristic", game, 0, seed=0)
    missing = [s for s in decision_states(game)
               if s.current_player() == 0 and s.information_state_string(0) not in a["policy"]]
    assert missing
    for s in missing[:20]:
        assert agent.action_probabilities(s) == heur.action_probabilities(s)
    # a frontend without kibitz plays uniform there
    loader = KibitzAgent.load(tmp_path / "a.json")
    s = missing[0]
    legal = s.legal_actions()
    assert loader.action_probabilities(s.information_state_string(0), legal) == {x: 1 / len(legal) for x in legal}


def test_policy_agent_follows_an_mccfr_files_uniform_fallback(tmp_path):
    """An MCCFR policy file that covers few states and says fallback=uniform
    is played uniformly on the states it lacks (it does not raise)."""
    game_string = "underdog(players=3,cards=7,bank=2)"
    out = tmp_path / "es.json.gz"
    result = CliRunner().invoke(solve, [game_string, "-a", "mccfr-es", "--iterations", "3",
                                        "--out", str(out), "--no-progress"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    game = pyspiel.load_game(game_string)
    agent = make_agent(f"policy({out})", game, 0, seed=0)
    rng = np.random.default_rng(0)
    unseen_before = agent.unseen_count
    for _ in range(20):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.integers(len(outcomes))][0])
            elif state.current_player() == 0:
                probs = agent.action_probabilities(state)
                assert sum(probs.values()) == pytest.approx(1.0)
                state.apply_action(agent.step(state))
            else:
                legal = state.legal_actions()
                state.apply_action(legal[rng.integers(len(legal))])
    assert agent.unseen_count > unseen_before


def test_a_version_2_file_may_hold_a_tabular_agent(files, tmp_path):
    """Version 2 says which kind it holds; a tabular one reads as version 1 did."""
    _, paths = files
    doc = read_agent_file(paths["kuhn"][1])
    v2 = dict(doc, format_version=2, agent="tabular")
    path = tmp_path / "v2.json"
    path.write_text(json.dumps(v2))
    assert KibitzAgent.load(path).policy == KibitzAgent.load(paths["kuhn"][1]).policy
    with open(os.path.join(ROOT, "docs", "formats", "agent-file.schema.json")) as f:
        schema = json.load(f)
    jsonschema.validate(v2, schema)
    with pytest.raises(jsonschema.ValidationError):  # a network needs its model
        jsonschema.validate(dict(v2, agent="network"), schema)
    assert "field 'network' is missing" in document_problems(dict(v2, agent="network"))[0]


def test_export_replaces_only_an_earlier_kibitz_output(files, tmp_path):
    """--out holding an agent or policy file that kibitz wrote: refused
    without --overwrite, replaced with it; holding anything else: refused
    with or without --overwrite, and left as it was."""
    pol = files[1]["kuhn"][0]
    out = tmp_path / "a.json.gz"
    invoke(export, [str(pol), "-o", str(out), "--name", "first"])
    r = CliRunner().invoke(export, [str(pol), "-o", str(out), "--name", "second"])
    assert r.exit_code == 2 and f"{out} (a kibitz agent file) holds an earlier run's output; " \
                                 "--overwrite replaces it, or choose another --out" in r.output, r.output
    assert read_agent_file(out)["name"] == "first"
    invoke(export, [str(pol), "-o", str(out), "--name", "second", "--overwrite"])
    assert read_agent_file(out)["name"] == "second"
    ckpt = tmp_path / "ckpt.json"
    ckpt.write_bytes(pol.parent.joinpath(pol.name + ".ckpt.npz").read_bytes())
    foreign = "is not a kibitz policy file or agent file (nor any file kibitz writes)"
    for path, text, why in ((tmp_path / "notes.json", b'{"format": "mine"}\n', foreign),
                            (tmp_path / "notes.json.gz", b"my notes\n", foreign),
                            (ckpt, ckpt.read_bytes(), "is a kibitz checkpoint, not a policy file or agent file")):
        path.write_bytes(text)
        for overwrite in ([], ["--overwrite"]):
            r = CliRunner().invoke(export, [str(pol), "-o", str(path), *overwrite])
            assert r.exit_code == 2 and f"{path} {why}: it is never replaced, --overwrite or not" in r.output, r.output
            assert path.read_bytes() == text


def test_kibitz_outputs_are_recognised_by_their_contents(files, tmp_path):
    from kibitz.api import file_kind as kibitz_file_kind
    from kibitz.solvers import network

    pol, agent = files[1]["kuhn"]
    resorted = tmp_path / "resorted.json"  # kibitz's readers take any key order, so does the check
    resorted.write_text(json.dumps(read_agent_file(agent), sort_keys=True, indent=1))
    net = tmp_path / "net.npz"
    network.save(net, network.NetworkSpec("kuhn_poker()", 11, 2, hidden=(4,)),
                 [np.zeros((11, 4)), np.zeros(4), np.zeros((4, 2)), np.zeros(2)])
    np.savez(tmp_path / "plain.npz", meta=np.frombuffer(b'{"game": 1}', np.uint8))
    (tmp_path / "empty.json").write_bytes(b"")
    expected = {pol: "policy file", agent: "agent file", resorted: "agent file",
                pol.parent / (pol.name + ".ckpt.npz"): "checkpoint", net: "network file",
                tmp_path / "plain.npz": None, tmp_path / "empty.json": None}
    assert {path: kibitz_file_kind(path) for path in expected} == expected
