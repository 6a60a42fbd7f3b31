"""Teacher games: the data that distillation (:mod:`solvers.distill`) fits.

A *teacher* (an agent spec, typically an IS-MCTS search) plays some seats
of a game and an *opponent* (e.g. ``heuristic``) the others; every decision
of a teacher seat that has more than one legal move is a labelled example:
the acting player's encoding (``kibitz.games.encoding_tensor``), the legal
moves, the move the teacher played, its search's visit shares when it has
them (:meth:`kibitz.solvers.ismcts.ISMCTS.policy_and_visits`; its policy
otherwise) and the player's final return.

Game ``i`` is a function of ``(seed, i)`` alone: its seats (the teacher holds
``k`` seats, ``k`` uniform in ``1..n-1``, or all of them without an
opponent), the agents' seeds and the chance outcomes come from its own
generator, so the data does not depend on the number of workers or on
where a run was interrupted. Games are written in shards of ``chunk``
games (``games-LO-HI.npz``, each written atomically) beside a
``data.json`` naming the settings; a later run with the same settings
keeps the shards it finds and plays only the missing games, so an
interrupted collection loses at most the shards in flight.

A game is thus fixed by ``(seed, i)`` and the teacher's recorded moves:
*replaying* another folder's shard (same game, teacher, opponent, seed and
chunk; any encoding) plays its games again with those moves instead of the
teacher's search (the opponents and chance draw as before) and writes them
in this folder's encoding, bit for bit what playing them would write, at
the cost of the game alone.
"""

from __future__ import annotations

import json
import multiprocessing
import re
import signal
import zipfile
import zlib
from pathlib import Path

import numpy as np

from kibitz.agents.ismcts import ISMCTSAgent

#: the settings that make a data folder (a folder made with others is refused)
META_KEYS = ("game", "teacher", "opponent", "encoding", "seed", "chunk", "behaviour")
SHARD = re.compile(r"games-(\d{6})-(\d{6})\.npz$")


class DataMismatch(ValueError):
    """A data folder made with other settings."""


class ReplayMismatch(DataMismatch):
    """A folder to replay made with other settings, or games that do not
    reach their recorded decisions."""


def game_start(n: int, seed: int, index: int, with_opponent: bool):
    """Game ``index``'s generator, the seats the teacher holds (:func:`seating`)
    and the ``n`` agents' seeds, drawn from it in that order."""
    rng = np.random.Generator(np.random.PCG64([seed, index]))
    held = seating(n, rng, with_opponent)
    return rng, held, [int(rng.integers(2 ** 63)) for _ in range(n)]


def seating(n: int, rng: np.random.Generator, with_opponent: bool) -> list[bool]:
    """Which seats the teacher holds (True) in a game, drawn with ``rng``."""
    if not with_opponent or n == 1:
        return [True] * n
    mine = set(rng.permutation(n)[:int(rng.integers(1, n))].tolist())
    return [p in mine for p in range(n)]


def _teacher_move(agent, state, rng) -> tuple[list[int], int, list[float], list[float]]:
    """``(legal, position of the move played, policy, visit shares)`` of the
    teacher's move, the move drawn from its policy with ``rng``."""
    from kibitz.games.chance import draw

    legal = state.legal_actions()
    if isinstance(agent, ISMCTSAgent):
        policy, visits = agent.policy_and_visits(state)
    else:
        policy = visits = agent.action_probabilities(state)
    probs = [float(policy.get(a, 0.0)) for a in legal]
    j = draw(enumerate(probs), rng.random() * sum(probs))
    # an agent without visits: its shares are its policy (listed once: thousands of claims)
    return legal, j, probs, probs[:] if visits is policy else [float(visits.get(a, 0.0)) for a in legal]


