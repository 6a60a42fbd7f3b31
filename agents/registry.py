"""Agent specs: one syntax for every command that takes an agent.

A spec is a name with optional keyword options in parentheses, e.g.
``random``, ``heuristic``, ``ismcts(sims=1000,uct_c=2)``,
``policy(path/to/file.json.gz)``. A bare value in the parentheses is the
agent's positional option (``policy`` takes its file that way). Values are
parsed as int, float, true/false, or left as strings.

Agent kinds register themselves with :func:`register_agent` in their
module; :data:`KIND_MODULES` names the module of each kind, so that a spec
imports only its own kind's module (``random`` loads neither onnx nor
onnxruntime) and nothing registers by the side effect of an unrelated
import. A new kind is a new module and a line in :data:`KIND_MODULES`.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import re
from typing import Callable

from kibitz import games  # noqa: F401  (registers the games)


@dataclasses.dataclass(frozen=True)
class AgentKind:
    name: str
    help: str
    #: option name -> (default, one-line help)
    options: dict
    #: factory(game, player_id, seed, **options) -> Agent
    factory: Callable
    #: name of the option a bare value in the parentheses sets
    positional: str | None = None
    #: preset name -> the options it sets (one line), for kinds with an option ``preset``
    presets: dict = dataclasses.field(default_factory=dict)
    #: game_of(**options) -> the game string the options tie the agent to (a
    #: file's game), read for :func:`check_spec`; None: any game may do
    game_of: Callable | None = None


AGENTS: dict[str, AgentKind] = {}

#: every agent kind -> the module of ``kibitz.agents`` that registers it
KIND_MODULES = {
    "random": "builtin",
    "heuristic": "builtin",
    "human": "builtin",
    "ismcts": "ismcts",
    "net": "net_agent",
    "trained": "net_agent",
    "policy": "policy_agent",
}


def register_agent(name: str, help: str, options: dict | None = None, positional: str | None = None,
                   presets: dict | None = None, game_of: Callable | None = None):
    """Decorator for an agent factory (a class or function). A kind that
    ships with kibitz is listed in :data:`KIND_MODULES`; one registered at
    run time (a plug-in, a test's) is known from its registration on."""
    def decorate(factory):
        AGENTS[name] = AgentKind(name, help, dict(options or {}), factory, positional, dict(presets or {}),
                                 game_of)
        return factory
    return decorate


def _kind(name: str) -> AgentKind | None:
    """The kind ``name``, its module imported on first use; None if unknown."""
    if name not in AGENTS and name in KIND_MODULES:
        importlib.import_module(f"{__package__}.{KIND_MODULES[name]}")
    return AGENTS.get(name)


def agent_kinds() -> dict[str, AgentKind]:
    """Every agent kind by name (imports each kind's module)."""
    for name in KIND_MODULES:
        _kind(name)
    return AGENTS


_SPEC = re.compile(r"^\s*([a-z_][a-z0-9_-]*)\s*(?:\((.*)\))?\s*$", re.I | re.S)


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
    """``"ismcts(sims=10)"`` -> ``("ismcts", {"sims": 10})``; a bare value -> ``{None: value}``.

    Raises ValueError for an unclosed or stray parenthesis, text after the
    closing one, an empty option and an option given twice."""
    _check_parentheses(spec)
    m = _SPEC.match(spec)
    if not m:
        raise ValueError(f"bad agent spec {spec!r}; expected NAME or NAME(key=value,...)")
    name, body = m.group(1).lower(), m.group(2)
    options = {}
    if body and body.strip():
        for part in _split(body):
            if not part:
                raise ValueError(f"empty option in agent spec {spec!r}; expected NAME(key=value,...)")
            if "=" not in part:
                if None in options:
                    raise ValueError(f"bad option {part!r} in agent spec {spec!r}; expected key=value")
                options[None] = part.strip()
                continue
            key, val = part.split("=", 1)
            key = key.strip()
            if key in options:
                raise ValueError(f"option {key!r} is given twice in agent spec {spec!r}")
            options[key] = _value(val)
    return name, options


def _check_parentheses(text: str) -> None:
    depth = 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if depth < 0:
            raise ValueError(f"{text!r}: ')' at position {i + 1} closes no '('")
    if depth > 0:
        raise ValueError(f"{text!r}: unclosed parenthesis (a '(' without its ')')")


#: the type an option's default has -> (a check of a parsed value, its name)
_OPTION_TYPES = {
    bool: (lambda v: isinstance(v, bool), "true or false"),
    int: (lambda v: isinstance(v, int) and not isinstance(v, bool), "an integer"),
    float: (lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v),
            "a finite number"),
}


