"""Load and play a kibitz agent file with the Python standard library only.

Copy this one file into a frontend. A kibitz agent file (format
``kibitz-agent``, see docs/formats/agent-file.md in kibitz) maps each
information-state string of a game to the acting player's probabilities
over the legal action ids. The frontend builds the same string from what
its player sees (the format of every game's string is in that game's rules
page, docs/rules/GAME.md) and asks::

    agent = KibitzAgent.load("underdog-cfr.agent.json.gz")
    probs = agent.action_probabilities(info_state_string, legal_actions)
    action = agent.choose(info_state_string, legal_actions, random.Random(7))

Information states that are not in the file are handled as the file's
``unseen`` field says: ``"uniform"`` (equal probability over the legal
actions, which the caller must then pass) or ``"error"`` (raise
:class:`UnseenInformationState`).

Format version 2 adds network agents (``"agent": "network"``: an ONNX
model of a policy over the information-state tensor, the observation
tensor or another encoding the game offers, :data:`NETWORK_ENCODINGS`). This module checks a
network file completely (its fields, the base64 of the model and its
SHA-256) but cannot run it: :class:`KibitzAgent` refuses it and names the
network loader, kibitz_net_loader.py (onnxruntime), which reads the file
through this module.

This module reads format versions up to :data:`FORMAT_VERSION`; it also
reads kibitz policy files (format ``kibitz-policy``), for which unseen
information states are an error. Every problem with a file (unreadable,
truncated gzip, not JSON, a missing or wrong-typed field, probabilities that
are not finite numbers in [0, 1] summing to 1 within :data:`PROB_TOLERANCE`)
raises :class:`AgentFileError` naming the field or entry and what is
allowed. A file may hold at most :data:`MAX_BYTES` (256 MiB) once
decompressed, or the MiB the environment variable ``KIBITZ_MAX_FILE_MB``
says; reading stops as soon as that is passed, so a gzip bomb costs no more.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import hashlib
import json
import math
import os
import random
import zlib

FORMAT = "kibitz-agent"
FORMAT_VERSION = 2
#: the values of field ``agent`` (format version 2; version 1 files are tabular)
AGENT_KINDS = ("tabular", "network")
#: the inputs a network agent may read: pyspiel's information-state tensor and
#: observation tensor, and a game's compact encoding (docs/rules/doubt_and_bet.md,
#: docs/rules/over_under.md)
NETWORK_ENCODINGS = ("information_state_tensor", "observation_tensor", "compact")
#: a network's output kinds: a logit per action, or sums of the game's factor logits
NETWORK_OUTPUTS = ("dense", "factored")
MODEL_FORMAT = "onnx"
POLICY_FORMAT = "kibitz-policy"
UNSEEN_BEHAVIOURS = ("uniform", "error")
#: how far the probabilities of one information state may sum from 1
PROB_TOLERANCE = 1e-6
#: the most bytes a file may hold once decompressed (256 MiB) ...
MAX_BYTES = 256 * 2**20
#: ... unless this environment variable gives another number of MiB
MAX_BYTES_VARIABLE = "KIBITZ_MAX_FILE_MB"
_CHUNK = 2**20


class AgentFileError(ValueError):
    """The file is not a kibitz agent file this loader can read; the message
    names the file or field and what is allowed."""


class UnseenInformationState(KeyError):
    """An information state the file has no entry for (``unseen: error``)."""


def max_bytes() -> int:
    """The decompressed size limit: :data:`MAX_BYTES`, or the MiB that the
    environment variable :data:`MAX_BYTES_VARIABLE` gives."""
    text = os.environ.get(MAX_BYTES_VARIABLE)
    if text is None:
        return MAX_BYTES
    try:
        mib = float(text)
    except ValueError:
        mib = -1.0
    if not mib > 0 or math.isinf(mib):
        raise AgentFileError(f"{MAX_BYTES_VARIABLE}={text!r}: expected a positive number of MiB")
    return int(mib * 2**20)


def read_bytes(path, limit: int | None = None) -> bytes:
    """The bytes of ``path``, gunzipped when it starts with the gzip magic
    bytes; refused with :class:`AgentFileError` as soon as more than
    ``limit`` bytes (default :func:`max_bytes`) have been decompressed."""
    limit = max_bytes() if limit is None else limit
    chunks, size = [], 0
    try:
        with open(path, "rb") as f:
            packed = f.read(2) == b"\x1f\x8b"
            f.seek(0)
            stream = gzip.GzipFile(fileobj=f, mode="rb") if packed else f
            while chunk := stream.read(_CHUNK):
                size += len(chunk)
                if size > limit:
                    raise AgentFileError(
                        f"{path}: more than {limit / 2**20:g} MiB{' decompressed' if packed else ''}, "
                        f"the limit (the environment variable {MAX_BYTES_VARIABLE} sets another)")
                chunks.append(chunk)
    except FileNotFoundError:
        raise AgentFileError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise AgentFileError(f"{path}: a directory, not a file") from None
    except (EOFError, zlib.error, gzip.BadGzipFile) as e:
        raise AgentFileError(f"{path}: a truncated or damaged gzip file ({e})") from None
    except OSError as e:
        raise AgentFileError(f"{path}: cannot be read ({e.strerror or e})") from None
    return b"".join(chunks)


def parse_json(raw: bytes, path):
    """The JSON value of UTF-8 bytes; :class:`AgentFileError` otherwise."""
    if raw.startswith(b"PK\x03\x04"):  # a zip archive: NumPy's .npz
        raise AgentFileError(f"{path}: a NumPy .npz file (a network of kibitz train or distill, or a "
                             "checkpoint), not an agent file; kibitz export turns a network or a solve "
                             "checkpoint into one") from None
    try:
        return json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        why = f"{path}: not UTF-8 text ({e.reason} at byte {e.start})" + ("" if _is_gzip(path) else ", nor a gzip file")
        raise AgentFileError(_not_gzip(path) or why) from None
    except RecursionError:
        raise AgentFileError(f"{path}: JSON nested too deeply") from None
    except ValueError as e:  # JSONDecodeError, and integers of more than 4300 digits
        if not raw.strip():
            raise AgentFileError(f"{path}: empty file") from None
        raise AgentFileError(_not_gzip(path) or f"{path}: not JSON ({e})") from None


def _is_gzip(path) -> bool:
    """Whether the file ``path`` begins with gzip's magic bytes."""
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"\x1f\x8b"
    except OSError:
        return False


