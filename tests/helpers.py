"""Helpers shared by the game tests, and an HTTP call for the server tests."""

import json
import os
import urllib.error
import urllib.request

import numpy as np
from open_spiel.python.algorithms import evaluate_bots

from kibitz.agents import make_agent


def heuristic_vs_random(game, num_games, seed=0):
    """Plays ``num_games`` games, one heuristic seat rotating among random ones.

    Returns (the heuristic's returns, the random seats' returns); game ``g``
    puts the heuristic in seat ``g mod n`` and seeds seat ``s`` with ``10 g + s``.
    """
    n = game.num_players()
    rng = np.random.default_rng(seed)
    heuristic, rand = [], []
    for g in range(num_games):
        seat = g % n
        bots = [make_agent("heuristic" if s == seat else "random", game, s, seed=g * 10 + s)
                for s in range(n)]
        r = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, rng)
        heuristic.append(r[seat])
        rand.extend(r[s] for s in range(n) if s != seat)
    return heuristic, rand


def random_play_decisions(game, rng, num_games):
    """Yields every decision state of ``num_games`` games of uniformly random
    play (chance drawn with its probabilities). The caller may read the state
    it is given but not change it; after each yield the walk plays on.
    Terminal states are yielded too, with ``is_terminal()`` true."""
    for _ in range(num_games):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                probs = np.array([p for _, p in outcomes])
                state.apply_action(outcomes[int(rng.choice(len(outcomes), p=probs / probs.sum()))][0])
                continue
            yield state
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.integers(len(legal)))])
        yield state


def call(url, path, body=None, raw=None, method=None, headers=None):
    """(status, JSON answer) of one request to ``url + path``: ``body`` sent as
    JSON (or ``raw`` bytes as they are), GET without either."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    sent = dict(headers or {})
    if body is not None:
        sent.setdefault("Content-Type", "application/json")
    req = urllib.request.Request(url + path, data=data, method=method or ("GET" if data is None else "POST"),
                                 headers=sent)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def data_shards(folder):
    """``{(lo, hi): {array name: array}}`` of the shards of a data folder
    (teacher games or rollout labels)."""
    from kibitz.agents.training.distill import done_shards

    out = {}
    for lo, hi, path in done_shards(folder):
        with np.load(path) as z:
            out[(lo, hi)] = {k: z[k] for k in z}
    return out


def live_processes_of_group(pgid: int) -> list[int]:
    """The processes of group ``pgid`` that are not zombies (Linux /proc):
    what a command started in a session of its own left running."""
    alive = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                alive.append(int(entry))
    return alive


def left_behind(proc, wait: float = 10.0) -> list[int]:
    """The processes of ``proc``'s session (started with
    ``start_new_session=True``) still alive ``wait`` seconds at most after
    it ended."""
    import time

    deadline = time.monotonic() + wait
    while live_processes_of_group(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    return live_processes_of_group(proc.pid)


def kill_session(proc) -> None:
    """Kills every process of ``proc``'s session (a test's clean-up) and reaps ``proc``."""
    import signal

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