def play_game(game, make_agent, teacher: str, opponent: str, encoding: str, seed: int, index: int,
              recorded=None, behaviour: str | None = None) -> dict:
    """One teacher game (see the module docstring): its examples as lists.
    ``behaviour``: an agent spec that plays the teacher's seats while the
    teacher only labels their decisions (DAgger: the examples come from the
    states that agent reaches; the row's move is the teacher's, not the one
    played). Its agents' seeds come from a generator of their own, so a
    game without it is the game it always was, and a game with it is dealt
    the same seats and cards until the play departs from the teacher's.
    ``recorded``: the teacher's decisions of this game, in order
    (:func:`recorded_games`), played instead of searched (the draw that
    chose each move is still taken); ReplayMismatch if the game does not
    reach them, reaches one in another position (when the recording holds
    inputs) or ends with other returns."""
    from kibitz.games import encoding_tensor
    from kibitz.games.chance import draw

    n = game.num_players()
    rng, held, seeds = game_start(n, seed, index, bool(opponent))
    agents = [None if held[p] and recorded is not None else
              make_agent(teacher if held[p] else opponent, game, p, seeds[p]) for p in range(n)]
    actors = agents
    if behaviour:
        if recorded is not None:
            raise ReplayMismatch("games played by a --behaviour agent cannot be replayed: "
                                 "their recorded moves are the teacher's labels, not the moves played")
        own = np.random.Generator(np.random.PCG64([seed, index, 1]))
        extra = [int(own.integers(2 ** 63)) for _ in range(n)]
        actors = [make_agent(behaviour, game, p, extra[p]) if held[p] else agents[p] for p in range(n)]
    moves = None if recorded is None else iter(recorded)
    rows = []
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(draw(state.chance_outcomes(), rng.random()))
            continue
        p = state.current_player()
        if held[p] and len(state.legal_actions()) > 1:
            if moves is None:
                legal, j, policy, visits = _teacher_move(agents[p], state, rng)
            else:
                legal, j, policy, visits = _replayed_move(moves, state, index, len(rows))
                rng.random()  # the draw that chose the move
            x = encoding_tensor(state, p, encoding)
            if moves is not None:
                _check_replayed_input(recorded[len(rows)], x, index, len(rows))
            rows.append((p, x, legal, j, policy, visits))
            state.apply_action(legal[j] if actors is agents else actors[p].step(state))
        elif agents[p] is None:  # a replayed teacher seat's only move
            state.apply_action(state.legal_actions()[0])
        else:
            state.apply_action(agents[p].step(state))
    returns = state.returns()
    if moves is not None:
        if next(moves, None) is not None:
            raise ReplayMismatch(f"game {index} ended before its recorded decision {len(rows) + 1}: "
                                 "the data was made by other rules or agents")
        for k, (row, move) in enumerate(zip(rows, recorded)):
            if np.float32(returns[row[0]]) != np.float32(move[4]):
                raise ReplayMismatch(f"game {index} ended with return {returns[row[0]]:g} for the player of "
                                     f"recorded decision {k + 1}, not {move[4]:g}: the data was made by "
                                     "other rules or agents")
    return {"rows": rows, "returns": returns, "seats": held}


def _replayed_move(moves, state, index: int, k: int):
    """The next recorded decision, checked against ``state``'s legal moves."""
    legal = state.legal_actions()
    move = next(moves, None)
    if move is None or list(move[0]) != legal or not 0 <= move[1] < len(legal):
        raise ReplayMismatch(f"game {index} does not reach its recorded decision {k + 1} (legal moves "
                             f"{legal}): the data was made by other rules or agents")
    return legal, move[1], move[2], move[3]


def _check_replayed_input(move, x, index: int, k: int) -> None:
    """The recorded input of a decision (when the folders share the
    encoding) must be the replayed one."""
    if move[5] is not None and not np.array_equal(np.asarray(x, np.float32), move[5]):
        raise ReplayMismatch(f"game {index} reaches its recorded decision {k + 1} in another position: "
                             "the data was made by other rules or agents")


def recorded_games(path: Path, with_input: bool = False) -> dict[int, list]:
    """The teacher's decisions in a shard, per game index: ``(legal, j,
    policy, visits, return, input)`` in order (``input``, the recorded
    encoding, only ``with_input``; else None); ReplayMismatch if the file
    is not a shard."""
    try:
        with np.load(path, allow_pickle=False) as z:
            legal, offset, taken = z["legal"], z["offset"], z["taken"]
            policy, visits, game, ret = z["policy"], z["visits"], z["game"], z["ret"]
            x = z["x"] if with_input else None
        out: dict[int, list] = {}
        for r in range(len(taken)):
            a, b = offset[r], offset[r + 1]
            out.setdefault(int(game[r]), []).append(
                (legal[a:b].tolist(), int(taken[r]), policy[a:b].tolist(), visits[a:b].tolist(),
                 float(ret[r]), None if x is None else x[r]))
    except (OSError, ValueError, KeyError, IndexError, EOFError, zipfile.BadZipFile, zlib.error) as e:
        raise ReplayMismatch(f"{path}: not a kibitz teacher-data shard ({e})") from None
    return out


