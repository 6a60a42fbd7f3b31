"""Portable agent files: export from a solve result or checkpoint, inspect.

An agent file (format ``kibitz-agent``, version 1; docs/formats/agent-file.md
and its JSON Schema docs/formats/agent-file.schema.json) extends the kibitz
policy file of ``kibitz solve`` (solvers/policy_file.py): the same metadata
and the same ``policy`` table keyed by information-state string, plus the
creation time, where it came from, how the key is built, and ``unseen``, the
behaviour on information states that are not in the table. The stdlib-only
reader a frontend can copy is agents/formats/kibitz_agent_loader.py.

Format version 2 adds the network agent (``"agent": "network"``): a network
file of solvers/network.py (``kibitz train``) becomes an ONNX model
(agents/formats/onnx_model.py) inside the agent file, base64 with its SHA-256, and
the input (the information-state tensor, or another encoding the game
offers) and the output documented in the file itself (:func:`tensor_layout`).
Tabular files are still written as version 1, which every reader of version
1 keeps reading. The reference loader for network files is
agents/formats/kibitz_net_loader.py (onnxruntime).
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
import zipfile
import zlib
from pathlib import Path

import numpy as np

from kibitz.agents.formats.kibitz_agent_loader import (FORMAT, POLICY_FORMAT, UNSEEN_BEHAVIOURS, AgentFileError,
                                                       agent_kind, check_document, document_problems, model_bytes,
                                                       parse_json, read_bytes, read_document)

#: the version tabular files are written in (readers of version 1 read them)
TABULAR_FORMAT_VERSION = 1


def _game_short_name(game_string: str) -> str:
    return game_string.split("(", 1)[0].strip()


def _key_documentation(short: str) -> str:
    from kibitz import games

    if short in games.REGISTRY:
        return f"docs/rules/{short}.md#information-state-string"
    return f"OpenSpiel's {short} game: its InformationStateString"


def agent_document(policy_doc: dict, *, unseen: str | None = None, source: dict | None = None,
                   name: str | None = None, created: str | None = None) -> dict:
    """The agent-file document for a policy-file document.

    ``unseen`` (``uniform`` or ``error``) defaults to ``uniform``. A policy
    file whose ``fallback`` is an agent spec (MCCFR with ``--fallback
    heuristic``) keeps it as ``unseen.kibitz_fallback``: kibitz's
    ``policy(path)`` agent plays that agent there, a frontend without kibitz
    plays ``unseen.behaviour``.
    """
    if policy_doc.get("format") != POLICY_FORMAT:
        raise AgentFileError("expected a kibitz policy document (format 'kibitz-policy')")
    unseen = unseen or "uniform"
    if unseen not in UNSEEN_BEHAVIOURS:
        raise ValueError(f"unseen must be one of {', '.join(UNSEEN_BEHAVIOURS)}; got {unseen!r}")
    from kibitz.solvers.policy_file import kibitz_version

    short = _game_short_name(policy_doc["game"])
    doc = {k: v for k, v in policy_doc.items() if k != "policy"}
    doc.update({
        "format": FORMAT,
        "format_version": TABULAR_FORMAT_VERSION,
        "policy_format_version": policy_doc["format_version"],
        "kibitz_version": kibitz_version(),
        "name": name or f"{short}-{policy_doc.get('algorithm', 'policy')}",
        "created": created or _now(),
        "source": dict(source or {}),
        "information_state": {
            "key": "information_state_string",
            "description": "pyspiel State.information_state_string(player) of the acting player",
            "documentation": _key_documentation(short),
        },
        "unseen": {"behaviour": unseen},
    })
    fallback = policy_doc.get("fallback")
    if isinstance(fallback, str) and fallback not in ("uniform", "error"):
        doc["unseen"]["kibitz_fallback"] = fallback
    doc["policy"] = policy_doc["policy"]
    return doc


def policy_document_from_checkpoint(path) -> dict:
    """The policy document of a ``kibitz solve`` checkpoint (``OUT.ckpt.npz``):
    the average policy at the checkpoint, with its NashConv."""
    from kibitz.games import load_game
    from kibitz.solvers import evaluate as ev
    from kibitz.solvers import policy_file
    from kibitz.solvers.cfr import CFRConfig, CFRSolver
    from kibitz.solvers._io import FileReadError
    from kibitz.solvers.driver import CheckpointError, read_checkpoint
    from kibitz.solvers.tree import compile_tree

    meta, state = read_checkpoint(path)
    if meta.get("algorithm") == "mmd":
        raise CheckpointError(f"{path}: a checkpoint of kibitz train; export the network file it is "
                              f"beside ({str(path).removesuffix('.ckpt.npz')}), which train writes at the "
                              "end and on Ctrl-C")
    try:
        if meta["algorithm"].startswith("mccfr"):
            return _mccfr_document(meta, state)
        tree = compile_tree(load_game(meta["game"]))
        if int(tree.num_slots) != int(meta["slots"]):
            raise CheckpointError(f"{path}: the checkpoint has {meta['slots']} slots, the game's tree "
                                  f"{tree.num_slots}: made with another version of the game")
        solver = CFRSolver(tree, CFRConfig(**meta["settings"]))
        solver.load_state_dict(state)
    except CheckpointError:
        raise
    except FileReadError as e:  # MCCFR's compressed state, damaged or over the limit
        raise CheckpointError(f"{path}: {e}") from None
    except (KeyError, TypeError, ValueError) as e:
        raise CheckpointError(f"{path}: not the checkpoint of a kibitz solve "
                              f"({type(e).__name__}: {e})") from None
    avg = solver.average_policy()
    nc, _, on = ev.nash_conv(tree, avg, details=True)
    return policy_file.policy_document(
        tree, avg, algorithm=meta["algorithm"], settings=meta["settings"], iterations=solver.iteration,
        seconds=meta.get("seconds"), nash_conv=nc, expected_returns=on)


def _mccfr_document(meta: dict, arrays: dict) -> dict:
    from kibitz.games import load_game
    from kibitz.solvers import mccfr
    from kibitz.solvers import tree as tree_mod

    game = load_game(meta["game"])
    settings = meta["settings"]
    solver, _ = mccfr.make_solver(game, settings["seed"], meta["algorithm"], epsilon=settings["epsilon"],
                                  fallback=settings["fallback"], backend=settings.get("backend", "python"))
    solver.load_state_dict(arrays)
    try:
        tree = tree_mod.compile_tree(game, max_nodes=mccfr.EVAL_MAX_NODES)
    except tree_mod.TreeTooLarge:
        tree = None
    return mccfr.policy_document(solver, algorithm=meta["algorithm"], seconds=float(meta.get("seconds", 0.0)),
                                 tree=tree)


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def is_network_file(path) -> bool:
    """Whether ``path`` is a network file of solvers/network.py (by content:
    a .npz archive whose ``meta`` entry holds a NetworkSpec), not a checkpoint."""
    try:
        with zipfile.ZipFile(path) as z:
            if not {"meta.npy", "W0.npy"} <= set(z.namelist()):
                return False
        with np.load(path, allow_pickle=False) as arrays:
            meta = json.loads(arrays["meta"].tobytes().decode())
    except (OSError, zipfile.BadZipFile, zlib.error, ValueError, KeyError):
        return False
    return isinstance(meta, dict) and {"input_size", "num_actions", "hidden"} <= set(meta)


def tensor_layout(game, encoding: str = "information_state_tensor") -> list[dict]:
    """The pieces of ``game``'s ``encoding``, ``[{"name", "offset", "size",
    "shape"}]`` in order (``kibitz.games.encoding_layout``: for the
    information-state tensor, the views its observer exposes)."""
    from kibitz.games import encoding_layout

    return encoding_layout(game, encoding)


def _tensor_documentation(game, encoding: str = "information_state_tensor") -> str:
    import pyspiel

    from kibitz import games

    short = game.get_type().short_name
    if short not in games.REGISTRY:
        return f"OpenSpiel's {short} game: its InformationStateTensor"
    if encoding not in (games.INFORMATION_STATE_TENSOR, games.OBSERVATION_TENSOR):
        return (f"docs/rules/{short}.md#{encoding}-encoding (index by index); "
                f"docs/rules/{short}.md#moves-and-encoding (actions); docs/formats/agent-file.md#input")
    recall = encoding == games.INFORMATION_STATE_TENSOR
    observer = game.make_py_observer(pyspiel.IIGObservationType(perfect_recall=recall), None)
    table = "information-state" if recall else "observation"
    return (f"the {table} index table in the docstring of games/{short}.py {type(observer).__name__}; "
            f"docs/rules/{short}.md#moves-and-encoding (actions); docs/formats/agent-file.md#input")


def _input_description(encoding: str) -> str:
    if encoding == "information_state_tensor":
        return ("float32 [N, input_size]: pyspiel State.information_state_tensor(player) of the player to move "
                "(the game observer's perfect-recall layout)")
    if encoding == "observation_tensor":
        return ("float32 [N, input_size]: pyspiel State.observation_tensor(player) of the player to move "
                "(the game observer's layout of the current view)")
    return (f"float32 [N, input_size]: the game's {encoding} encoding of the player to move (in kibitz "
            f"kibitz.games.encoding_tensor(state, player, {encoding!r}); index by index in the documentation)")


def network_document(spec, params, *, name: str | None = None, source: dict | None = None,
                     created: str | None = None) -> dict:
    """The version-2 agent document of the network ``spec``, ``params``; its
    game must load and have the spec's input and output sizes
    (:class:`AgentFileError` otherwise)."""
    from kibitz.agents.formats import onnx_model
    from kibitz.games import load_game
    from kibitz.solvers.policy_file import kibitz_version

    try:
        game = load_game(spec.game)
    except ValueError as e:
        raise AgentFileError(f"the network's game {spec.game!r} does not load ({e})") from None
    check_sizes(game, spec.input_size, spec.num_actions, spec.encoding, spec.output, spec.factors)
    from kibitz.solvers.network import action_index

    data = onnx_model.model_bytes(spec, params, action_index(spec, game))
    short = game.get_type().short_name
    logits = "float32 [N, num_actions]: one logit per distinct action id"
    if spec.output == "factored":
        logits += (f", each the sum of its factors among {spec.factors} factor logits (the game's action "
                   f"factors: docs/rules/{short}.md#action-factors)")
    return {
        "format": FORMAT,
        "format_version": 2,
        "agent": "network",
        "kibitz_version": kibitz_version(),
        "name": name or f"{short}-network",
        "created": created or _now(),
        "source": dict(source or {}),
        "game": str(game),
        "num_players": game.num_players(),
        "network": {"input_size": spec.input_size, "num_actions": spec.num_actions,
                    "hidden": list(spec.hidden), "encoding": spec.encoding, "output": spec.output,
                    "factors": spec.factors},
        "input": {
            "tensor": spec.encoding,
            "name": onnx_model.INPUTS[0],
            "description": _input_description(spec.encoding),
            "documentation": _tensor_documentation(game, spec.encoding),
            "layout": tensor_layout(game, spec.encoding),
            "mask": {"name": onnx_model.INPUTS[1],
                     "description": "float32 [N, num_actions]: 1 at the legal action ids, 0 elsewhere"},
        },
        "output": {
            "logits": logits,
            "probs": "float32 [N, num_actions]: softmax(logits + (legal_mask - 1) * 1e9), 0 on illegal actions",
        },
        "model": {"format": "onnx", "opset": onnx_model.OPSET, "ir_version": onnx_model.IR_VERSION,
                  "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
                  "base64": base64.b64encode(data).decode("ascii")},
    }


def check_sizes(game, input_size: int, num_actions: int, encoding: str = "information_state_tensor",
                output: str = "dense", factors: int = 0) -> None:
    """:class:`AgentFileError` unless ``game`` offers ``encoding`` (and, for a
    factored ``output``, action factors) with these sizes."""
    from kibitz import games

    try:
        games.check_encoding(game, encoding)
    except ValueError as e:
        raise AgentFileError(f"the network reads the encoding {encoding!r}: {e}") from None
    want = (games.encoding_size(game, encoding), game.num_distinct_actions())
    if (input_size, num_actions) != want:
        tensors = "information-state tensors" if encoding == games.INFORMATION_STATE_TENSOR else \
            f"{encoding} tensors"
        raise AgentFileError(f"the network takes {input_size:,} inputs and gives {num_actions:,} actions; "
                             f"{game} has {tensors} of {want[0]:,} floats and {want[1]:,} distinct actions")
    if output == "factored":
        if "factored" not in games.output_kinds(game):
            raise AgentFileError(f"the network has a factored output; {game} offers no action factors")
        count = games.action_factors(game)[1]
        if factors != count:
            raise AgentFileError(f"the network has {factors:,} factor logits; {game} has {count:,}")


def sharpened(params, temperature: float) -> list:
    """The network whose logits are ``params``' divided by ``temperature``
    (its last layer's weights and bias divided; exact for dense and factored
    outputs, whose logits are sums of the last layer's): below 1 it plays
    closer to its most likely move, above 1 closer to uniform."""
    if not (temperature > 0 and np.isfinite(temperature)):
        raise ValueError(f"temperature={temperature!r}; allowed: a number > 0")
    out = [np.asarray(p, np.float32) for p in params]
    out[-2] = (out[-2] / np.float32(temperature)).astype(np.float32)
    out[-1] = (out[-1] / np.float32(temperature)).astype(np.float32)
    return out


def export_network(source, out, *, name: str | None = None, temperature: float = 1.0) -> dict:
    """Writes the version-2 agent file ``out`` for the network file ``source``;
    ``temperature``: see :func:`sharpened` (recorded in the file's ``source``)."""
    from kibitz.solvers import network
    from kibitz.solvers.policy_file import write_policy_file

    spec, params = network.load(source)
    origin = {"kind": "network", "file": Path(source).name}
    if temperature != 1.0:
        params = sharpened(params, temperature)
        origin["temperature"] = float(temperature)
    doc = network_document(spec, params, name=name, source=origin)
    write_policy_file(out, doc)
    return doc


def export_agent(source, out, *, unseen: str | None = None, name: str | None = None,
                 temperature: float = 1.0) -> dict:
    """Writes the agent file ``out`` from a policy file or a checkpoint.
    A source that is not one (:class:`solvers.policy_file.PolicyFileError`,
    :class:`solvers.driver.CheckpointError`) or whose policy is malformed or
    does not fit its game (:class:`AgentFileError`) writes nothing."""
    from kibitz.solvers.policy_file import read_policy_file, write_policy_file

    source = Path(source)
    if is_network_file(source):
        if unseen is not None:
            raise ValueError("--unseen is for tabular agents; a network plays every information state")
        return export_network(source, out, name=name, temperature=temperature)
    if temperature != 1.0:
        raise ValueError("--temperature is for network files (.npz from kibitz train or kibitz distill)")
    if source.name.endswith(".npz"):
        policy_doc = policy_document_from_checkpoint(source)
        kind = "checkpoint"
    else:
        policy_doc = read_policy_file(source)
        kind = "policy-file"
    check_document(policy_doc, source)
    check_game(policy_doc, source)
    doc = agent_document(policy_doc, unseen=unseen, name=name,
                         source={"kind": kind, "file": source.name})
    write_policy_file(out, doc)  # the same writer: atomic, gzip for .gz
    return doc


def read_agent_file(path) -> dict:
    """An agent file's (or policy file's) document, checked by the loader's
    one validation (:func:`kibitz_agent_loader.check_document`): every
    problem is an :class:`AgentFileError` naming the file and the field."""
    return read_document(path)


def check_game(doc: dict, path=None):
    """The game of a checked document; :class:`AgentFileError` if its ``game``
    does not load or has another number of players than ``num_players``
    (:func:`solvers.policy_file.game_of`)."""
    from kibitz.solvers.policy_file import PolicyFileError, game_of

    try:
        return game_of(doc, path)
    except PolicyFileError as e:
        raise AgentFileError(str(e)) from None


def check_against_game(doc: dict, games: int = 200, seed: int = 0) -> dict:
    """Plays ``games`` random games of the file's game (see :func:`check_game`)
    and checks every decision's information state against the file: the
    acting player and the legal actions must match. Returns counts and the
    first mismatches."""
    game = check_game(doc)
    rng = np.random.default_rng(seed)
    policy = doc["policy"]
    seen, found, mismatches, wrong = set(), set(), [], set()

    def check(state):
        player = state.current_player()
        key = state.information_state_string(player)
        legal = state.legal_actions()
        seen.add(key)
        entry = policy.get(key)
        if entry is not None:
            found.add(key)
            if entry["actions"] != list(legal) or entry["player"] != player:
                if len(mismatches) < 5 and key not in wrong:  # each information state once
                    wrong.add(key)
                    mismatches.append(f"{key!r}: file has player {entry['player']} actions "
                                      f"{entry['actions']}, the game player {player} actions {legal}")
        return legal[int(rng.integers(len(legal)))]

    play_games(game, games, rng, check)
    return {"game": str(game), "num_players": game.num_players(), "visited": len(seen),
            "found": len(found), "mismatches": mismatches}


def check_network_against_game(doc: dict, games: int = 5, seed: int = 0) -> dict:
    """Checks a network document against its game and plays ``games``
    random games through its model: the model passes ``onnx.checker``, the
    game's sizes are the file's, and at every decision the probabilities
    are finite, sum to 1 over the legal actions and are 0 elsewhere.
    Returns counts; :class:`AgentFileError` naming the first problem."""
    from kibitz.agents.formats import onnx_model
    from kibitz.agents.formats.kibitz_net_loader import KibitzNetAgent
    from kibitz.solvers.network import NetworkSpec

    from kibitz.games import encoding_tensor

    game = check_game(doc)
    net = doc["network"]
    output, factors = net.get("output", "dense"), net.get("factors", 0)
    check_sizes(game, net["input_size"], net["num_actions"], net["encoding"], output, factors)
    try:
        onnx_model.check_model_bytes(model_bytes(doc), NetworkSpec(
            doc["game"], net["input_size"], net["num_actions"], tuple(net["hidden"]), net["encoding"], output,
            factors))
    except ValueError as e:
        raise AgentFileError(str(e)) from None
    agent = KibitzNetAgent(doc)
    rng = np.random.default_rng(seed)

    def check(state):
        player, legal = state.current_player(), state.legal_actions()
        mask = np.zeros(net["num_actions"], np.float32)
        mask[legal] = 1.0
        probs = agent.run(encoding_tensor(state, player, net["encoding"]), mask)[1][0]
        illegal = float(probs.sum() - probs[legal].sum())
        if not np.isfinite(probs).all() or abs(float(probs[legal].sum()) - 1.0) > 1e-4 or illegal > 1e-6:
            raise AgentFileError(f"the model's probabilities at a decision of player {player} are not a "
                                 f"distribution over the legal actions (legal sum "
                                 f"{float(probs[legal].sum()):.6g}, illegal {illegal:.3g})")
        return legal[int(rng.choice(len(legal), p=probs[legal] / probs[legal].sum()))]

    decisions = play_games(game, games, rng, check)
    return {"game": str(game), "num_players": game.num_players(), "games": games, "decisions": decisions}


#: the random games :func:`inspect_file` plays by default, by the file's kind (a network's through its model)
INSPECT_GAMES = {"tabular": 200, "network": 5}


def inspect_file(path, games: int | None = None, seed: int = 0) -> dict:
    """What ``kibitz inspect`` reports on the agent or policy file ``path``:
    its ``document``, ``kind`` (:func:`kibitz_agent_loader.agent_kind`),
    the random ``games`` played (default :data:`INSPECT_GAMES`), ``check``
    (the report of :func:`check_network_against_game` or
    :func:`check_against_game`; None when the document has a problem or the
    check fails) and ``problems``, the document's and the check's: none
    when the file matches its game. A file that cannot be read or is not a
    JSON object raises :class:`AgentFileError`."""
    doc = parse_json(read_bytes(path), path)
    problems = document_problems(doc)
    if not isinstance(doc, dict):
        raise AgentFileError(f"{path}: {problems[0]}")
    kind = agent_kind(doc)
    network = kind == "network"
    games = INSPECT_GAMES["network" if network else "tabular"] if games is None else games
    report = None
    if not problems:
        try:
            report = (check_network_against_game if network else check_against_game)(doc, games=games, seed=seed)
        except AgentFileError as e:
            problems.append(str(e))
        if report is not None and not network:
            problems += report["mismatches"]
            if report["visited"] and report["found"] == 0:
                problems.append("none of the visited information states is in the file")
    return {"document": doc, "kind": kind, "games": games, "check": report, "problems": problems}


def play_games(game, games: int, rng: np.random.Generator, decide) -> int:
    """Plays ``games`` games, chance outcomes drawn with ``rng`` by their
    probabilities and every decision's action ``decide(state)``; returns the
    number of decisions."""
    decisions = 0
    for _ in range(games):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                p = np.array([q for _, q in outcomes])
                state.apply_action(outcomes[rng.choice(len(outcomes), p=p / p.sum())][0])
                continue
            state.apply_action(decide(state))
            decisions += 1
    return decisions


#: the games whose tensor layout docs/formats/agent-file.md lists (at their default sizes)
DOCUMENTED_GAMES = ("underdog", "pub", "over_under", "doubt_and_bet")


def layout_markdown() -> str:
    """The per-game table of the information-state tensor's pieces in
    docs/formats/agent-file.md (tests/test_net_agent.py compares the two)."""
    from kibitz.games import load_game

    lines = ["| game (default size) | inputs | actions | piece: offset, size (shape) |", "| --- | --- | --- | --- |"]
    for short in DOCUMENTED_GAMES:
        game = load_game(short)
        pieces = "; ".join(f"`{p['name']}`: {p['offset']}, {p['size']} ({'x'.join(map(str, p['shape']))})"
                           for p in tensor_layout(game))
        lines.append(f"| `{short}` | {game.information_state_tensor_size():,} | "
                     f"{game.num_distinct_actions():,} | {pieces} |")
    return "\n".join(lines)


def network_of_agent_file(path) -> tuple:
    """``(spec, params)`` of the network a network agent file plays: its
    ONNX model's weights ``W0, b0, W1, b1, ...`` read back exactly (a
    temperature given at export is in them: this is the policy as played;
    a factored model's zero "nothing" column is dropped). AgentFileError
    naming the file unless it is a network agent file for a kibitz network."""
    import onnx
    from onnx import numpy_helper

    from kibitz.agents.formats.kibitz_agent_loader import agent_kind, model_bytes, read_document
    from kibitz.solvers.network import NetworkSpec

    doc = read_document(path)
    if agent_kind(doc) != "network":
        raise AgentFileError(f"{path}: a tabular agent file, not a network agent file")
    try:
        net = doc["network"]
        spec = NetworkSpec(game=doc["game"], input_size=net["input_size"], num_actions=net["num_actions"],
                           hidden=tuple(net["hidden"]), encoding=net["encoding"],
                           output=net.get("output", "dense"), factors=net.get("factors", 0))
        weights = {t.name: numpy_helper.to_array(t).astype(np.float32)
                   for t in onnx.load_from_string(model_bytes(doc)).graph.initializer}
        layers = len(spec.sizes) - 1
        params = [weights[f"{kind}{k}"] for k in range(layers) for kind in ("W", "b")]
        if spec.output == "factored":  # build_model appended the "nothing" column
            params[-2], params[-1] = params[-2][:, :-1], params[-1][:-1]
        for k in range(layers):
            want = (spec.sizes[k], spec.sizes[k + 1])
            if params[2 * k].shape != want or params[2 * k + 1].shape != want[1:]:
                raise ValueError(f"layer {k} has shapes {params[2 * k].shape}, {params[2 * k + 1].shape}; "
                                 f"the file's network section says {want}")
    except Exception as e:  # noqa: BLE001 (protobuf's DecodeError among them): one line naming the file
        raise AgentFileError(f"{path}: not a kibitz network model ({type(e).__name__}: {e})") from None
    return spec, [np.ascontiguousarray(p) for p in params]
