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

This module reads format versions up to :data:`FORMAT_VERSION`; it also
reads kibitz policy files (format ``kibitz-policy``), for which unseen
information states are an error.
"""

from __future__ import annotations

import gzip
import json
import random

FORMAT = "kibitz-agent"
FORMAT_VERSION = 1
POLICY_FORMAT = "kibitz-policy"
UNSEEN_BEHAVIOURS = ("uniform", "error")


class AgentFileError(ValueError):
    """The file is not a kibitz agent file this loader can read."""


class UnseenInformationState(KeyError):
    """An information state the file has no entry for (``unseen: error``)."""


def read_document(path) -> dict:
    """The JSON document of an agent or policy file (gzip detected by content)."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    try:
        doc = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise AgentFileError(f"{path}: not JSON ({e})") from None
    return doc


class KibitzAgent:
    """A tabular agent from a kibitz agent file."""

    def __init__(self, document: dict):
        if not isinstance(document, dict) or document.get("format") not in (FORMAT, POLICY_FORMAT):
            raise AgentFileError("not a kibitz agent file (format must be 'kibitz-agent')")
        version = document.get("format_version")
        if not isinstance(version, int) or version < 1 or version > FORMAT_VERSION:
            raise AgentFileError(f"format version {version!r}; this loader reads 1..{FORMAT_VERSION}")
        self.document = document
        self.game = document.get("game")
        if document["format"] == FORMAT:
            self.unseen = document.get("unseen", {}).get("behaviour", "error")
        else:
            self.unseen = "error"
        if self.unseen not in UNSEEN_BEHAVIOURS:
            raise AgentFileError(f"unknown unseen behaviour {self.unseen!r}")
        self.policy = document.get("policy")
        if not isinstance(self.policy, dict):
            raise AgentFileError("the file has no policy table")

    @classmethod
    def load(cls, path) -> "KibitzAgent":
        return cls(read_document(path))

    @property
    def metadata(self) -> dict:
        """Everything but the policy table."""
        return {k: v for k, v in self.document.items() if k != "policy"}

    def __contains__(self, info_state: str) -> bool:
        return info_state in self.policy

    def action_probabilities(self, info_state: str, legal_actions=None) -> dict:
        """``{action id: probability}`` for the player whose information
        state is ``info_state``. ``legal_actions`` is needed for unseen
        states with ``unseen: uniform``; when given for a known state, it
        must equal the file's actions for it."""
        entry = self.policy.get(info_state)
        if entry is None:
            if self.unseen == "uniform" and legal_actions:
                legal = sorted(int(a) for a in legal_actions)
                return {a: 1.0 / len(legal) for a in legal}
            if self.unseen == "uniform":
                raise ValueError("unseen information state: pass legal_actions for the uniform policy")
            raise UnseenInformationState(info_state)
        actions, probs = entry["actions"], entry["probs"]
        if legal_actions is not None and sorted(int(a) for a in legal_actions) != sorted(actions):
            raise ValueError(f"the file lists actions {actions} for this information state, "
                             f"the caller's legal actions are {sorted(legal_actions)}: "
                             "a file for another game or game version?")
        return {int(a): float(p) for a, p in zip(actions, probs)}

    def choose(self, info_state: str, legal_actions=None, rng: random.Random | None = None) -> int:
        """An action drawn from :meth:`action_probabilities` with ``rng``."""
        probs = self.action_probabilities(info_state, legal_actions)
        actions = sorted(probs)
        weights = [probs[a] for a in actions]
        return (rng or random.Random()).choices(actions, weights=weights, k=1)[0]
