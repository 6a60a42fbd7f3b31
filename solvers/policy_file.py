"""kibitz policy files: a solved policy with what produced it.

A policy file is UTF-8 JSON, gzip-compressed when its name ends in ``.gz``.
The format is documented in ``docs/formats/policy-file.md``; version 1:

.. code-block:: json

    {
      "format": "kibitz-policy",
      "format_version": 1,
      "kibitz_version": "0.1.0",
      "game": "kuhn_poker()",
      "num_players": 2,
      "algorithm": "cfr+",
      "settings": {"regret_matching_plus": true, "alternating_updates": true,
                   "average_gamma": 1.0, "alpha": null, "beta": null},
      "iterations": 1000,
      "seconds": 0.05,
      "nash_conv": 0.0001,
      "expected_returns": [-0.0555, 0.0555],
      "tree": {"nodes": 58, "infostates": 12},
      "policy": {
        "0": {"player": 0, "actions": [0, 1], "probs": [0.79, 0.21]},
        "...": "one entry per information state"
      }
    }

``policy`` is keyed by the game's ``information_state_string``; each entry
lists the acting player, the legal actions (ascending) and the probability
of each. Readers must ignore keys they do not know; a change that old
readers would misread increases ``format_version``.

:func:`load_policy` returns an OpenSpiel ``TabularPolicy`` for the game
named in the file.
"""

from __future__ import annotations

import gzip
import importlib.metadata
import json
from pathlib import Path

import numpy as np
import pyspiel
from open_spiel.python import policy as os_policy

from kibitz.solvers._io import atomic_write

FORMAT = "kibitz-policy"
FORMAT_VERSION = 1


def kibitz_version() -> str:
    try:
        return importlib.metadata.version("kibitz")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def policy_document(tree, policy_slots, *, algorithm: str, settings: dict | None = None,
                    iterations: int = 0, seconds: float | None = None,
                    nash_conv: float | None = None, expected_returns=None,
                    extra: dict | None = None) -> dict:
    """The JSON document of a policy file for a slot-vector policy on ``tree``."""
    entries = {}
    for k, key in enumerate(tree.infoset_strings):
        lo, hi = int(tree.infoset_slots[k]), int(tree.infoset_slots[k + 1])
        entries[key] = {"player": int(tree.infoset_player[k]),
                        "actions": [int(a) for a in tree.slot_action[lo:hi]],
                        "probs": [float(p) for p in policy_slots[lo:hi]]}
    doc = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "kibitz_version": kibitz_version(),
        "game": tree.game_string,
        "num_players": int(tree.num_players),
        "algorithm": algorithm,
        "settings": dict(settings or {}),
        "iterations": int(iterations),
        "seconds": None if seconds is None else float(seconds),
        "nash_conv": None if nash_conv is None else float(nash_conv),
        "expected_returns": None if expected_returns is None else [float(v) for v in expected_returns],
        "tree": {"nodes": int(tree.num_nodes), "infostates": int(tree.num_infosets)},
    }
    doc.update(extra or {})
    doc["policy"] = entries
    return doc


def write_policy_file(path, document: dict) -> None:
    """Writes ``document`` atomically (temporary file, then rename); gzip if
    the name ends in ``.gz``."""
    path = Path(path)
    data = json.dumps(document, indent=None, separators=(",", ":")).encode("utf-8")
    if path.suffix == ".gz":
        data = gzip.compress(data, mtime=0)
    atomic_write(path, lambda f: f.write(data))


def read_policy_file(path) -> dict:
    """The document of a policy file, checked for its format and version."""
    path = Path(path)
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    doc = json.loads(raw.decode("utf-8"))
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"{path}: not a kibitz policy file")
    version = doc.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise ValueError(f"{path}: policy file format version {version!r}; this kibitz "
                         f"reads versions up to {FORMAT_VERSION}")
    return doc


def load_policy(path) -> os_policy.TabularPolicy:
    """An OpenSpiel ``TabularPolicy`` for the game stored in the policy file.

    Every information state of the game must be in the file, with the same
    legal actions; a mismatch (a file for another version of the game)
    raises ``ValueError``.
    """
    doc = read_policy_file(path)
    from kibitz import games  # noqa: F401  (registers kibitz games with pyspiel)

    game = pyspiel.load_game(doc["game"])
    tab = os_policy.TabularPolicy(game)
    entries = doc["policy"]
    missing = [k for k in tab.state_lookup if k not in entries]
    if missing:
        raise ValueError(f"{path}: {len(missing)} information states of {doc['game']} are "
                         f"missing from the file, e.g. {missing[0]!r}")
    for key, row in tab.state_lookup.items():
        entry = entries[key]
        actions = np.asarray(entry["actions"], dtype=np.int64)
        legal = np.flatnonzero(tab.legal_actions_mask[row])
        if not np.array_equal(np.sort(actions), legal):
            raise ValueError(f"{path}: information state {key!r} lists actions "
                             f"{actions.tolist()}, the game has {legal.tolist()}")
        tab.action_probability_array[row, :] = 0.0
        tab.action_probability_array[row, actions] = np.asarray(entry["probs"], dtype=np.float64)
    return tab
