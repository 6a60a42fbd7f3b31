"""Network agents: the ONNX model against solvers/network.py, the net and trained agents, export and inspect.

Fidelity: on 1,000 random information states of each kibitz game at its
default size, onnxruntime's probabilities equal numpy's and JAX's (the
training framework's) to 1e-5, with random weights of the right sizes: dense
networks on the information-state tensor, and for doubt_and_bet also a
factored network on its compact encoding.
"""

import gzip
import json
import os
import shutil
import subprocess
import sys

import jax.numpy as jnp
import jsonschema
import numpy as np
import pytest
from click.testing import CliRunner

from kibitz.agents import net_agent
from kibitz.agents.formats.export import DOCUMENTED_GAMES, layout_markdown, tensor_layout
from kibitz.agents.formats.kibitz_agent_loader import AgentFileError, KibitzAgent, document_problems
from kibitz.agents.formats.kibitz_net_loader import KibitzNetAgent
from kibitz.agents.registry import make_agent
from kibitz.cli import main
from kibitz.games import encoding_layout, encoding_size, encoding_tensor, load_game
from kibitz.solvers import network

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL = "underdog(players=3,cards=5,bank=2)"
#: small hidden layers; doubt_and_bet's 39,904 inputs and 29,896 actions take the smallest
HIDDEN = {"underdog": (32, 32), "pub": (32, 32), "over_under": (32, 32), "doubt_and_bet": (16,)}
STATES = 1000


def random_network(game, hidden, seed, encoding="information_state_tensor", output="dense"):
    """Random weights with spread-out logits (the initial last layer is near zero) and nonzero biases."""
    spec = network.NetworkSpec.for_game(game, hidden, encoding, output)
    rng = np.random.default_rng(seed)
    params = network.init_params(spec, rng)
    params[-2] = params[-2] * np.float32(300.0)
    params = [p if p.ndim == 2 else rng.normal(0, 0.1, p.shape).astype(np.float32) for p in params]
    return spec, params


def random_states(game, count, seed, encoding="information_state_tensor"):
    """``count`` inputs (``encoding``) and legal masks of decision states of random play."""
    rng = np.random.default_rng(seed)
    xs = np.zeros((count, encoding_size(game, encoding)), np.float32)
    masks = np.zeros((count, game.num_distinct_actions()), np.float32)
    n = 0
    while n < count:
        state = game.new_initial_state()
        while not state.is_terminal() and n < count:
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes())
                state.apply_action(actions[rng.choice(len(actions), p=np.array(probs) / sum(probs))])
                continue
            legal = state.legal_actions()
            if rng.random() < 0.5:  # every other decision, to spread the states over more games
                xs[n] = encoding_tensor(state, state.current_player(), encoding)
                masks[n, legal] = 1.0
                n += 1
            state.apply_action(legal[int(rng.integers(len(legal)))])
    return xs, masks


def export(tmp_path, spec, params, name="net"):
    npz, out = tmp_path / f"{name}.npz", tmp_path / f"{name}.json.gz"
    network.save(npz, spec, params)
    r = CliRunner().invoke(main, ["export", str(npz), "--out", str(out)])
    assert r.exit_code == 0, r.output
    return out


#: (game, encoding, output) of the fidelity test: every game's dense network on its
#: information-state tensor, and doubt_and_bet's compact encoding with a factored output
FIDELITY = [(short, "information_state_tensor", "dense") for short in DOCUMENTED_GAMES] + [
    ("doubt_and_bet", "compact", "factored")]


@pytest.mark.parametrize("short, encoding, output", FIDELITY)
def test_onnxruntime_equals_numpy_and_jax_on_1000_random_states(short, encoding, output, tmp_path):
    game = load_game(short)
    hidden = HIDDEN[short] if encoding == "information_state_tensor" else (64, 64)
    spec, params = random_network(game, hidden, seed=len(short), encoding=encoding, output=output)
    index = network.action_index(spec, game)
    agent = KibitzNetAgent.load(export(tmp_path, spec, params), threads=2)
    assert (agent.encoding, agent.output) == (encoding, output)
    xs, masks = random_states(game, STATES, seed=1, encoding=encoding)
    logits, probs = agent.run(xs, masks)
    want = network.masked_softmax(network.forward(params, xs, index=index), masks)
    jparams = [jnp.asarray(p) for p in params]
    jindex = None if index is None else jnp.asarray(index)
    jax_probs = np.asarray(network.masked_softmax(network.forward(jparams, jnp.asarray(xs), xp=jnp, index=jindex),
                                                  jnp.asarray(masks), xp=jnp))
    np.testing.assert_allclose(logits, network.forward(params, xs, index=index), atol=1e-4, rtol=1e-5)
    np.testing.assert_allclose(probs, want, atol=1e-5, rtol=0)
    np.testing.assert_allclose(probs, jax_probs, atol=1e-5, rtol=0)
    assert probs[masks == 0].max() == 0.0
    legal_max = np.where(masks > 0, probs, 0).max(axis=1)
    assert (legal_max > 0.5).mean() > 0.05  # the weights make the policy far from uniform somewhere
    # the one-state call renormalises over the legal actions, as solvers.network.probabilities does
    legal = np.flatnonzero(masks[0]).tolist()
    one = agent.probabilities(xs[0], legal)
    ref = network.probabilities(params, xs[0], legal, index)
    assert sorted(one) == legal and max(abs(one[a] - ref[a]) for a in legal) < 1e-5


