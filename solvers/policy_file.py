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
from open_spiel.python import policy as os_policy

from kibitz.solvers._io import FileReadError, atomic_write, read_json

FORMAT = "kibitz-policy"
FORMAT_VERSION = 1
#: how far the probabilities of one information state may sum from 1
PROB_TOLERANCE = 1e-6


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


class PolicyFileError(FileReadError):
    """A file that is not a kibitz policy file this kibitz can read (the
    message names the file and what is wrong)."""


def read_policy_file(path) -> dict:
    """The document of a policy file, checked for its format, version and
    top-level fields (``game`` a string, ``num_players`` a whole number,
    ``policy`` an object); :class:`PolicyFileError` otherwise. At most
    :func:`solvers._io.max_bytes` are decompressed."""
    try:
        doc = read_json(path)
    except FileReadError as e:
        raise PolicyFileError(str(e)) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        got = doc.get("format") if isinstance(doc, dict) else type(doc).__name__
        raise PolicyFileError(f"{path}: not a kibitz policy file (format {got!r}, expected {FORMAT!r})")
    version = doc.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or not 1 <= version <= FORMAT_VERSION:
        raise PolicyFileError(f"{path}: policy file format version {version!r}; this kibitz "
                              f"reads versions 1..{FORMAT_VERSION}")
    for key, kind, allowed in (("game", str, "a game string"), ("num_players", int, "a whole number"),
                               ("policy", dict, "an object")):
        if not isinstance(doc.get(key), kind) or isinstance(doc.get(key), bool):
            raise PolicyFileError(f"{path}: field {key!r} is {doc.get(key, 'missing')!r:.60}; "
                                  f"it must be {allowed}")
    return doc


def _entry_arrays(path, key, entry, legal) -> tuple[np.ndarray, np.ndarray]:
    """The actions and probabilities of one entry, checked against the game's
    ``legal`` actions; :class:`PolicyFileError` naming the entry otherwise."""
    where = f"{path}: information state {key!r}"
    if not isinstance(entry, dict):
        raise PolicyFileError(f"{where}: the entry must be an object with 'actions' and 'probs'")
    try:
        actions = np.asarray(entry.get("actions"), dtype=np.int64)
        probs = np.asarray(entry.get("probs"), dtype=np.float64)
    except (TypeError, ValueError, OverflowError):
        raise PolicyFileError(f"{where}: 'actions' and 'probs' must be lists of numbers") from None
    if actions.ndim != 1 or not np.array_equal(np.sort(actions), legal):
        raise PolicyFileError(f"{where} lists actions {np.atleast_1d(actions).tolist()}, "
                              f"the game has {legal.tolist()}")
    if probs.shape != actions.shape:
        raise PolicyFileError(f"{where}: {probs.size} probabilities for {actions.size} actions; one per action")
    if not np.all(np.isfinite(probs)) or probs.min() < 0 or probs.max() > 1 \
            or abs(probs.sum() - 1.0) > PROB_TOLERANCE:
        raise PolicyFileError(f"{where}: probabilities {probs.tolist()} must be numbers in [0, 1] "
                              f"summing to 1 (within {PROB_TOLERANCE:g})")
    return actions, probs


def game_of(doc: dict, path=None):
    """The game of a policy (or agent) document: :class:`PolicyFileError` if
    its ``game`` does not load or has another number of players than
    ``num_players``."""
    from kibitz.games import load_game

    where = f"{path}: " if path is not None else ""
    try:
        game = load_game(doc["game"])
    except ValueError as e:
        raise PolicyFileError(f"{where}field 'game' does not load: {e}") from None
    if game.num_players() != doc["num_players"]:
        raise PolicyFileError(f"{where}field 'num_players' is {doc['num_players']}; "
                              f"{game} has {game.num_players()} players")
    return game


def load_policy(path) -> os_policy.TabularPolicy:
    """An OpenSpiel ``TabularPolicy`` for the game stored in the policy file.

    Every information state of the game must be in the file, with the same
    legal actions and probabilities in [0, 1] summing to 1; a mismatch (a
    file for another version of the game) raises :class:`PolicyFileError`,
    and so does an MCCFR file with ``coverage.complete`` false, before the
    game's table is built.
    """
    doc = read_policy_file(path)
    coverage = doc.get("coverage")
    if isinstance(coverage, dict) and coverage.get("complete") is False:
        # refused before the game's table is built: for a game too large to
        # compile that table alone would not fit in memory
        raise PolicyFileError(f"{path}: the file lists only the {coverage.get('visited', '?')} information "
                              f"states MCCFR visited (coverage.complete is false); the rest are played by its "
                              f"fallback {doc.get('fallback')!r}: play it with the policy agent "
                              "(policy(FILE)) or kibitz.solvers.mccfr.PolicyPlayer")
    game = game_of(doc, path)
    tab = os_policy.TabularPolicy(game)
    entries = doc["policy"]
    missing = [k for k in tab.state_lookup if k not in entries]
    if missing:
        raise PolicyFileError(f"{path}: {len(missing)} information states of {doc['game']} are "
                              f"missing from the file, e.g. {missing[0]!r}")
    for key, row in tab.state_lookup.items():
        actions, probs = _entry_arrays(path, key, entries[key], np.flatnonzero(tab.legal_actions_mask[row]))
        tab.action_probability_array[row, :] = 0.0
        tab.action_probability_array[row, actions] = probs
    return tab