def _not_gzip(path) -> str | None:
    """For a file named ``*.gz`` that is not JSON and does not begin with
    gzip's magic bytes: the message that it is not gzip either (None
    otherwise: the caller says what is wrong)."""
    if not str(path).endswith(".gz") or _is_gzip(path):
        return None
    return (f"{path}: not a gzip file (its name ends in .gz, but it does not begin with gzip's bytes 1f 8b), "
            "nor JSON text")


def read_document(path, limit: int | None = None) -> dict:
    """The JSON document of an agent or policy file (gzip detected by content),
    checked with :func:`check_document`."""
    doc = parse_json(read_bytes(path, limit), path)
    check_document(doc, path)
    return doc


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_number(x) -> bool:
    return (isinstance(x, (int, float)) and not isinstance(x, bool)) and math.isfinite(x)


#: the top-level fields: name -> (required in an agent file, in a policy file, what is allowed)
_FIELDS = {
    "game": (True, True, "a game string"),
    "num_players": (True, True, "a whole number >= 1"),
    "policy": (True, True, "an object: information-state string -> entry"),
    "unseen": (True, False, 'an object {"behaviour": "uniform" or "error"}'),
    "kibitz_version": (True, False, "a string"),
    "created": (True, False, "a string (UTC time)"),
    "algorithm": (True, False, "a string"),
    "settings": (True, False, "an object"),
    "iterations": (True, False, "a whole number >= 0"),
    "information_state": (True, False, '{"key": "information_state_string", ...}'),
    "name": (False, False, "a string"),
    "seconds": (False, False, "a number >= 0 or null"),
    "nash_conv": (False, False, "a number or null"),
    "expected_returns": (False, False, "a list of numbers (one per player) or null"),
    "tree": (False, False, "an object or null"),
    "fallback": (False, False, "a string or null"),
}


