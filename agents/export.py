"""Portable agent files: export from a solve result or checkpoint, inspect.

An agent file (format ``kibitz-agent``, version 1; docs/formats/agent-file.md
and its JSON Schema docs/formats/agent-file.schema.json) extends the kibitz
policy file of ``kibitz solve`` (solvers/policy_file.py): the same metadata
and the same ``policy`` table keyed by information-state string, plus the
creation time, where it came from, how the key is built, and ``unseen``, the
behaviour on information states that are not in the table. The stdlib-only
reader a frontend can copy is agents/kibitz_agent_loader.py.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import numpy as np

from kibitz.agents.kibitz_agent_loader import (FORMAT, FORMAT_VERSION, POLICY_FORMAT, UNSEEN_BEHAVIOURS,
                                               AgentFileError, check_document, read_document)


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
        "format_version": FORMAT_VERSION,
        "policy_format_version": policy_doc["format_version"],
        "kibitz_version": kibitz_version(),
        "name": name or f"{short}-{policy_doc.get('algorithm', 'policy')}",
        "created": created or datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
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
    solver = mccfr.MCCFR(game, np.random.default_rng(settings["seed"]), mccfr.ALGORITHMS[meta["algorithm"]],
                         epsilon=settings["epsilon"], fallback=settings["fallback"])
    solver.load_state_dict(arrays)
    try:
        tree = tree_mod.compile_tree(game, max_nodes=mccfr.EVAL_MAX_NODES)
    except tree_mod.TreeTooLarge:
        tree = None
    return mccfr.policy_document(solver, algorithm=meta["algorithm"], seconds=float(meta.get("seconds", 0.0)),
                                 tree=tree)


def export_agent(source, out, *, unseen: str | None = None, name: str | None = None) -> dict:
    """Writes the agent file ``out`` from a policy file or a checkpoint.
    A source that is not one (:class:`solvers.policy_file.PolicyFileError`,
    :class:`solvers.driver.CheckpointError`) or whose policy is malformed or
    does not fit its game (:class:`AgentFileError`) writes nothing."""
    from kibitz.solvers.policy_file import read_policy_file, write_policy_file

    source = Path(source)
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
    seen, found, mismatches = set(), set(), []
    for _ in range(games):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                p = np.array([q for _, q in outcomes])
                state.apply_action(outcomes[rng.choice(len(outcomes), p=p / p.sum())][0])
                continue
            player = state.current_player()
            key = state.information_state_string(player)
            legal = state.legal_actions()
            seen.add(key)
            entry = policy.get(key)
            if entry is not None:
                found.add(key)
                if entry["actions"] != list(legal) or entry["player"] != player:
                    if len(mismatches) < 5:
                        mismatches.append(f"{key!r}: file has player {entry['player']} actions "
                                          f"{entry['actions']}, the game player {player} actions {legal}")
            state.apply_action(legal[int(rng.integers(len(legal)))])
    return {"game": str(game), "num_players": game.num_players(), "visited": len(seen),
            "found": len(found), "mismatches": mismatches}