def shard_arrays(games: list[tuple[int, dict]], size: int) -> dict[str, np.ndarray]:
    """The arrays of a shard: ``x`` (rows, size) float32; the legal moves as
    ``legal`` (flat int32) with ``offset`` (rows + 1); ``taken`` (the
    position of the move played); ``policy`` and ``visits`` (flat, beside
    ``legal``); ``ret`` (the acting player's return) and ``game`` (its index)."""
    rows = [(i, g["returns"], r) for i, g in games for r in g["rows"]]
    offset = np.zeros(len(rows) + 1, np.int64)
    offset[1:] = np.cumsum([len(r[2][2]) for r in rows])
    return {"x": np.array([r[2][1] for r in rows], np.float32).reshape(len(rows), size),
            "legal": np.array([a for r in rows for a in r[2][2]], np.int32),
            "offset": offset,
            "taken": np.array([r[2][3] for r in rows], np.int32),
            "policy": np.array([v for r in rows for v in r[2][4]], np.float32),
            "visits": np.array([v for r in rows for v in r[2][5]], np.float32),
            "ret": np.array([r[1][r[2][0]] for r in rows], np.float32),
            "game": np.array([r[0] for r in rows], np.int32)}


def done_shards(folder: Path) -> list[tuple[int, int, Path]]:
    """``(lo, hi, path)`` of the shards in ``folder``, in order."""
    out = []
    for path in folder.glob("games-*.npz"):
        m = SHARD.search(path.name)
        if m:
            out.append((int(m.group(1)), int(m.group(2)), path))
    return sorted(out)


def check_folder(folder: Path, meta: dict, keys=META_KEYS) -> None:
    """Writes ``data.json`` (the ``keys`` of ``meta``) in a new folder;
    DataMismatch if the folder's differs."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "data.json"
    if path.exists():
        try:
            old = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            raise DataMismatch(f"{path}: not a kibitz data file ({e})") from None
        diff = [k for k in keys if old.get(k) != meta.get(k)]
        if diff:
            k = diff[0]
            raise DataMismatch(f"{folder} holds data made with {k}={old.get(k)!r}, not {meta.get(k)!r}; "
                               "use another --data folder or the same settings")
    elif done_shards(folder):
        # shards without the file that says how they were made: they cannot
        # be told apart from another run's, so they are not adopted
        raise DataMismatch(f"{folder} holds data shards but no data.json saying how they were made; "
                           "use another --data folder (or put back its data.json)")
    else:
        path.write_text(json.dumps({k: meta[k] for k in keys}, indent=1) + "\n")


def anchor_shards(folder: Path, game_string: str, encoding: str, games: int | None) -> list[Path]:
    """The shards of an anchor's data ``folder`` (another teacher's games of the
    same game and encoding) holding its games ``0..games-1`` (all: None), in
    order; DataMismatch naming what differs or is missing."""
    path = folder / "data.json"
    try:
        meta = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise DataMismatch(f"{path}: not a kibitz teacher-data folder ({e})") from None
    for key, want in (("game", game_string), ("encoding", encoding)):
        if meta.get(key) != want:
            raise DataMismatch(f"{folder} holds data of {key}={meta.get(key)!r}; this fit needs {want!r}")
    shards = [(lo, hi, p) for lo, hi, p in done_shards(folder) if games is None or lo < games]
    have = sum(hi - lo for lo, hi, _ in shards)
    if not shards or (games is not None and have < games):
        raise DataMismatch(f"{folder} holds {have} games; {games if games is not None else 'at least 1'} needed")
    return [p for _, _, p in shards]


def _worker_init():
    """As the tournament's workers: SIGINT ignored, SIGTERM the default."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _play_chunk(job):
    from kibitz.agents.registry import make_agent
    from kibitz.games import load_game

    game_string, teacher, opponent, encoding, seed, lo, hi, sources, same_encoding, behaviour = job
    game = load_game(game_string)
    recorded, covered = {}, set()
    for slo, shi, path in sources:  # the replayed folder's shards holding some of lo..hi-1
        recorded.update(recorded_games(path, with_input=same_encoding))
        covered.update(range(slo, shi))
    return lo, hi, [(i, play_game(game, make_agent, teacher, opponent, encoding, seed, i,
                                  recorded.get(i, []) if i in covered else None, behaviour))
                    for i in range(lo, hi)]