def _check_option(agent: str, key: str, value, default) -> None:
    check = _OPTION_TYPES.get(type(default))
    if check and not check[0](value):
        raise ValueError(f"agent {agent!r}: option {key}={value!r} must be {check[1]} "
                         f"(default {default!r})")


def make_agent(spec: str, game, player_id: int, seed: int | None = None):
    """Builds the agent that ``spec`` names for seat ``player_id`` of ``game``."""
    kind, options = resolve_spec(spec)
    return kind.factory(game, player_id, seed, **options)


def check_automatic_agent(spec: str, game, option: str, doing: str) -> None:
    """A ``ConfigError`` naming ``option`` unless ``spec`` makes an automatic
    agent for ``game`` (a ``human`` cannot ``doing``, e.g. "play teacher
    games")."""
    from kibitz.solvers.solve import ConfigError

    try:
        if parse_spec(spec)[0] == "human":
            raise ValueError(f"a human cannot {doing}; allowed: an automatic agent (kibitz agents lists them)")
        make_agent(spec, game, 0, 0)
    except (ValueError, FileNotFoundError) as e:
        raise ConfigError(f"{spec!r}: {e}", option) from None


def resolve_spec(spec: str) -> tuple[AgentKind, dict]:
    """The kind a spec names and its options by name, each option checked
    against the kind's (name and type); ValueError naming the fault."""
    name, options = parse_spec(spec)
    kind = _kind(name)
    if kind is None:
        raise ValueError(f"unknown agent {name!r}; agents are: {', '.join(sorted(set(KIND_MODULES) | set(AGENTS)))}")
    if None in options:
        if kind.positional is None:
            raise ValueError(f"agent {name!r} takes only key=value options; got {options[None]!r}")
        if kind.positional in options:
            raise ValueError(f"agent {name!r}: {kind.positional} is given twice ({options[None]!r} first, then "
                             f"{kind.positional}={options[kind.positional]!r}); give it once")
        options[kind.positional] = options.pop(None)
    unknown = sorted(set(options) - set(kind.options))
    if unknown:
        allowed = ", ".join(sorted(kind.options)) or "none"
        raise ValueError(f"agent {name!r} has no option {unknown[0]!r}; its options: {allowed}"
                         if kind.options else f"agent {name!r} takes no options; got {', '.join(unknown)}")
    for key, value in options.items():
        _check_option(name, key, value, kind.options[key][0])
    return kind, options


def check_spec(spec: str) -> None:
    """Checks an agent spec before any game is known (``kibitz serve`` does at
    start): the kind and its options, then that the agent can be built for a
    game: the game its options tie it to (``policy(FILE)``: the file's), or
    else at least one kibitz game at its small configuration. Raises
    ValueError with the reason (a missing file, an option out of range, no
    network shipped for any game, ...)."""
    from kibitz.games import REGISTRY, load_game

    kind, options = resolve_spec(spec)
    if kind.name == "human":
        raise ValueError("the human agent is a person at the terminal (kibitz play only)")
    try:
        games = [kind.game_of(**options)] if kind.game_of else [REGISTRY[g].small for g in sorted(REGISTRY)]
    except OSError as e:
        raise ValueError(f"{spec}: {e.strerror or e}") from None
    first = None
    for game_string in games:
        try:
            make_agent(spec, load_game(game_string), 0, seed=0)
            return
        except (ValueError, OSError) as e:
            first = first or e
    where = games[0] if len(games) == 1 else "any kibitz game"
    raise ValueError(f"agent {spec!r} cannot play {where}: {first}")


def _split(text: str) -> list[str]:
    """``text`` split at the commas outside parentheses, each part stripped."""
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
    return out


def split_specs(text: str) -> list[str]:
    """Splits ``"a,ismcts(sims=5,uct_c=2),b"`` at the commas outside parentheses.

    Raises ValueError for unbalanced parentheses and an empty spec (naming
    its position)."""
    _check_parentheses(text)
    out = _split(text)
    for i, s in enumerate(out):
        if not s:
            raise ValueError(f"empty agent spec (number {i + 1} of {len(out)}) in {text!r}; "
                             f"agents are: {', '.join(sorted(agent_kinds()))}")
    return out