def _field_ok(key: str, value) -> bool:
    if key in ("game", "kibitz_version", "created", "algorithm", "name"):
        return isinstance(value, str) and bool(value)
    if key == "num_players":
        return _is_int(value) and value >= 1
    if key == "iterations":
        return _is_int(value) and value >= 0
    if key in ("policy", "settings"):
        return isinstance(value, dict)
    if key == "unseen":
        return (isinstance(value, dict) and value.get("behaviour") in UNSEEN_BEHAVIOURS
                and isinstance(value.get("kibitz_fallback", ""), str))
    if key == "information_state":
        return isinstance(value, dict) and value.get("key") == "information_state_string"
    if key == "seconds":
        return value is None or (_is_number(value) and value >= 0)
    if key == "nash_conv":
        return value is None or _is_number(value)
    if key == "expected_returns":
        return value is None or (isinstance(value, list) and all(_is_number(v) for v in value))
    if key == "tree":
        return value is None or isinstance(value, dict)
    return value is None or isinstance(value, str)  # fallback


def entry_problem(key: str, entry, num_players=None) -> str | None:
    """What is wrong with one ``policy`` entry (None: nothing)."""
    where = f"policy entry {key!r}"
    if not isinstance(entry, dict):
        return f"{where}: must be an object with 'player', 'actions' and 'probs', not {type(entry).__name__}"
    player, actions, probs = entry.get("player"), entry.get("actions"), entry.get("probs")
    if not _is_int(player) or player < 0 or (_is_int(num_players) and player >= num_players):
        top = num_players - 1 if _is_int(num_players) else "num_players - 1"
        return f"{where}: 'player' is {_got(entry, 'player')}; it must be a player id 0..{top}"
    if not isinstance(actions, list) or not actions or not all(_is_int(a) and a >= 0 for a in actions):
        return (f"{where}: 'actions' is {_got(entry, 'actions')}; it must be a non-empty list of "
                "action ids (whole numbers >= 0)")
    if any(a >= b for a, b in zip(actions, actions[1:])):
        return f"{where}: 'actions' {_short(actions)} must be ascending and distinct"
    if not isinstance(probs, list) or not all(_is_number(p) and 0 <= p <= 1 for p in probs):
        return f"{where}: 'probs' is {_got(entry, 'probs')}; it must be a list of finite numbers in [0, 1]"
    if len(probs) != len(actions):
        return f"{where}: {len(probs)} probabilities for {len(actions)} actions; one per action"
    if abs(math.fsum(probs) - 1.0) > PROB_TOLERANCE:
        return f"{where}: 'probs' {_short(probs)} sum to {math.fsum(probs):.9g}; they must sum to 1 (within {PROB_TOLERANCE:g})"
    return None


def document_problems(doc, limit: int = 20) -> list[str]:
    """Every problem (up to ``limit`` of them) with the structure of an agent
    or policy file's document: format, version, the fields' types, and each
    ``policy`` entry. An empty list: the document is well formed."""
    if not isinstance(doc, dict):
        return [f"the document must be a JSON object, not {type(doc).__name__}"]
    fmt = doc.get("format")
    if fmt not in (FORMAT, POLICY_FORMAT):
        return [f"'format' is {fmt!r}; a kibitz agent file has {FORMAT!r} (a policy file {POLICY_FORMAT!r})"]
    version = doc.get("format_version")
    if not _is_int(version) or not 1 <= version <= FORMAT_VERSION:
        return [f"'format_version' is {version!r}; this loader reads 1..{FORMAT_VERSION}"]
    kind = agent_kind(doc)
    if kind not in AGENT_KINDS:
        return [f"'format_version' is 2, and its field 'agent' is {_short(doc.get('agent', 'missing'))}; "
                f"it must be one of {', '.join(map(repr, AGENT_KINDS))}"]
    if kind == "network":
        return network_problems(doc)
    problems = []
    num_players = doc.get("num_players")
    for key, (agent_needs, policy_needs, allowed) in _FIELDS.items():
        needed = agent_needs if fmt == FORMAT else policy_needs
        if key not in doc:
            if needed:
                problems.append(f"field {key!r} is missing; it must be {allowed}")
        elif not _field_ok(key, doc[key]):
            problems.append(f"field {key!r} is {_short(doc[key])}; it must be {allowed}")
    for key, entry in (doc.get("policy") if isinstance(doc.get("policy"), dict) else {}).items():
        if len(problems) > limit:
            break
        problem = entry_problem(key, entry, num_players)
        if problem:
            problems.append(problem)
    return problems if len(problems) <= limit else problems[:limit] + ["... (more problems not listed)"]


