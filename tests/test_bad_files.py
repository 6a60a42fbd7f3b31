"""Every file reader against broken, truncated, hostile and wrong-typed files.

Agent files (the stdlib loader, ``policy(FILE)`` in play and tournament,
``kibitz inspect``), policy files (``kibitz export``, ``load_policy``),
checkpoints (``kibitz solve --resume``, ``kibitz export``) and games.jsonl
(``kibitz replay``, ``kibitz tournament --resume``), the tree cache (rebuilt)
and experiment specs (``kibitz experiment run``). Each bad file must give
its reader's error class (a ValueError) and, through the CLI, one line
naming the problem, the documented exit status, no traceback, and no file
changed. A gzip bomb is refused early: a subprocess measures the memory.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import pathlib
import re
import subprocess
import sys
import zipfile

import numpy as np
import pytest
from click.testing import CliRunner

from kibitz.agents.formats import kibitz_agent_loader as loader
from kibitz.agents.formats.kibitz_agent_loader import AgentFileError, KibitzAgent
from kibitz.agents.matches.tournament import RecordsError, read_records, run_tournament
from kibitz.cli import main
from kibitz.solvers import _io, driver, load_policy, read_policy_file
from kibitz.solvers.cfr import CFRSolver, make_config
from kibitz.solvers.policy_file import PolicyFileError
from kibitz.solvers.tree import compile_tree

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOADER = os.path.join(ROOT, "agents", "formats", "kibitz_agent_loader.py")
REPO = pathlib.Path(ROOT)
MIB = 2**20


def cli(args, status, *needles):
    """Runs ``kibitz ARGS``; asserts the exit status, one error line naming
    every needle, and no traceback. Returns the output."""
    r = CliRunner().invoke(main, [str(a) for a in args])
    out = r.output
    assert r.exit_code == status, out
    assert "Traceback" not in out and not isinstance(r.exception, (KeyError, TypeError, AttributeError))
    errors = [line for line in out.splitlines() if line.startswith("Error")]
    assert len(errors) == 1 and "Aborted" not in out, out
    for needle in needles:
        assert needle in errors[0], (needle, out)
    return out


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A Kuhn policy file, its agent file and checkpoint, an MCCFR checkpoint
    and a finished tournament."""
    d = tmp_path_factory.mktemp("good")
    for args in (["solve", "kuhn_poker", "-n", "30", "-o", d / "kuhn.json", "--no-progress", "--no-cache"],
                 ["export", d / "kuhn.json", "-o", d / "kuhn.agent.json.gz"],
                 ["solve", "kuhn_poker", "-a", "mccfr-es", "-n", "20", "-o", d / "mc.json", "--no-progress"]):
        r = CliRunner().invoke(main, [str(a) for a in args])
        assert r.exit_code == 0, r.output
    run_tournament("kuhn_poker", ["random", "random"], 6, seed=1, out_dir=str(d / "t"), progress=False)
    return d


@pytest.fixture
def policy_doc(made):
    return json.loads((made / "kuhn.json").read_text())


@pytest.fixture
def agent_doc(made):
    return json.loads(gzip.decompress((made / "kuhn.agent.json.gz").read_bytes()))


def edit(doc, change):
    doc = json.loads(json.dumps(doc))
    change(doc)
    return json.dumps(doc).encode()


def first(doc):
    return doc["policy"][sorted(doc["policy"])[0]]


# ------------------------------------------------------------ agent files
#: bytes that are neither text nor gzip
BINARY = bytes(range(0x9c, 0x100)) + bytes(range(0x9c))

