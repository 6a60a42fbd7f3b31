"""Agent specs: one syntax for every command that takes an agent.

A spec is a name with optional keyword options in parentheses, e.g.
``random``, ``heuristic``, ``ismcts(sims=1000,uct_c=2)``. Values are parsed
as int, float, true/false, or left as strings.
"""

from __future__ import annotations

import re

import games  # noqa: F401  (registers the games)
from agents.base import RandomAgent
from agents.heuristics import HEURISTICS

#: name -> one-line help (with its options); ``kibitz agents`` prints it.
AGENT_HELP = {
    "random": "uniformly random legal moves",
    "heuristic": "the game's rule-based player (games: {})".format(", ".join(sorted(HEURISTICS))),
    "human": "a person at the terminal (kibitz play only)",
}

_SPEC = re.compile(r"^\s*([a-z_][a-z0-9_-]*)\s*(?:\((.*)\))?\s*$", re.I)


def _value(text: str):
    t = text.strip()
    if t.lower() in ("true", "false"):
        return t.lower() == "true"
    for kind in (int, float):
        try:
            return kind(t)
        except ValueError:
            pass
    return t


def parse_spec(spec: str) -> tuple[str, dict]:
    """``"ismcts(sims=10)"`` -> ``("ismcts", {"sims": 10})``."""
    m = _SPEC.match(spec)
    if not m:
        raise ValueError(f"bad agent spec {spec!r}; expected NAME or NAME(key=value,...)")
    name, body = m.group(1).lower(), m.group(2)
    options = {}
    if body and body.strip():
        for part in body.split(","):
            if "=" not in part:
                raise ValueError(f"bad option {part.strip()!r} in agent spec {spec!r}; expected key=value")
            key, val = part.split("=", 1)
            options[key.strip()] = _value(val)
    return name, options


def make_agent(spec: str, game, player_id: int, seed: int | None = None):
    """Builds the agent that ``spec`` names for seat ``player_id`` of ``game``."""
    name, options = parse_spec(spec)
    if name == "random":
        _no_options(name, options)
        return RandomAgent(game, player_id, seed)
    if name == "heuristic":
        _no_options(name, options)
        short = game.get_type().short_name
        if short not in HEURISTICS:
            raise ValueError(f"no heuristic agent for game {short!r}; "
                             f"heuristics exist for: {', '.join(sorted(HEURISTICS))}")
        return HEURISTICS[short](game, player_id, seed)
    if name == "human":
        raise ValueError("the human agent is only available in `kibitz play`")
    raise ValueError(f"unknown agent {name!r}; agents are: {', '.join(sorted(AGENT_HELP))}")


def _no_options(name, options):
    if options:
        raise ValueError(f"agent {name!r} takes no options; got {', '.join(options)}")


def split_specs(text: str) -> list[str]:
    """Splits ``"a,ismcts(sims=5,uct_c=2),b"`` at the commas outside parentheses."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        depth += ch == "("
        depth -= ch == ")"
        cur.append(ch)
    out.append("".join(cur).strip())
    if any(not s for s in out):
        raise ValueError(f"empty agent spec in {text!r}")
    return out