def agent_kind(doc: dict):
    """``"tabular"`` or ``"network"`` for a document of a known version (a
    version-1 file and a policy file are tabular; version 2 says it in
    ``agent``, None if it does not)."""
    if doc.get("format") == POLICY_FORMAT or doc.get("format_version") == 1:
        return "tabular"
    return doc.get("agent")


#: a network file's top-level fields: name -> (required, what is allowed)
_NETWORK_FIELDS = {
    "game": (True, "a game string"),
    "num_players": (True, "a whole number >= 1"),
    "kibitz_version": (True, "a string"),
    "created": (True, "a string (UTC time)"),
    "name": (False, "a string"),
    "network": (True, '{"input_size", "num_actions", "hidden", "encoding", "output", "factors"}'),
    "input": (True, '{"tensor": the network\'s encoding, ...}'),
    "output": (True, '{"logits": "one per distinct action", ...}'),
    "model": (True, '{"format": "onnx", "opset", "sha256", "bytes", "base64"}'),
}


def _positive(x) -> bool:
    return _is_int(x) and x >= 1


def network_problems(doc: dict) -> list[str]:
    """Every problem with the structure of a network agent's document
    (format version 2, ``"agent": "network"``), the model's base64 and its
    SHA-256 included."""
    problems = []
    for key, (needed, allowed) in _NETWORK_FIELDS.items():
        if key not in doc:
            if needed:
                problems.append(f"field {key!r} is missing; it must be {allowed}")
        elif not _network_field_ok(key, doc[key]):
            problems.append(f"field {key!r} is {_short(doc[key])}; it must be {allowed}")
    if problems:
        return problems
    net, model = doc["network"], doc["model"]
    for name in ("input_size", "num_actions"):
        if not _positive(net.get(name)):
            problems.append(f"field 'network.{name}' is {_got(net, name)}; it must be a whole number >= 1")
    hidden = net.get("hidden")
    if not isinstance(hidden, list) or not hidden or not all(_positive(h) for h in hidden):
        problems.append(f"field 'network.hidden' is {_got(net, 'hidden')}; it must be a non-empty list of "
                        "layer widths (whole numbers >= 1)")
    if net.get("encoding") not in NETWORK_ENCODINGS:
        problems.append(f"field 'network.encoding' is {_got(net, 'encoding')}; this loader reads "
                        f"{', '.join(map(repr, NETWORK_ENCODINGS))}")
    elif doc["input"].get("tensor") != net["encoding"]:
        problems.append(f"field 'input.tensor' is {_got(doc['input'], 'tensor')}; it must be the network's "
                        f"encoding {net['encoding']!r}")
    output = net.get("output", "dense")  # files from before the output kinds are dense
    if output not in NETWORK_OUTPUTS:
        problems.append(f"field 'network.output' is {_got(net, 'output')}; it must be one of "
                        f"{', '.join(map(repr, NETWORK_OUTPUTS))}")
    elif output == "factored" and not _positive(net.get("factors")):
        problems.append(f"field 'network.factors' is {_got(net, 'factors')}; a factored output has a whole "
                        "number >= 1 of factor logits")
    elif output == "dense" and net.get("factors", 0) != 0:
        problems.append(f"field 'network.factors' is {_got(net, 'factors')}; a dense output has 0")
    if model.get("format") != MODEL_FORMAT:
        problems.append(f"field 'model.format' is {_got(model, 'format')}; it must be {MODEL_FORMAT!r}")
    if not _positive(model.get("opset")):
        problems.append(f"field 'model.opset' is {_got(model, 'opset')}; it must be a whole number >= 1")
    digest, size, text = model.get("sha256"), model.get("bytes"), model.get("base64")
    if not (isinstance(digest, str) and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)):
        problems.append(f"field 'model.sha256' is {_got(model, 'sha256')}; it must be 64 lowercase hex digits")
    if not _positive(size):
        problems.append(f"field 'model.bytes' is {_got(model, 'bytes')}; it must be a whole number >= 1")
    if not isinstance(text, str):
        problems.append(f"field 'model.base64' is {_got(model, 'base64')}; it must be the model's bytes "
                        "in base64 (a string)")
    if problems:
        return problems
    try:
        data = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as e:
        return [f"field 'model.base64' is not valid base64 ({e})"]
    if len(data) != size:
        return [f"the model has {len(data):,} bytes, field 'model.bytes' says {size:,}: a truncated or "
                "edited file"]
    if hashlib.sha256(data).hexdigest() != digest:
        return ["the model's SHA-256 does not match field 'model.sha256': a damaged or edited file"]
    return []