#: name -> (the file's bytes from a good agent document, what the error names)
AGENT_CASES = {
    "probs [1, 1]": (lambda d: edit(d, lambda x: first(x).update(probs=[1, 1])), "sum to 2; they must sum to 1"),
    "one prob for two actions": (lambda d: edit(d, lambda x: first(x).update(probs=[1.0])),
                                 "1 probabilities for 2 actions"),
    "string probs": (lambda d: edit(d, lambda x: first(x).update(probs="0.5,0.5")),
                     "'probs' is '0.5,0.5'; it must be a list of finite numbers in [0, 1]"),
    "NaN literal": (lambda d: edit(d, lambda x: first(x).update(probs=[0.5, 0.5])).replace(
        b"[0.5, 0.5]", b"[NaN, 1.0]", 1), "'probs' is [nan, 1.0]"),
    "Infinity literal": (lambda d: edit(d, lambda x: first(x).update(probs=[0.5, 0.5])).replace(
        b"[0.5, 0.5]", b"[Infinity, 0]", 1), "'probs' is [inf, 0]"),
    "1e999": (lambda d: edit(d, lambda x: first(x).update(probs=[0.5, 0.5])).replace(
        b"[0.5, 0.5]", b"[1e999, 0]", 1), "'probs' is [inf, 0]"),
    "negative prob": (lambda d: edit(d, lambda x: first(x).update(probs=[-0.5, 1.5])), "in [0, 1]"),
    "bool probs": (lambda d: edit(d, lambda x: first(x).update(probs=[True, False])), "'probs' is [True, False]"),
    "player missing": (lambda d: edit(d, lambda x: first(x).pop("player")), "'player' is missing"),
    "player 7": (lambda d: edit(d, lambda x: first(x).update(player=7)), "'player' is 7; it must be a player id 0..1"),
    "actions unsorted": (lambda d: edit(d, lambda x: first(x).update(actions=[1, 0])), "ascending and distinct"),
    "actions strings": (lambda d: edit(d, lambda x: first(x).update(actions=["pass", "bet"])),
                        "'actions' is ['pass', 'bet']"),
    "entry a list": (lambda d: edit(d, lambda x: x["policy"].update({"0": [0.5, 0.5]})),
                     "policy entry '0': must be an object"),
    "policy a list": (lambda d: edit(d, lambda x: x.update(policy=[1, 2])), "field 'policy' is [1, 2]"),
    "unseen a string": (lambda d: edit(d, lambda x: x.update(unseen="uniform")), "field 'unseen' is 'uniform'"),
    "unseen behaviour": (lambda d: edit(d, lambda x: x.update(unseen={"behaviour": "guess"})),
                         '"behaviour": "uniform" or "error"'),
    "no game": (lambda d: edit(d, lambda x: x.pop("game")), "field 'game' is missing"),
    "game a number": (lambda d: edit(d, lambda x: x.update(game=3)), "field 'game' is 3"),
    "num_players 5": (lambda d: edit(d, lambda x: x.update(num_players=5)),
                      "field 'num_players' is 5; kuhn_poker() has 2 players"),
    "num_players string": (lambda d: edit(d, lambda x: x.update(num_players="2")), "field 'num_players' is '2'"),
    "game does not load": (lambda d: edit(d, lambda x: x.update(game="no_such_game()")), "field 'game' does not load"),
    "format version 2": (lambda d: edit(d, lambda x: x.update(format_version=2)), "'format_version' is 2"),
    "format version true": (lambda d: edit(d, lambda x: x.update(format_version=True)), "'format_version' is True"),
    "another format": (lambda d: edit(d, lambda x: x.update(format="onnx")), "'format' is 'onnx'"),
    "a JSON list": (lambda d: b"[1, 2, 3]", "must be a JSON object, not list"),
    "nash_conv NaN": (lambda d: edit(d, lambda x: x.update(nash_conv=float("nan"))), "field 'nash_conv' is nan"),
    "truncated gzip": (lambda d: gzip.compress(json.dumps(d).encode())[:300], "truncated or damaged gzip"),
    "gzip of garbage": (lambda d: b"\x1f\x8b" + os.urandom(200), "truncated or damaged gzip"),
    "empty": (lambda d: b"", "empty file"),
    "whitespace only": (lambda d: b" \n\t ", "empty file"),
    "not JSON": (lambda d: b"format: kibitz-agent\n", "not JSON"),
    "deeply nested": (lambda d: b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    "5000-digit number": (lambda d: b'{"format_version": ' + b"9" * 5000 + b"}", "not JSON (Exceeds the limit"),
    "latin-1": (lambda d: edit(d, lambda x: x.update(name="k\u00fchn")).replace(b"k\\u00fchn", "k\u00fchn".encode("latin-1")),
                "not UTF-8 text"),
    "UTF-16": (lambda d: json.dumps(d).encode("utf-16"), "not UTF-8 text"),
    "random bytes, named .gz but not gzip": (lambda d: BINARY, "bad.json.gz: not a gzip file "
                                             "(its name ends in .gz, but it does not begin with gzip's bytes 1f 8b)"),
    "random bytes": (lambda d: BINARY, "not UTF-8 text (invalid start byte at byte 0), "
                     "nor a gzip file"),
    "text, named .gz but not gzip": (lambda d: json.dumps(d).encode()[:-1], "not a gzip file"),
    "UTF-8 with a BOM": (lambda d: b"\xef\xbb\xbf" + json.dumps(d).encode(), "not JSON (Unexpected UTF-8 BOM"),
}


@pytest.mark.parametrize("case", sorted(AGENT_CASES))
def test_a_bad_agent_file_is_refused_by_every_reader(case, agent_doc, tmp_path):
    make, needle = AGENT_CASES[case]
    path = tmp_path / ("bad.json.gz" if "gzip" in case else "bad.json")
    path.write_bytes(make(agent_doc))
    # the 'game' checks need the game, which the stdlib loader does not load
    if "game" not in needle and "num_players' is 5" not in needle:
        with pytest.raises(AgentFileError, match="bad.json") as e:
            KibitzAgent.load(path)
        assert needle in str(e.value)
    out = CliRunner().invoke(main, ["inspect", str(path), "--games", "5"])
    assert out.exit_code == 1 and needle in out.output and "Traceback" not in out.output, out.output
    seat = f"policy({path})"
    cli(["play", "kuhn_poker", "--seats", f"{seat},random", "--seed", "1"], 2, "--seats", needle)
    cli(["tournament", "kuhn_poker", "--agents", f"{seat},random", "--games", "2", "--no-progress",
         "--out", tmp_path / "t"], 2, needle)
    assert not (tmp_path / "t" / "games.jsonl").exists()


@pytest.mark.parametrize("change, needle", [
    (lambda e: e.update(player=1 - e["player"]), "is for player"),
    (lambda e: e.update(actions=[0], probs=[1.0]), "lists actions [0], the caller's legal actions are [0, 1]"),
])
def test_an_entry_that_does_not_fit_the_game_stops_play(change, needle, agent_doc, tmp_path):
    """Well formed, but every entry lies about its player or legal actions:
    the loader cannot know, the policy agent finds out when it plays one."""
    doc = json.loads(json.dumps(agent_doc))
    for entry in doc["policy"].values():
        change(entry)
    path = tmp_path / "lies.json"
    path.write_text(json.dumps(doc))
    KibitzAgent.load(path)  # the structure is fine
    cli(["play", "kuhn_poker", "--seats", f"policy({path}),policy({path})", "--seed", "3"], 1,
        "lies.json: policy entry", needle)
    r = CliRunner().invoke(main, ["inspect", str(path), "--games", "5"])
    assert r.exit_code == 1 and "file has player" in r.output


def test_a_missing_file_or_a_directory_as_agent_file(tmp_path):
    for path, needle in ((tmp_path / "nope.json", "does not exist"), (tmp_path, "a directory, not a file")):
        cli(["play", "kuhn_poker", "--seats", f"policy({path}),random"], 2, needle)
        cli(["tournament", "kuhn_poker", "--agents", f"policy({path}),random", "--games", "2",
             "--no-progress", "--out", tmp_path / "t"], 2, needle)
    with pytest.raises(AgentFileError, match="no such file"):
        KibitzAgent.load(tmp_path / "nope.json")
    with pytest.raises(AgentFileError, match="a directory"):
        KibitzAgent.load(tmp_path)
    cli(["inspect", tmp_path], 2, "is a directory")


def test_the_loader_standalone_refuses_what_it_used_to_play(agent_doc, tmp_path):
    """Without kibitz (-I -S): [1, 1] and a truncated gzip are AgentFileErrors."""
    (tmp_path / "p11.json").write_bytes(AGENT_CASES["probs [1, 1]"][0](agent_doc))
    (tmp_path / "cut.json.gz").write_bytes(AGENT_CASES["truncated gzip"][0](agent_doc))
    script = (
        "import importlib.util, sys\n"
        f"spec = importlib.util.spec_from_file_location('loader', {LOADER!r})\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "for name in sys.argv[1:]:\n"
        "    try:\n"
        "        m.KibitzAgent.load(name)\n"
        "    except m.AgentFileError as e:\n"
        "        print(e)\n")
    r = subprocess.run([sys.executable, "-I", "-S", "-c", script, str(tmp_path / "p11.json"),
                        str(tmp_path / "cut.json.gz")], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and not r.stderr, r.stderr
    assert "sum to 2; they must sum to 1" in r.stdout and "truncated or damaged gzip" in r.stdout


def test_the_loader_says_which_legal_actions_disagree(agent_doc, tmp_path):
    path = tmp_path / "a.json"
    path.write_text(json.dumps(agent_doc))
    agent = KibitzAgent.load(path)
    key = sorted(agent.policy)[0]
    with pytest.raises(AgentFileError, match="legal actions are"):
        agent.action_probabilities(key, [0, 1, 2])
    with pytest.raises(AgentFileError, match="is for player"):
        agent.action_probabilities(key, [0, 1], player=1 - agent.policy[key]["player"])


def test_inspect_lists_every_problem(agent_doc, tmp_path):
    doc = json.loads(json.dumps(agent_doc))
    for entry in doc["policy"].values():
        entry["probs"] = [0.7, 0.7]
    doc["num_players"] = "two"
    path = tmp_path / "many.json"
    path.write_text(json.dumps(doc))
    r = CliRunner().invoke(main, ["inspect", str(path)])
    assert r.exit_code == 1 and "Traceback" not in r.output
    listed = r.output.split("problems:\n")[1].splitlines()
    assert "field 'num_players' is 'two'" in listed[0]
    assert sum("sum to 1.4" in line for line in listed) == 12


# ------------------------------------------------------------ network agent files
NET_GAME = "underdog(players=3,cards=5,bank=2)"


@pytest.fixture(scope="module")
def net_doc(tmp_path_factory):
    """A small network agent file's document (random weights)."""
    from kibitz.games import load_game
    from kibitz.solvers import network

    d = tmp_path_factory.mktemp("net")
    spec = network.NetworkSpec.for_game(load_game(NET_GAME), hidden=(4,))
    network.save(d / "n.npz", spec, network.init_params(spec, np.random.default_rng(0)))
    r = CliRunner().invoke(main, ["export", str(d / "n.npz"), "-o", str(d / "n.json")])
    assert r.exit_code == 0, r.output
    return json.loads((d / "n.json").read_text())


def _with_model(doc, change_model):
    """The document with its ONNX model changed by ``change_model(ModelProto)``, bytes and hash redone."""
    import base64
    import hashlib

    import onnx

    model = onnx.load_model_from_string(base64.b64decode(doc["model"]["base64"]))
    change_model(model)
    data = model.SerializeToString()
    doc = json.loads(json.dumps(doc))
    doc["model"].update(base64=base64.b64encode(data).decode(), bytes=len(data),
                        sha256=hashlib.sha256(data).hexdigest())
    return json.dumps(doc).encode()


def _unknown_op(model):
    next(n for n in model.graph.node if n.op_type == "Relu").op_type = "NoSuchOp"


#: name -> (the file's bytes from a good network document, what the network loader says, what kibitz says)
NET_CASES = {
    "input_size off by one": (lambda d: edit(d, lambda x: x["network"].update(input_size=2494)),
                              "the model's widths", "the network takes 2,494 inputs and gives 9 actions; "
                              "underdog(bank=2,cards=5"),
    "num_actions of another game": (lambda d: edit(d, lambda x: x["network"].update(num_actions=17)),
                                    "the model's widths", "has information-state tensors of 2,493 floats and 9"),
    "hash mismatch": (lambda d: edit(d, lambda x: x["model"].update(sha256="0" * 64)),
                      "SHA-256 does not match", "SHA-256 does not match"),
    "model fails the checker": (lambda d: _with_model(d, _unknown_op), "onnxruntime cannot load the model",
                                "the model fails onnx.checker"),
    "model cut short": (lambda d: edit(d, lambda x: x["model"].update(base64=x["model"]["base64"][:4000])),
                        "field 'model.bytes' says", "a truncated or edited file"),
    "model not base64": (lambda d: edit(d, lambda x: x["model"].update(base64="**not base64**")),
                         "'model.base64' is not valid base64", "not valid base64"),
    "truncated gzip": (lambda d: gzip.compress(json.dumps(d).encode())[:3000], "truncated or damaged gzip",
                       "truncated or damaged gzip"),
    "hidden empty": (lambda d: edit(d, lambda x: x["network"].update(hidden=[])), "'network.hidden' is []",
                     "a non-empty list of layer widths"),
    "no agent kind": (lambda d: edit(d, lambda x: x.pop("agent")), "its field 'agent' is 'missing'",
                      "'tabular', 'network'"),
    "no model": (lambda d: edit(d, lambda x: x.pop("model")), "field 'model' is missing", "field 'model' is missing"),
}


@pytest.mark.parametrize("case", sorted(NET_CASES))
def test_a_bad_network_file_is_refused_with_one_line(case, net_doc, tmp_path):
    from kibitz.agents.formats.kibitz_net_loader import KibitzNetAgent

    make, loader_needle, kibitz_needle = NET_CASES[case]
    path = tmp_path / ("bad.json.gz" if "gzip" in case else "bad.json")
    path.write_bytes(make(net_doc))
    with pytest.raises(AgentFileError, match="bad.json") as e:
        KibitzNetAgent.load(path)
    assert loader_needle in str(e.value) and "\n" not in str(e.value)
    r = CliRunner().invoke(main, ["inspect", str(path), "--games", "2"])
    assert r.exit_code == 1 and kibitz_needle in r.output and "Traceback" not in r.output, r.output
    cli(["play", NET_GAME, "--seats", f"net({path}),random,random", "--seed", "1"], 2, "--seats", kibitz_needle)
    cli(["tournament", NET_GAME, "--agents", f"net({path}),random,random", "--games", "2", "--no-progress",
         "--out", tmp_path / "t"], 2, kibitz_needle)
    assert not (tmp_path / "t" / "games.jsonl").exists()


def test_a_damaged_npz_entry_is_one_line_in_export_and_distill(tmp_path):
    from kibitz.games import load_game
    from kibitz.solvers import network

    spec = network.NetworkSpec.for_game(load_game(NET_GAME), hidden=(4,))
    network.save(tmp_path / "n.npz", spec, network.init_params(spec, np.random.default_rng(0)))
    data = bytearray((tmp_path / "n.npz").read_bytes())
    with zipfile.ZipFile(tmp_path / "n.npz") as z:
        info = z.getinfo("W1.npy")
    data[info.header_offset + 30 + len(info.filename) + len(info.extra) + info.file_size - 3] ^= 0xFF
    (tmp_path / "crc.npz").write_bytes(bytes(data))  # the zip reads; W1's CRC-32 does not match
    cli(["export", tmp_path / "crc.npz", "--out", tmp_path / "o.json"], 1, "crc.npz: not a kibitz network file",
        "Bad CRC-32 for file 'W1.npy'")
    assert not (tmp_path / "o.json").exists()
    cli(["distill", NET_GAME, "--teacher", "random", "--opponent", "random", "--games", "2", "--init",
         tmp_path / "crc.npz", "--out", tmp_path / "d.npz", "--no-progress"], 2, "--init", "Bad CRC-32")


def test_a_network_file_for_another_size_of_the_game_is_refused(net_doc, tmp_path):
    path = tmp_path / "n.json"
    path.write_text(json.dumps(net_doc))
    cli(["play", "underdog(players=3,cards=5,bank=3)", "--seats", f"net({path}),random,random"], 2,
        "is a network for underdog(bank=2")
    cli(["play", NET_GAME, "--seats", f"policy({path}),random,random"], 2, "a network agent file", "net(FILE)")


# ------------------------------------------------------------ policy files
POLICY_CASES = {
    "NaN literal": (lambda d: edit(d, lambda x: first(x).update(probs=[0.5, 0.5])).replace(
        b"[0.5,0.5]", b"[NaN,1.0]", 1).replace(b"[0.5, 0.5]", b"[NaN, 1.0]", 1), "'probs' is [nan, 1.0]"),
    "probs [1, 1]": (lambda d: edit(d, lambda x: first(x).update(probs=[1, 1])), "sum to 2"),
    "string probs": (lambda d: edit(d, lambda x: first(x).update(probs="0.5,0.5")), "'probs' is '0.5,0.5'"),
    "num_players 5": (lambda d: edit(d, lambda x: x.update(num_players=5)), "kuhn_poker() has 2 players"),
    "policy a list": (lambda d: edit(d, lambda x: x.update(policy=[])), "field 'policy' is []"),
    "no game": (lambda d: edit(d, lambda x: x.pop("game")), "field 'game' is 'missing'"),
    "format version 9": (lambda d: edit(d, lambda x: x.update(format_version=9)), "format version 9"),
    "an agent file": (lambda d: edit(d, lambda x: x.update(format="kibitz-agent")), "not a kibitz policy file"),
    "truncated gzip": (lambda d: gzip.compress(json.dumps(d).encode())[:200], "truncated or damaged gzip"),
    "empty": (lambda d: b"", "empty file"),
    "latin-1": (lambda d: b'{"format": "k\xfchn"}', "not UTF-8 text"),
    "random bytes, named .gz but not gzip": (lambda d: BINARY, "bad.json.gz: not a gzip file"),
    "deeply nested": (lambda d: b'{"a":' * 50_000 + b"1" + b"}" * 50_000, "nested too deeply"),
    "a number": (lambda d: b"42", "not a kibitz policy file"),
}


@pytest.mark.parametrize("case", sorted(POLICY_CASES))
def test_a_bad_policy_file_is_refused_by_export_and_load_policy(case, policy_doc, tmp_path):
    make, needle = POLICY_CASES[case]
    src = tmp_path / ("bad.json.gz" if "gzip" in case else "bad.json")
    src.write_bytes(make(policy_doc))
    cli(["export", src, "-o", tmp_path / "out.json"], 1, "cannot export", needle)
    assert not (tmp_path / "out.json").exists()
    with pytest.raises(PolicyFileError, match="bad.json"):
        load_policy(src)


def test_load_policy_names_missing_and_mismatched_entries(policy_doc, tmp_path):
    doc = json.loads(json.dumps(policy_doc))
    key = sorted(doc["policy"])[0]
    doc["policy"][key]["probs"] = [float("nan"), 1.0]
    (tmp_path / "nan.json").write_text(json.dumps(doc))
    with pytest.raises(PolicyFileError, match=rf"information state '{key}': probabilities \[nan, 1.0\]"):
        load_policy(tmp_path / "nan.json")
    del doc["policy"][key]
    (tmp_path / "hole.json").write_text(json.dumps(doc))
    with pytest.raises(PolicyFileError, match="1 information states of kuhn_poker.. are missing"):
        load_policy(tmp_path / "hole.json")
    with pytest.raises(PolicyFileError, match="a directory"):
        read_policy_file(tmp_path)


# ------------------------------------------------------------ checkpoints
def _npz(path, **arrays):
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def _meta(**fields):
    return np.frombuffer(json.dumps(fields).encode(), dtype=np.uint8)


@pytest.fixture
def ckpt(made):
    return (made / "kuhn.json.ckpt.npz").read_bytes()


CHECKPOINT_CASES = {
    "truncated": (lambda good, p: p.write_bytes(good[: len(good) // 2]), "not a kibitz checkpoint"),
    "a text file": (lambda good, p: p.write_text("not a checkpoint\n"), "not a kibitz checkpoint"),
    "empty": (lambda good, p: p.write_bytes(b""), "not a kibitz checkpoint"),
    "a .npy array": (lambda good, p: np.save(open(p, "wb"), np.zeros(3)), "a single numpy array"),
    "no meta": (lambda good, p: _npz(p, regret=np.zeros(3)), "no 'meta' entry"),
    "meta not JSON": (lambda good, p: _npz(p, meta=np.frombuffer(b"{oops", dtype=np.uint8)), "not a kibitz checkpoint"),
    "meta a list": (lambda good, p: _npz(p, meta=_meta()[:0]), "not a kibitz checkpoint"),
    "meta lacks the game": (lambda good, p: _npz(p, meta=_meta(algorithm="cfr+", settings={})),
                            "lacks the game"),
    "a zip of text": (lambda good, p: zipfile.ZipFile(p, "w").writestr("meta.npy", "hello"),
                      "its entry 'meta' is not a numpy array"),
}


@pytest.mark.parametrize("case", sorted(CHECKPOINT_CASES))
def test_a_bad_checkpoint_is_refused_by_resume_and_export(case, ckpt, tmp_path):
    make, needle = CHECKPOINT_CASES[case]
    out = tmp_path / "k.json"
    path = driver.checkpoint_path(out)
    make(ckpt, path)
    before = path.read_bytes()
    with pytest.raises(driver.CheckpointError, match=needle):
        driver.read_checkpoint(path)
    cli(["solve", "kuhn_poker", "-n", "40", "-o", out, "--resume", "--no-progress", "--no-cache"], 1,
        "--resume", needle)
    cli(["export", path, "-o", tmp_path / "a.json"], 1, "cannot export", needle)
    assert path.read_bytes() == before and not out.exists() and not (tmp_path / "a.json").exists()


def test_a_directory_where_the_checkpoint_should_be(tmp_path):
    out = tmp_path / "k.json"
    driver.checkpoint_path(out).mkdir()
    cli(["solve", "kuhn_poker", "-n", "40", "-o", out, "--resume", "--no-progress"], 2, "--out",
        "k.json.ckpt.npz exists and is not a file")
    assert not out.exists()


def test_a_checkpoint_of_the_wrong_shape_is_not_loaded(ckpt, tmp_path):
    """The right meta, arrays of another size: named, not a numpy traceback."""
    with np.load(io.BytesIO(ckpt)) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["regret"] = arrays["regret"][:5]
    path = tmp_path / "k.json.ckpt.npz"
    _npz(path, **arrays)
    tree = compile_tree(__import__("pyspiel").load_game("kuhn_poker"), use_cache=False)
    meta, _ = driver.read_checkpoint(path)
    with pytest.raises(driver.CheckpointError, match="does not hold the state of this solver"):
        driver.load_checkpoint(path, CFRSolver(tree, make_config("cfr+")), {})
    cli(["solve", "kuhn_poker", "-n", "40", "-o", tmp_path / "k.json", "--resume", "--no-progress"], 1,
        "does not hold the state")
    cli(["export", path, "-o", tmp_path / "a.json"], 1, "not the checkpoint of a kibitz solve")


def test_an_mccfr_checkpoint_with_a_damaged_state(made, tmp_path):
    with np.load(made / "mc.json.ckpt.npz") as z:
        arrays = {k: z[k] for k in z.files}
    arrays["mccfr"] = arrays["mccfr"][:40]
    path = tmp_path / "mc.json.ckpt.npz"
    _npz(path, **arrays)
    cli(["solve", "kuhn_poker", "-a", "mccfr-es", "-n", "30", "-o", tmp_path / "mc.json", "--resume",
         "--no-progress"], 1, "truncated or damaged gzip data")
    cli(["export", path, "-o", tmp_path / "a.json"], 1, "truncated or damaged gzip data")


def test_a_checkpoint_whose_arrays_pass_the_limit(tmp_path, monkeypatch):
    """Declared sizes count: refused before an array is read."""
    path = tmp_path / "big.ckpt.npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("meta.npy", b"x")
        with zf.open("regret.npy", "w") as f:
            np.lib.format.write_array_header_1_0(f, {"descr": "<f8", "fortran_order": False, "shape": (3 * MIB,)})
            for _ in range(24):
                f.write(bytes(MIB))
    monkeypatch.setenv("KIBITZ_MAX_FILE_MB", "16")
    with pytest.raises(driver.CheckpointError, match="arrays take 24 MiB, more than the limit of 16 MiB"):
        driver.read_checkpoint(path)


# ------------------------------------------------------------ games.jsonl
def _lines(made):
    return (made / "t" / "games.jsonl").read_text().splitlines(keepends=True)


RECORD_CASES = {
    "a policy file": (lambda lines, made: (made / "kuhn.json").read_bytes(), "line 1: field 'index' is missing"),
    "gzip": (lambda lines, made: gzip.compress("".join(lines).encode()), "a gzip file; a games.jsonl is plain text"),
    "a list": (lambda lines, made: b"[1, 2]\n", "line 1: a game record is a JSON object, not list"),
    "garbage in the middle": (lambda lines, made: "".join(lines[:2] + ["{oops\n"] + lines[2:]).encode(),
                              "line 3: not a JSON game record"),
    "index a string": (lambda lines, made: lines[0].replace('"index": 0', '"index": "0"').encode(),
                       "field 'index' is '0'"),
    "NaN return": (lambda lines, made: b"".join(
        [lines[0].encode().replace(b'"returns": [', b'"returns": [NaN, ')]), "field 'returns'"),
    "seats and returns disagree": (lambda lines, made: lines[0].replace('"seats": ["random", "random"]',
                                                                        '"seats": ["random"]').encode(),
                                   "one entry per seat"),
    "negative agent seed": (lambda lines, made: re.sub(r'"agent_seeds": \[\d+', '"agent_seeds": [-5', lines[0]).encode(),
                            "line 1: field 'agent_seeds' is '[-5, "),
    "latin-1": (lambda lines, made: lines[0].encode() + b'{"index": "\xfc"}\n', "line 2: not a JSON game record"),
    "deeply nested": (lambda lines, made: b"[" * 50_000 + b"]" * 50_000 + b"\n", "line 1: not a JSON game record"),
}


@pytest.mark.parametrize("case", sorted(RECORD_CASES))
def test_a_bad_games_jsonl_is_refused_by_replay_and_resume(case, made, tmp_path):
    make, needle = RECORD_CASES[case]
    out = tmp_path / "t"
    out.mkdir()
    (out / "tournament.json").write_bytes((made / "t" / "tournament.json").read_bytes())
    games = out / "games.jsonl"
    games.write_bytes(make(_lines(made), made))
    before = games.read_bytes()
    with pytest.raises(RecordsError, match="games.jsonl"):
        read_records(str(games))
    cli(["replay", games, "--game", "0"], 1, needle)
    cli(["tournament", "kuhn_poker", "--agents", "random,random", "--games", "6", "--seed", "1",
         "--out", out, "--resume", "--no-progress"], 1, "--resume", needle)
    assert games.read_bytes() == before  # nothing rewritten, nothing lost


def test_a_torn_last_line_is_dropped_and_the_rest_kept(made, tmp_path):
    lines = _lines(made)
    out = tmp_path / "t"
    out.mkdir()
    (out / "tournament.json").write_bytes((made / "t" / "tournament.json").read_bytes())
    (out / "games.jsonl").write_text("".join(lines[:4]) + lines[4][:25])
    assert [r["index"] for r in read_records(str(out / "games.jsonl"))] == [0, 1, 2, 3]
    r = CliRunner().invoke(main, ["tournament", "kuhn_poker", "--agents", "random,random", "--games", "6",
                                  "--seed", "1", "--out", str(out), "--resume", "--no-progress"])
    assert r.exit_code == 0, r.output
    assert (out / "games.jsonl").read_text() == "".join(lines)  # the same games as an unbroken run


def test_replay_names_a_torn_last_line(made, tmp_path):
    """A games.jsonl cut short in its last line (a tournament killed while
    writing it): the game asked for is not said to be missing, the line is named."""
    lines = _lines(made)
    games = tmp_path / "games.jsonl"
    games.write_text("".join(lines[:4]) + lines[4][:25])
    cli(["replay", games, "--game", "4"], 1, f"{games}, line 5: cut short (not JSON: ", "game 4 is not among "
        "the 4 games before it")
    assert "returns:" in CliRunner().invoke(main, ["replay", str(games), "--game", "3"]).output
    games.write_text("".join(lines[:4]))
    cli(["replay", games, "--game", "4"], 2, "--game", f"no game 4 in {games} (it holds 4 games, numbered 0..3)")


def test_a_bad_tournament_plan_is_refused_on_resume(made, tmp_path):
    out = tmp_path / "t"
    out.mkdir()
    (out / "games.jsonl").write_bytes((made / "t" / "games.jsonl").read_bytes())
    for text, needle in (("{not json", "not a tournament plan"), ('{"game": "kuhn_poker"}', "it needs 'game'"),
                         ("[]", "not a tournament plan")):
        (out / "tournament.json").write_text(text)
        cli(["tournament", "kuhn_poker", "--agents", "random,random", "--games", "6", "--seed", "1",
             "--out", out, "--resume", "--no-progress"], 1, "tournament.json", needle)
        assert (out / "games.jsonl").read_bytes() == (made / "t" / "games.jsonl").read_bytes()
        assert (out / "tournament.json").read_text() == text


def test_a_record_whose_returns_were_edited_is_refused_by_replay(made, tmp_path):
    record = json.loads(_lines(made)[0])
    games = tmp_path / "games.jsonl"
    for rerun in ([], ["--rerun"]):
        games.write_text(json.dumps({**record, "returns": [5.0, 5.0]}) + "\n")
        cli(["replay", games, "--game", "0", *rerun], 1,
            "game 0: the recorded returns [5.0, 5.0] are not the game's", "the record was edited")
    games.write_text(json.dumps(record) + "\n")
    r = CliRunner().invoke(main, ["replay", str(games), "--game", "0", "--rerun"])
    assert r.exit_code == 0 and "rerun: every move equals the record" in r.output


def test_replay_of_a_directory_or_an_empty_file(tmp_path):
    cli(["replay", tmp_path, "--game", "0"], 2, "is a directory")
    (tmp_path / "games.jsonl").write_text("")
    cli(["replay", tmp_path / "games.jsonl", "--game", "0"], 2, "no game 0")


# ------------------------------------------------------------ the size limit
def test_the_limit_is_one_limit_and_can_be_set(tmp_path, monkeypatch):
    assert loader.MAX_BYTES == _io.MAX_BYTES == 256 * MIB
    assert loader.MAX_BYTES_VARIABLE == _io.MAX_BYTES_VARIABLE == "KIBITZ_MAX_FILE_MB"
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (2 * MIB) + b"{}")
    monkeypatch.setenv("KIBITZ_MAX_FILE_MB", "1")
    with pytest.raises(AgentFileError, match="more than 1 MiB, the limit"):
        KibitzAgent.load(big)
    with pytest.raises(PolicyFileError, match="more than 1 MiB, the limit"):
        read_policy_file(big)
    cli(["inspect", big], 1, "more than 1 MiB")
    for bad in ("lots", "-3", "0", "inf", "nan"):
        monkeypatch.setenv("KIBITZ_MAX_FILE_MB", bad)
        with pytest.raises(AgentFileError, match="expected a positive number of MiB"):
            KibitzAgent.load(big)
        with pytest.raises(PolicyFileError, match="expected a positive number of MiB"):
            read_policy_file(big)


@pytest.fixture(scope="module")
def bomb(tmp_path_factory):
    """A gzip file of 320 MiB of zeros (about 1.5 MB on disk)."""
    path = tmp_path_factory.mktemp("bomb") / "bomb.json.gz"
    with gzip.GzipFile(path, "wb", compresslevel=1, mtime=0) as f:
        zeros = bytes(4 * MIB)
        for _ in range(80):
            f.write(zeros)
    assert path.stat().st_size < 2 * MIB
    return path


#: measures the peak memory growth (MiB) of one reader in a fresh process
MEASURE = """
import resource, sys
{setup}
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    {call}
except {error} as e:
    print(e)
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024)
"""


@pytest.mark.parametrize("reader", ["loader", "policy file", "mccfr checkpoint"])
def test_a_gzip_bomb_is_refused_within_the_limit(reader, bomb, made, tmp_path):
    """Without the bound the loader held the whole expansion (and more); now
    the growth stays within the 256 MiB limit plus the one chunk being read."""
    path = bomb
    if reader == "loader":
        setup = ("import importlib.util\n"
                 f"spec = importlib.util.spec_from_file_location('loader', {LOADER!r})\n"
                 "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)")
        call, error, flags = f"m.KibitzAgent.load({str(path)!r})", "m.AgentFileError", ["-I", "-S"]
    elif reader == "policy file":
        setup = "from kibitz.solvers import read_policy_file"
        call, error, flags = f"read_policy_file({str(path)!r})", "ValueError", []
    else:
        with np.load(made / "mc.json.ckpt.npz") as z:
            arrays = {k: z[k] for k in z.files}
        arrays["mccfr"] = np.frombuffer(bomb.read_bytes(), dtype=np.uint8)
        path = tmp_path / "mc.json.ckpt.npz"
        _npz(path, **arrays)
        setup = ("import numpy as np\nfrom kibitz.solvers import driver, mccfr\n"
                 "from kibitz.games import load_game\n"
                 "s = mccfr.MCCFR(load_game('kuhn_poker'), np.random.default_rng(0), mccfr.ALGORITHMS['mccfr-es'])\n"
                 "m = driver.read_checkpoint")
        meta = json.loads(bytes(arrays["meta"]).decode())
        meta.pop("seconds")
        call = f"driver.load_checkpoint({str(path)!r}, s, {meta!r})"
        error, flags = "driver.CheckpointError", []
    script = MEASURE.format(setup=setup, call=call, error=error)
    r = subprocess.run([sys.executable, *flags, "-c", script], capture_output=True, text=True, timeout=60,
                       env={k: v for k, v in os.environ.items() if k != "KIBITZ_MAX_FILE_MB"})
    assert r.returncode == 0, r.stderr
    message, growth = r.stdout.strip().splitlines()
    assert "more than 256 MiB decompressed, the limit" in message, message
    assert float(growth) < 256 + 16, growth


@pytest.mark.parametrize("damage", ["garbage", "truncated", "empty", "other_npz"])
def test_a_damaged_tree_cache_entry_is_rebuilt(tmp_path, monkeypatch, damage):
    import numpy as np
    import pyspiel

    from kibitz.solvers import tree as tree_mod

    monkeypatch.setenv("KIBITZ_CACHE", str(tmp_path))
    game = pyspiel.load_game("kuhn_poker")
    first = tree_mod.compile_tree(game)
    (path,) = tmp_path.glob("kuhn_poker*.npz")
    data = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"not a tree at all")
    elif damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "empty":
        path.write_bytes(b"")
    else:
        np.savez(path, meta=np.frombuffer(b"\xff\xfe", dtype=np.uint8))
    again = tree_mod.compile_tree(game)
    assert again.num_nodes == first.num_nodes and again.infoset_strings == first.infoset_strings
    assert tree_mod.load_tree(path).num_nodes == first.num_nodes  # written anew


# ------------------------------------------------------------ experiment specs
BAD_SPECS = [
    ('kind = "convergence"\ngames = ["kuhn_poker"]\niteratoins = 5\n', "unknown key 'iteratoins'"),
    ('kind = "convergence"\n', "needs the key 'games'"),
    ('kind = "convergence"\ngames = []\n', "games must be a non-empty list of game strings"),
    ('kind = "convergence"\ngames = "kuhn_poker"\n', "games must be a non-empty list"),
    ('kind = "convergence"\ngames = ["kuhn_poker"]\niterations = 0\n', "iterations must be an integer in 1..1,000,000,000"),
    ('kind = "convergence"\ngames = ["kuhn_poker"]\niterations = 2.5\n', "iterations must be an integer"),
    ('kind = "convergence"\ngames = ["kuhn_poker"]\nalgorithms = ["cfr", "magic"]\n',
     "cfr, cfr+, lcfr, dcfr"),
    ('kind = "convergence"\ngames = ["no_such_game"]\n', "unknown game 'no_such_game'"),
    ('kind = "convergence"\ngames = ["underdog(players=99)"]\n', "players=99 is out of range"),
    ('kind = "strength"\ngames = ["kuhn_poker"]\nagents = ["random"]\nworkers = -1\n',
     "workers must be an integer in 1..64"),
    ('kind = "strength"\ngames = ["kuhn_poker"]\nagents = ["random"]\nprogress = "yes"\n',
     "progress must be true or false"),
    ('kind = "ismcts_match"\nmatches = [{game = "pub"}]\n', "each with a name"),
    ('kind = "ismcts_match"\nmatches = [{name = "a", game = "pub", opponent = "random", sims = -5}]\n',
     "match 'a': sims must be 0..1,000,000,000"),
    ('kind = "ismcts_match"\nmatches = [{name = "a", game = "pub", opponent = "random", sims = "abc"}]\n',
     "match 'a': sims: invalid int value"),
    ('kind = "ismcts_match"\nmatches = [{name = "a", game = "pub", opponent = "random", games = -1}]\n',
     "match 'a': games must be an integer >= 1"),
    ('kind = "ismcts_match"\nmatches = [{name = "a", game = "pub", opponent = "wizard"}]\n',
     "match 'a': opponent: invalid choice"),
    ('kind = "ismcts_match"\nmatches = [{name = "a", game = "nogame", opponent = "random"}]\n',
     "match 'a': nogame: unknown game 'nogame'"),
    ('kind = "ismcts_match"\nuct_c = nan\nmatches = [{name = "a", game = "pub", opponent = "random"}]\n',
     "uct_c"),
    ('kind = "strength"\ngames = ["kuhn_poker"]\nagents = ["wizard"]\n', "agents: 'wizard' in kuhn_poker"),
    ('kind = "strength"\ngames = ["kuhn_poker"]\nagents = ["heuristic"]\n', "agents: 'heuristic' in kuhn_poker"),
    ('kind = "convergence"\ngames = ["kuhn_poker"]\niterations = 99999999999999999999\n',
     "iterations must be an integer in 1..1,000,000,000"),
    ('a = ' + '[' * 100_000 + '\n', "nested too deeply"),
    ('kind = "convergence"\ngames = [\n', "not valid TOML"),
    ('kind = convergence\n', "not valid TOML"),
    (b'kind = "\xff"\n', "not UTF-8"),
    ("", "no 'kind' key: not an experiment spec (kinds: convergence"),
]


@pytest.mark.parametrize("text,message", BAD_SPECS)
def test_a_bad_spec_file_gets_one_line_naming_the_problem(tmp_path, text, message):
    path = tmp_path / "spec.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    result = CliRunner().invoke(main, ["experiment", "run", str(tmp_path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 1, result.output
    assert message in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()  # refused before anything runs


@pytest.mark.parametrize("setting,message", [
    ("nokey=1", "unknown key 'nokey' for kind convergence"),
    ("iterations=-5", "iterations must be an integer in 1..1,000,000,000"),
    ("iterations=abc", "iterations = 'abc' is not allowed"),
    ("points=true", "points must be an integer in 1..1000"),
    ('games=["underdog(players=3))"]', "games:"),
])
def test_a_bad_setting_is_a_usage_error_naming_the_key(tmp_path, setting, message):
    result = CliRunner().invoke(main, ["experiment", "run", str(REPO / "experiments" / "convergence"),
                                       "--out", str(tmp_path / "out"), "--set", setting])
    assert result.exit_code == 2, result.output
    assert "--set" in result.output and message in result.output and "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_set_may_mend_a_bad_key_of_the_spec_file(tmp_path):
    (tmp_path / "spec.toml").write_text('kind = "strength"\ngames = ["kuhn_poker"]\nagents = ["nosuch", "random"]\n'
                                        'games_per_match = 2\nprogress = false\n')
    run = ["experiment", "run", str(tmp_path), "--out", str(tmp_path / "out")]
    result = CliRunner().invoke(main, run)
    assert result.exit_code == 1 and "spec.toml: agents: 'nosuch'" in result.output, result.output
    result = CliRunner().invoke(main, [*run, "--set", 'agents=["random", "random"]'])
    assert result.exit_code == 0, result.output
    assert "| random#1 |" in (tmp_path / "out" / "table.md").read_text()
    # another setting leaves the file's fault the one named
    result = CliRunner().invoke(main, [*run, "--set", "games_per_match=4"])
    assert result.exit_code == 1 and "spec.toml: agents: 'nosuch'" in result.output, result.output


def test_a_folder_without_a_spec_is_named(tmp_path):
    result = CliRunner().invoke(main, ["experiment", "run", str(tmp_path)])
    assert result.exit_code == 1 and f"no experiment spec at {tmp_path / 'spec.toml'}" in result.output
