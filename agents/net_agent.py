"""The network agent kinds: ``net(FILE)`` and ``trained``.

``net(path/to/agent.json.gz)`` plays a network agent file (format version 2,
``"agent": "network"``, made by ``kibitz export`` from ``kibitz train``'s
network file) through onnxruntime, with the reference loader
agents/formats/kibitz_net_loader.py: it feeds the acting player's encoding (the
file's ``network.encoding``, through ``kibitz.games.encoding_tensor``: the
information-state tensor, or e.g. Doubt and Bet's ``compact``) and the
legal-action mask to the model and plays its probabilities. The file's game must be the game being played, and
its model must pass ``onnx.checker``; both are checked once per file.

``trained`` plays the network that ships with kibitz for the game being
played: ``agents/trained/GAME.json.gz`` (:data:`TRAINED_DIR`, package
data), for the game's short name; the game string must be the one the
shipped network was trained for (its default size).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from kibitz.agents.base import Agent
from kibitz.agents.formats.kibitz_agent_loader import AgentFileError, agent_kind
from kibitz.agents.registry import register_agent

#: where the shipped networks live: GAME.json.gz for each game's short name
TRAINED_DIR = Path(__file__).resolve().parent / "trained"
_CACHE: dict = {}
_LOCK = threading.Lock()


def load_network(path) -> "KibitzNetAgent":  # noqa: F821 (imported below, with onnxruntime)
    """The network agent file ``path``, read once per (path, modification
    time), checked by the loaders and by ``onnx.checker``;
    :class:`AgentFileError` naming the file and the problem otherwise."""
    from kibitz.agents.formats import onnx_model
    from kibitz.agents.formats.export import check_game, check_sizes
    from kibitz.agents.formats.kibitz_agent_loader import model_bytes, read_document
    from kibitz.agents.formats.kibitz_net_loader import KibitzNetAgent

    try:
        key = (os.path.abspath(path), os.stat(path).st_mtime_ns)
    except FileNotFoundError:
        from kibitz.agents.policy_agent import relative_hint
        raise AgentFileError(f"network agent file {str(path)!r} does not exist{relative_hint(path)}") from None
    with _LOCK:
        if key not in _CACHE:
            doc = read_document(path)
            if agent_kind(doc) != "network":
                raise AgentFileError(f"{path}: a tabular agent file; play it with policy({path})")
            try:
                game = check_game(doc)
                net = doc["network"]
                check_sizes(game, net["input_size"], net["num_actions"], net["encoding"],
                            net.get("output", "dense"), net.get("factors", 0))
                onnx_model.check_model_bytes(model_bytes(doc))
                _CACHE[key] = KibitzNetAgent(doc)
            except ValueError as e:  # AgentFileError among them
                raise AgentFileError(f"{path}: {e}") from None
        return _CACHE[key]


class NetAgent(Agent):
    """Plays a network agent file (see the module docstring)."""

    name = "net"
    reports_policy = True

    def __init__(self, game, player_id, seed=None, *, path: str):
        super().__init__(game, player_id, seed)
        if not path:
            raise ValueError("net needs a file: net(path/to/agent.json.gz) (kibitz export makes one)")
        self.network = load_network(path)
        if self.network.game != str(game):
            raise AgentFileError(f"{path} is a network for {self.network.game}, not for {game}")
        self.path = str(path)

    def action_probabilities(self, state):
        from kibitz.games import encoding_tensor

        return self.network.probabilities(encoding_tensor(state, self._player_id, self.network.encoding),
                                          state.legal_actions())


def trained_games() -> list[str]:
    """The games (short names) that have a shipped network in :data:`TRAINED_DIR`."""
    if not TRAINED_DIR.is_dir():
        return []
    return sorted(p.name[:-len(".json.gz")] for p in TRAINED_DIR.glob("*.json.gz"))


def trained_path(game) -> Path:
    """The shipped network file for ``game``; ValueError naming the games
    that have one and how to make one otherwise."""
    short = game.get_type().short_name
    path = TRAINED_DIR / f"{short}.json.gz"
    if not path.is_file():
        have = ", ".join(trained_games()) or "none yet"
        raise ValueError(f"no trained network ships for {short!r} (games with one: {have}); train one "
                         f"with `kibitz train {short} --out NET.npz`, then `kibitz export NET.npz "
                         f"--out AGENT.json.gz` and play it as net(AGENT.json.gz)")
    return path


def _file_game(path="") -> str:
    """The game string of the network file a ``net`` spec names (read and checked)."""
    if not path:
        raise ValueError("net needs a file: net(path/to/agent.json.gz) (kibitz export makes one)")
    return load_network(str(path)).game


@register_agent("net", "plays a network agent file through onnxruntime (kibitz train, then kibitz export)",
                options={"path": ("", "the network agent file (.json or .json.gz)")}, positional="path",
                game_of=_file_game)
def _net(game, player_id, seed, path=""):
    return NetAgent(game, player_id, seed, path=str(path))


@register_agent("trained", "the network that ships with kibitz for the game being played "
                           "(agents/trained/GAME.json.gz)")
def _trained(game, player_id, seed):
    path = trained_path(game)
    shipped = load_network(path).game
    if shipped != str(game):
        short = game.get_type().short_name
        raise ValueError(f"the trained network for {short!r} plays {shipped} (its default size), not {game}; "
                         f"train one for this size with `kibitz train {short}(...) --out NET.npz`, then "
                         f"`kibitz export NET.npz --out AGENT.json.gz` and play it as net(AGENT.json.gz)")
    return NetAgent(game, player_id, seed, path=str(path))
