"""The ``policy(path)`` agent kind: plays an agent file or a policy file.

``policy(path/to/agent.json.gz)`` looks up the acting player's
information-state string in the file and plays its probabilities. On an
information state the file does not hold, option ``unseen`` decides:
``file`` (default: what the file says: an agent file's ``unseen`` field,
its ``kibitz_fallback`` agent if it has one; for a policy file its MCCFR
``fallback`` agent, else ``error``), ``uniform`` (equal over the legal moves),
``error`` (raise), or ``heuristic`` / ``random`` (ask that agent). The file's
game must be the game being played (same game string after defaults).
The file is checked when the agent is made (the loader's one validation,
then its game and number of players) and each entry when it is played
(the acting player and the legal actions): a problem is an
``AgentFileError`` naming the file and the entry.
"""

from __future__ import annotations

import os
import threading

from kibitz.agents.base import Agent
from kibitz.agents.formats.kibitz_agent_loader import AgentFileError, KibitzAgent, UnseenInformationState
from kibitz.agents.registry import make_agent, register_agent

_CACHE: dict = {}
_LOCK = threading.Lock()


def relative_hint(path) -> str:
    """For a relative path that is not there: where it was looked for."""
    return "" if os.path.isabs(str(path)) else f" (a relative path is read from the current folder, {os.getcwd()})"


def load_cached(path: str, game) -> KibitzAgent:
    """The file's table, read once per (path, modification time) and checked
    by the loader's validation and against ``game`` (its game string and
    number of players); :class:`AgentFileError` naming the problem otherwise."""
    from kibitz.agents.formats.export import check_game, read_agent_file

    try:
        key = (os.path.abspath(path), os.stat(path).st_mtime_ns)
    except FileNotFoundError:
        raise AgentFileError(f"policy file {path!r} does not exist{relative_hint(path)}") from None
    with _LOCK:
        if key not in _CACHE:
            table = KibitzAgent(read_agent_file(path))
            _CACHE[key] = (table, str(check_game(table.document, path)))
    table, game_string = _CACHE[key]
    if game_string != str(game):
        raise AgentFileError(f"{path} is an agent for {table.game}, not for {game}")
    return table


class PolicyAgent(Agent):
    name = "policy"
    reports_policy = True

    def __init__(self, game, player_id, seed=None, *, path: str, unseen: str = "file"):
        super().__init__(game, player_id, seed)
        if not path:
            raise ValueError("policy needs a file: policy(path/to/agent.json.gz)")
        self.table = load_cached(path, game)
        self._path = path
        choices = ("file", "uniform", "error", "heuristic", "random")
        if unseen not in choices:
            raise ValueError(f"policy option unseen must be one of {', '.join(choices)}; got {unseen!r}")
        self.unseen = self.table.unseen if unseen == "file" else unseen
        if unseen == "file" and self.table.document.get("fallback") == "uniform":
            self.unseen = "uniform"  # an MCCFR policy file that says so
        self._fallback = None
        fallback_spec = fallback_agent_spec(self.table.document, unseen)
        if fallback_spec:
            self.unseen = fallback_spec
            self._fallback = make_agent(fallback_spec, game, player_id, seed=seed)
        self.unseen_count = 0

    def action_probabilities(self, state):
        key = state.information_state_string(self._player_id)
        legal = state.legal_actions()
        if key in self.table:
            try:
                return self.table.action_probabilities(key, legal, self._player_id)
            except AgentFileError as e:  # the entry does not fit the game being played
                raise AgentFileError(f"{self._path}: {e}") from None
        self.unseen_count += 1
        if self.unseen == "uniform":
            return {a: 1.0 / len(legal) for a in legal}
        if self._fallback is not None:
            return self._fallback.action_probabilities(state)
        raise UnseenInformationState(f"{key!r} is not in the policy file (unseen=error)")


def fallback_agent_spec(document: dict, unseen: str = "file") -> str | None:
    """The spec of the agent that plays the information states missing from
    a policy file's ``document`` under the ``unseen`` option, or None."""
    if unseen == "file":  # an MCCFR fallback agent recorded in the file
        recorded = document.get("fallback")
        return (document.get("unseen") or {}).get("kibitz_fallback") \
            or (recorded if recorded not in (None, "uniform", "error") else None)
    return unseen if unseen in ("heuristic", "random") else None


def _file_game(path="", unseen="file") -> str:
    """The game string of the file a ``policy`` spec names (read and checked)."""
    from kibitz.agents.formats.export import check_game, read_agent_file

    if not path:
        raise ValueError("policy needs a file: policy(path/to/agent.json.gz)")
    if not os.path.exists(str(path)):
        raise AgentFileError(f"policy file {str(path)!r} does not exist{relative_hint(path)}")
    return str(check_game(read_agent_file(str(path)), str(path)))


@register_agent(
    "policy", "plays a policy file or agent file (kibitz solve / kibitz export)",
    options={"path": ("", "the file (.json or .json.gz)"),
             "unseen": ("file", "unseen information states: file | uniform | error | heuristic | random")},
    positional="path", game_of=_file_game)
def _policy(game, player_id, seed, path="", unseen="file"):
    return PolicyAgent(game, player_id, seed, path=str(path), unseen=str(unseen))