@pytest.mark.parametrize("short, encoding, output", FIDELITY)
def test_a_net_agent_plays_complete_games(short, encoding, output, tmp_path):
    game = load_game(short)
    path = export(tmp_path, *random_network(game, (8,), seed=3, encoding=encoding, output=output))
    agents = [make_agent(f"net({path})", game, p, seed=p) for p in range(game.num_players())]
    state = game.new_initial_state()
    rng = np.random.default_rng(0)
    moves = 0
    while not state.is_terminal():
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(actions[rng.choice(len(actions), p=np.array(probs) / sum(probs))])
            continue
        action = agents[state.current_player()].step(state)
        assert action in state.legal_actions()
        state.apply_action(action)
        moves += 1
    assert moves > 0 and len(state.returns()) == game.num_players()


def test_export_inspect_round_trip_and_the_schema(tmp_path):
    game = load_game(SMALL)
    spec, params = random_network(game, (16, 8), seed=5)
    path = export(tmp_path, spec, params)
    r = CliRunner().invoke(main, ["inspect", str(path), "--games", "3"])
    assert r.exit_code == 0, r.output
    assert "onnx.checker passed" in r.output and "ok: the file matches its game" in r.output
    doc = json.loads(gzip.decompress(path.read_bytes()))
    assert doc["format_version"] == 2 and doc["agent"] == "network" and doc["game"] == str(game)
    assert doc["network"] == {"input_size": 2493, "num_actions": 9, "hidden": [16, 8],
                              "encoding": "information_state_tensor", "output": "dense", "factors": 0}
    assert doc["input"]["layout"] == tensor_layout(game) and doc["num_players"] == 3
    assert document_problems(doc) == []
    with open(os.path.join(ROOT, "docs", "formats", "agent-file.schema.json")) as f:
        schema = json.load(f)
    jsonschema.validate(doc, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({k: v for k, v in doc.items() if k != "model"}, schema)
    # the stdlib loader checks it but names the network loader; policy(FILE) the same
    with pytest.raises(AgentFileError, match="kibitz_net_loader.py"):
        KibitzAgent.load(path)
    r = CliRunner().invoke(main, ["play", SMALL, "--seats", f"policy({path}),random,random"])
    assert r.exit_code == 2 and "net(FILE)" in r.output and "Traceback" not in r.output
    # the tournament plays it
    r = CliRunner().invoke(main, ["tournament", SMALL, "--agents", f"net({path}),random,heuristic",
                                  "--games", "3", "--no-progress", "--out", str(tmp_path / "t")])
    assert r.exit_code == 0, r.output
    # the same network exported twice gives the same model
    again = export(tmp_path, spec, params, name="again")
    assert json.loads(gzip.decompress(again.read_bytes()))["model"] == doc["model"]


DB_SMALL = "doubt_and_bet(players=2,chips=2,slots=1,colours=1,copies=2,single_bet=true)"


def test_a_compact_factored_file_records_its_encoding_and_output(tmp_path):
    import base64

    import onnx

    game = load_game(DB_SMALL)
    spec, params = random_network(game, (8,), seed=4, encoding="compact", output="factored")
    network.save(tmp_path / "db.npz", spec, params)
    path = tmp_path / "db.json.gz"
    r = CliRunner().invoke(main, ["export", str(tmp_path / "db.npz"), "--out", str(path)])
    assert r.exit_code == 0 and "network (compact) 77 -> 8 -> 39 factors -> 48, ONNX opset 17" in r.output, r.output
    r = CliRunner().invoke(main, ["inspect", str(path), "--games", "3"])
    assert r.exit_code == 0, r.output
    assert "encoding compact, output factored (39 factor logits)" in r.output
    doc = json.loads(gzip.decompress(path.read_bytes()))
    assert doc["network"] == {"input_size": 77, "num_actions": 48, "hidden": [8], "encoding": "compact",
                              "output": "factored", "factors": 39}
    assert doc["input"]["tensor"] == "compact" and doc["input"]["layout"] == encoding_layout(game, "compact")
    assert "docs/rules/doubt_and_bet.md#compact-encoding" in doc["input"]["documentation"]
    assert "docs/rules/doubt_and_bet.md#action-factors" in doc["output"]["logits"]
    with open(os.path.join(ROOT, "docs", "formats", "agent-file.schema.json")) as f:
        schema = json.load(f)
    jsonschema.validate(doc, schema)
    no_factors = json.loads(json.dumps(doc))
    del no_factors["network"]["factors"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(no_factors, schema)
    model = onnx.load_model_from_string(base64.b64decode(doc["model"]["base64"]))
    assert [n.op_type for n in model.graph.node].count("Gather") == 4
    assert model.opset_import[0].version == 17 and model.ir_version == 8
    # what the loaders refuse
    for change, words in [(lambda d: d["network"].update(output="sparse"), "'network.output' is 'sparse'"),
                          (lambda d: d["network"].update(factors=0), "a factored output has a whole number"),
                          (lambda d: d["input"].update(tensor="information_state_tensor"),
                           "it must be the network's encoding 'compact'"),
                          (lambda d: d["network"].update(encoding="fancy"), "this loader reads")]:
        bad = json.loads(json.dumps(doc))
        change(bad)
        assert any(words in p for p in document_problems(bad)), (words, document_problems(bad))
    bad = json.loads(json.dumps(doc))
    bad["network"]["factors"] = 40
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(AgentFileError, match="the network has 40 factor logits; doubt_and_bet.* has 39"):
        make_agent(f"net({tmp_path / 'bad.json'})", game, 0)
    r = CliRunner().invoke(main, ["play", "underdog(players=3,cards=5,bank=2)", "--seats",
                                  f"net({path}),random,random"])
    assert r.exit_code == 2 and "is a network for doubt_and_bet" in r.output and "Traceback" not in r.output


def test_the_net_loader_runs_without_kibitz_or_pyspiel(tmp_path):
    """The two loader files copied into an empty folder, run from there with -I."""
    game = load_game(SMALL)
    spec, params = random_network(game, (16,), seed=6)
    path = export(tmp_path, spec, params)
    lib = tmp_path / "lib"
    lib.mkdir()
    for name in ("kibitz_agent_loader.py", "kibitz_net_loader.py"):
        shutil.copy(os.path.join(ROOT, "agents", "formats", name), lib / name)
    x, mask = random_states(game, 1, seed=2)
    legal = np.flatnonzero(mask[0]).tolist()
    script = (
        "import json, sys\n"
        f"sys.path.insert(0, {str(lib)!r})\n"
        "from kibitz_net_loader import KibitzNetAgent\n"
        f"agent = KibitzNetAgent.load({str(path)!r})\n"
        f"print(json.dumps(agent.probabilities({x[0].tolist()!r}, {legal!r})))\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('kibitz', 'pyspiel')))\n")
    r = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True, timeout=60,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    probs, modules = r.stdout.splitlines()
    assert modules == "[]"
    got = {int(a): p for a, p in json.loads(probs).items()}
    want = network.probabilities(params, x[0], legal)
    assert max(abs(got[a] - want[a]) for a in legal) < 1e-5


def test_trained_plays_the_shipped_file_and_names_the_games_that_have_one(tmp_path, monkeypatch):
    game = load_game(SMALL)
    shipped = tmp_path / "trained"
    shipped.mkdir()
    monkeypatch.setattr(net_agent, "TRAINED_DIR", shipped)
    with pytest.raises(ValueError, match=r"games with one: none yet\); train one with `kibitz train underdog"):
        make_agent("trained", game, 0)
    path = export(tmp_path, *random_network(game, (8,), seed=7))
    shutil.copy(path, shipped / "underdog.json.gz")
    agent = make_agent("trained", game, 1, seed=0)
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    if state.current_player() == 1:
        assert sorted(agent.action_probabilities(state)) == state.legal_actions()
    with pytest.raises(ValueError, match=r"no trained network ships for 'pub' \(games with one: underdog\)"):
        make_agent("trained", load_game("pub"), 0)
    with pytest.raises(ValueError, match=r"the trained network for 'underdog' plays underdog\(.*\) \(its default "
                                         r"size\), not underdog\(bank=3"):  # another size of the game
        make_agent("trained", load_game("underdog(players=3,cards=5,bank=3)"), 0)


def test_the_docs_list_each_games_tensor_layout():
    with open(os.path.join(ROOT, "docs", "formats", "agent-file.md")) as f:
        text = f.read()
    assert layout_markdown() in text
    for short in DOCUMENTED_GAMES:
        game = load_game(short)
        pieces = tensor_layout(game)
        assert pieces[0]["offset"] == 0 and sum(p["size"] for p in pieces) == game.information_state_tensor_size()
        assert all(a["offset"] + a["size"] == b["offset"] for a, b in zip(pieces, pieces[1:]))


def test_the_pyproject_ships_the_trained_folder():
    # (tests/test_layers.py builds the wheel and finds the four files in it)
    import tomllib
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        setuptools = tomllib.load(f)["tool"]["setuptools"]
    assert "kibitz.agents.trained" in setuptools["packages"]
    assert setuptools["package-data"]["kibitz.agents.trained"] == ["*.json.gz"]


def test_a_tabular_file_is_named_as_such_by_the_network_readers(tmp_path):
    for args in (["solve", "kuhn_poker", "-n", "5", "-o", tmp_path / "k.json", "--no-progress", "--no-cache"],
                 ["export", tmp_path / "k.json", "-o", tmp_path / "k.agent.json"]):
        r = CliRunner().invoke(main, [str(a) for a in args])
        assert r.exit_code == 0, r.output
    path = tmp_path / "k.agent.json"
    with pytest.raises(AgentFileError, match="a tabular agent file: load it with kibitz_agent_loader"):
        KibitzNetAgent.load(path)
    r = CliRunner().invoke(main, ["play", "kuhn_poker", "--seats", f"net({path}),random"])
    assert r.exit_code == 2 and f"a tabular agent file; play it with policy({path})" in r.output


@pytest.mark.parametrize("short", ["underdog", "pub", "over_under", "doubt_and_bet"])
def test_a_person_plays_the_shipped_networks_of_every_game(short):
    """`kibitz play GAME --seats human,trained,trained,trained` at the default
    size: the person (always the first listed move) plays a whole game
    against the networks that ship."""
    assert (net_agent.TRAINED_DIR / f"{short}.json.gz").is_file(), f"no shipped network for {short}"
    r = CliRunner().invoke(main, ["play", short, "--seats", "human,trained,trained,trained", "--seed", "1"],
                           input="1\n" * 3000)
    assert r.exit_code == 0, r.output[-2000:]
    assert "returns:" in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("short, encoding, output", [("pub", "information_state_tensor", "dense"),
                                                     ("doubt_and_bet", "compact", "factored")])
def test_export_temperature_divides_the_logits(short, encoding, output, tmp_path):
    """--temperature T: the file's logits are the network's divided by T (dense and factored),
    recorded in its source; a tabular source refuses it in one line."""
    game = load_game(short)
    spec, params = random_network(game, (16,), seed=3, encoding=encoding, output=output)
    npz = tmp_path / "net.npz"
    network.save(npz, spec, params)
    out = tmp_path / "sharp.json.gz"
    r = CliRunner().invoke(main, ["export", str(npz), "--out", str(out), "--temperature", "0.25"])
    assert r.exit_code == 0 and "logits / 0.25" in r.output, r.output
    agent = KibitzNetAgent.load(out)
    xs, masks = random_states(game, 50, seed=2, encoding=encoding)
    logits, probs = agent.run(xs, masks)
    index = network.action_index(spec, game)
    np.testing.assert_allclose(logits, 4.0 * network.forward(params, xs, index=index), atol=1e-3, rtol=1e-5)
    np.testing.assert_allclose(probs, network.masked_softmax(4.0 * network.forward(params, xs, index=index), masks),
                               atol=1e-5, rtol=0)
    with gzip.open(out) as f:
        assert json.load(f)["source"] == {"kind": "network", "file": "net.npz", "temperature": 0.25}
    for bad in ("0", "-1", "nan"):
        r = CliRunner().invoke(main, ["export", str(npz), "--out", str(out), "--temperature", bad])
        assert r.exit_code == 2 and "--temperature" in r.output and "Traceback" not in r.output
    policy = tmp_path / "kuhn.json.gz"
    assert CliRunner().invoke(main, ["solve", "kuhn_poker", "-n", "5", "--no-progress", "--out", str(policy)]).exit_code == 0
    r = CliRunner().invoke(main, ["export", str(policy), "--out", str(tmp_path / "a.json"), "--temperature", "0.5"])
    assert r.exit_code == 1 and "--temperature is for network files" in r.output and "Traceback" not in r.output