def _network_field_ok(key: str, value) -> bool:
    if key in ("network", "model"):
        return isinstance(value, dict)
    if key == "input":
        return isinstance(value, dict) and value.get("tensor") in NETWORK_ENCODINGS
    if key == "output":
        return isinstance(value, dict)
    return _field_ok(key, value)


def model_bytes(doc: dict) -> bytes:
    """The ONNX model of a checked network document."""
    return base64.b64decode(doc["model"]["base64"], validate=True)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _got(entry: dict, name: str) -> str:
    return _short(entry[name]) if name in entry else "missing"


def check_document(doc, path=None) -> None:
    """Raises :class:`AgentFileError` naming the first problem of
    :func:`document_problems` (and the file, if ``path`` is given)."""
    problems = document_problems(doc, limit=1)
    if problems:
        more = " (and more)" if len(problems) > 1 else ""
        raise AgentFileError(f"{path}: {problems[0]}{more}" if path is not None else problems[0] + more)


class KibitzAgent:
    """A tabular agent from a kibitz agent file (checked by :func:`check_document`)."""

    def __init__(self, document: dict):
        check_document(document)
        if agent_kind(document) == "network":
            raise AgentFileError(
                f"a network agent file ({document['game']}): this loader plays tabular files only; "
                "load it with kibitz_net_loader.py (onnxruntime), or play it in kibitz as net(FILE)")
        self.document = document
        self.game = document["game"]
        self.unseen = document["unseen"]["behaviour"] if document["format"] == FORMAT else "error"
        self.policy = document["policy"]

    @classmethod
    def load(cls, path, limit: int | None = None) -> "KibitzAgent":
        """The agent in ``path``; ``limit``: see :func:`read_bytes`."""
        document = read_document(path, limit)
        try:
            return cls(document)
        except AgentFileError as e:
            raise AgentFileError(f"{path}: {e}") from None

    @property
    def metadata(self) -> dict:
        """Everything but the policy table."""
        return {k: v for k, v in self.document.items() if k != "policy"}

    def __contains__(self, info_state: str) -> bool:
        return info_state in self.policy

    def action_probabilities(self, info_state: str, legal_actions=None, player=None) -> dict:
        """``{action id: probability}`` for the player whose information
        state is ``info_state``. ``legal_actions`` is needed for unseen
        states with ``unseen: uniform``; when given for a known state, it
        must equal the file's actions for it, and ``player``, when given,
        the file's player (else :class:`AgentFileError`: a file for another
        game or game version)."""
        entry = self.policy.get(info_state)
        if entry is None:
            if self.unseen == "uniform" and legal_actions:
                legal = sorted(int(a) for a in legal_actions)
                return {a: 1.0 / len(legal) for a in legal}
            if self.unseen == "uniform":
                raise ValueError("unseen information state: pass legal_actions for the uniform policy")
            raise UnseenInformationState(info_state)
        actions, probs = entry["actions"], entry["probs"]
        if legal_actions is not None and sorted(int(a) for a in legal_actions) != actions:
            raise AgentFileError(f"policy entry {info_state!r} lists actions {actions}, the caller's "
                                 f"legal actions are {sorted(legal_actions)}: a file for another game "
                                 "or game version?")
        if player is not None and entry["player"] != player:
            raise AgentFileError(f"policy entry {info_state!r} is for player {entry['player']}, "
                                 f"the caller's player is {player}: a file for another game or game version?")
        return {int(a): float(p) for a, p in zip(actions, probs)}

    def choose(self, info_state: str, legal_actions=None, rng: random.Random | None = None) -> int:
        """An action drawn from :meth:`action_probabilities` with ``rng``."""
        probs = self.action_probabilities(info_state, legal_actions)
        actions = sorted(probs)
        weights = [probs[a] for a in actions]
        return (rng or random.Random()).choices(actions, weights=weights, k=1)[0]