def replay_sources(folder: Path, meta: dict) -> tuple[list[tuple[int, int, Path]], bool]:
    """The shards of ``folder`` (a data folder of the same game, teacher,
    opponent, seed and chunk as ``meta``; any encoding), and whether its
    encoding is ``meta``'s; ReplayMismatch naming a setting that differs."""
    path = folder / "data.json"
    try:
        old = json.loads(path.read_text())
        if not isinstance(old, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as e:
        raise ReplayMismatch(f"{path}: not a kibitz teacher-data folder ({e})") from None
    for k in META_KEYS:
        if k != "encoding" and old.get(k) != meta.get(k):
            raise ReplayMismatch(f"{folder} holds games made with {k}={old.get(k)!r}, not {meta.get(k)!r}; "
                                 "a replay needs the same game, teacher, opponent, seed and chunk, "
                                 "and no behaviour agent")
    return done_shards(folder), old.get("encoding") == meta["encoding"]


def collect(game_string: str, teacher: str, opponent: str, encoding: str, seed: int, games: int,
            folder, chunk: int = 4, workers: int = 1, on_shard=None, should_stop=None,
            replay=None, behaviour: str | None = None) -> int:
    """Plays the teacher games ``0..games-1`` missing from ``folder`` with
    ``workers`` processes; ``on_shard(lo, hi, examples)`` after each shard
    is written, ``should_stop()`` (checked after each shard) ends it early.
    ``replay``: a data folder whose shards are replayed (see the module
    docstring) where it has them; the other games are played.
    ``behaviour``: the agent that plays the teacher's seats, the teacher
    only labelling (:func:`play_game`); not with ``replay``.
    Returns how many of the games ``0..games-1`` the folder holds."""
    from kibitz.games import encoding_size, load_game
    from kibitz.solvers._io import atomic_write

    folder = Path(folder)
    game = load_game(game_string)
    game_string = str(game)  # the normal form names the data
    meta = {"game": game_string, "teacher": teacher, "opponent": opponent, "encoding": encoding,
            "seed": seed, "chunk": chunk, "behaviour": behaviour or None}
    if behaviour and replay is not None:
        raise ReplayMismatch("--replay takes no --behaviour: a behaviour agent's games are not replayed "
                             "from the teacher's labels")
    sources, same_encoding = replay_sources(Path(replay), meta) if replay is not None else ([], False)
    check_folder(folder, meta)
    jobs = [(game_string, teacher, opponent, encoding, seed, lo, hi,
             [(slo, shi, p) for slo, shi, p in sources if slo < hi and lo < shi], same_encoding,
             behaviour or None)
            for lo, hi in missing_runs(folder, games, chunk)]
    size = encoding_size(game, encoding)

    def write(lo, hi, played):
        arrays = shard_arrays(played, size)
        atomic_write(folder / f"games-{lo:06d}-{hi:06d}.npz", lambda f: np.savez(f, **arrays))
        if on_shard is not None:
            on_shard(lo, hi, len(arrays["taken"]))

    run_jobs(_play_chunk, jobs, write, workers, should_stop)
    return games - sum(hi - lo for lo, hi in missing_runs(folder, games, games))


def run_jobs(play, jobs, write, workers: int = 1, should_stop=None) -> None:
    """``write(*play(job))`` for each job, in ``workers`` processes (in
    the order they finish); ``should_stop()``, asked after each write, ends
    it early and the jobs in flight are dropped. ``play`` must be a
    module-level function (it is sent to the workers by name)."""
    from kibitz.agents.matches.tournament import _start_method

    if workers <= 1 or len(jobs) <= 1:
        for job in jobs:
            write(*play(job))
            if should_stop is not None and should_stop():
                break
        return
    pool = multiprocessing.get_context(_start_method()).Pool(workers, initializer=_worker_init)
    finished = False
    try:
        for result in pool.imap_unordered(play, jobs):
            write(*result)
            if should_stop is not None and should_stop():
                break
        else:
            finished = True
    finally:
        if finished:
            pool.close()
        else:  # stopped early: the games in flight are not kept
            pool.terminate()
        pool.join()


def missing_runs(folder: Path, games: int, chunk: int) -> list[tuple[int, int]]:
    """The games ``0..games-1`` that no shard of ``folder`` holds, as runs
    ``(lo, hi)`` inside the ``chunk``-game blocks (a shard of an earlier
    run with fewer or more games is kept, and only the games it lacks are
    played: no game twice)."""
    held = np.zeros(games, dtype=bool)
    for lo, hi, _ in done_shards(folder):
        held[lo:min(hi, games)] = True
    runs = []
    for lo in range(0, games, chunk):
        block = np.flatnonzero(~held[lo:min(lo + chunk, games)]) + lo
        for run in np.split(block, np.flatnonzero(np.diff(block) > 1) + 1):
            if len(run):
                runs.append((int(run[0]), int(run[-1]) + 1))
    return runs


def shards_for(folder: Path, games: int) -> list[Path]:
    """The shards of ``folder`` holding some of the games ``0..games-1`` (a
    shard of an earlier run may hold later games too: the fit drops their rows)."""
    return [p for lo, hi, p in done_shards(folder) if lo < games]
