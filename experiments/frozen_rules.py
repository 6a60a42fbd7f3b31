"""The games as they are against the games as they were at a fixed commit.

    python -m kibitz.experiments.frozen_rules [--games 10000] [--small-games 1000] [--seed 47] [--only pub]

Issue 47 rewrites each game's rules; this is its proof that the games stay
the same. The games of :data:`COMMIT` are read from git (``git archive``,
only ``games/``) into a cache folder, ``$KIBITZ_CACHE/frozen/COMMIT`` or
``~/.cache/kibitz/frozen/COMMIT``, once. Both implementations then run the
same code, this file's, each in a process of its own (two copies of the
games in one process would register the same pyspiel names): a process
builds the package ``kibitz.games`` from one ``games/`` folder only, and
refuses to go on if any ``kibitz.*`` module comes from elsewhere. The
frozen process keeps numba's cache under the cache folder. The two
processes run at once (two cores).

What is compared, per game string: the game's attributes (its full string
with every parameter, its GameType, number of players and distinct actions,
chance outcomes, game length, utilities, tensor shapes, the encodings of
``kibitz.games.encodings`` and their sizes); and at every node of seeded
random games (:func:`walk_random`: chance by its probabilities, decisions
uniform, all drawn from ``numpy.random.default_rng([seed, index])``) and of
the small configuration's whole tree walked depth first
(:func:`walk_tree`), the fields of :func:`node_fields`: the current player;
the legal actions or the chance outcomes with their probabilities (exact
float reprs) and every action's string; for every player the
information-state and observation strings and tensors and every further
encoding of the game (e.g. ``compact``); ``str(state)``; at the end the
returns. A game's digest is a blake2b over all its nodes' fields; equal
digests are equal games. On a difference the first differing game is
played again in both processes with a digest per node, and the first
differing node is shown field by field: the message names the game, seed,
game index, step, history and field, with both values.

``tests/test_frozen_rules.py`` runs a few games of each configuration and
each small tree; this command runs the full count (docs/frozen-rules.md,
docs/results/frozen_rules.md).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import types
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

#: the commit whose games every later one must play identically (issue 47):
#: the games before the rules were written once
COMMIT = "25034f6a5812215f508d2fd01d96531632b28c2d"
#: the games compared, each at its default size and at its small configuration
GAMES = ("underdog", "pub", "over_under", "doubt_and_bet")
#: each game's small configuration at COMMIT (``REGISTRY[name].small`` there)
SMALL = {
    "underdog": "underdog(players=3,cards=5,bank=2)",
    "pub": "pub(players=3,suits=2,ranks=3,removed=0,hand=1)",
    "over_under": "over_under(players=2,copies=1,stacks=1,rounds=1)",
    "doubt_and_bet": "doubt_and_bet(players=2,chips=2,slots=1,colours=1,copies=2,single_bet=true)",
}
SEED = 47


class FrozenRulesError(RuntimeError):
    """What stops the comparison (no git, no commit, a process that failed
    or raised), in one line."""


# ------------------------------------------------------------ what is compared
# Everything below down to the processes runs in both processes: it may use
# kibitz.games only through pyspiel and the functions kibitz.games exports.


def _guard(call):
    """``call()``, or the exception it raised as a value: a method that
    raises in one implementation and not in the other is a difference."""
    try:
        return call()
    except Exception as e:  # noqa: BLE001 - compared, not handled
        return f"!{type(e).__name__}: {e}"


def _tensor(call):
    value = _guard(call)
    return value if isinstance(value, str) else np.ascontiguousarray(value, dtype=np.float64)


class View:
    """What one game offers to compare: its players, which of the pyspiel
    strings and tensors it provides, and its further encodings.

    The information-state tensor is read at every node as OpenSpiel's C++
    reads it: pyspiel's ``Observation`` on the game's observer for the
    information-state observation type (perfect recall), the same
    ``WriteTensor`` that ``State.information_state_tensor`` calls, written
    into a buffer rather than a Python list (Doubt and Bet's has 39,904
    floats; the list made the comparison four times slower). At the end of
    a game the Python API's ``State.information_state_tensor`` is compared
    too (``information_state_tensor[p] (State)``): a State that answered it
    otherwise than its observer would show there."""

    def __init__(self, game):
        import pyspiel

        import kibitz.games as kg

        kind = game.get_type()
        self.players = range(game.num_players())
        self.per_player = [(name, tensor) for name, tensor, provided in (
            ("information_state_string", False, kind.provides_information_state_string),
            ("observation_string", False, kind.provides_observation_string),
            ("observation_tensor", True, kind.provides_observation_tensor),
        ) if provided]
        self.info_state = None
        if kind.provides_information_state_tensor:
            self.info_state = pyspiel._Observation(game, game.make_observer(
                pyspiel.IIGObservationType(perfect_recall=True), {}))
            self.info_state_tensor = np.frombuffer(self.info_state, np.float32)
        self.encodings = [e for e in kg.encodings(game) if e not in (kg.INFORMATION_STATE_TENSOR, kg.OBSERVATION_TENSOR)]
        self.encoding_tensor = kg.encoding_tensor

    def information_state_tensor(self, state, player: int) -> np.ndarray:
        self.info_state.set_from(state, player)
        return self.info_state_tensor.astype(np.float64)


def game_fields(game) -> list[tuple[str, str]]:
    """The game's attributes, as (name, text)."""
    import kibitz.games as kg

    kind = game.get_type()
    out = [("game", str(game))]
    for name in ("short_name", "long_name", "dynamics", "chance_mode", "information", "utility", "reward_model",
                 "min_num_players", "max_num_players", "provides_information_state_string",
                 "provides_information_state_tensor", "provides_observation_string", "provides_observation_tensor"):
        out.append((f"type.{name}", repr(getattr(kind, name))))
    out.append(("type.parameter_specification", repr(sorted(kind.parameter_specification.items()))))
    for name in ("num_players", "num_distinct_actions", "max_chance_outcomes", "max_game_length", "min_utility",
                 "max_utility", "utility_sum", "information_state_tensor_shape", "observation_tensor_shape"):
        out.append((name, repr(_guard(getattr(game, name)))))
    out.append(("encodings", repr([(e, _guard(lambda e=e: kg.encoding_size(game, e))) for e in kg.encodings(game)])))
    return out


def node_fields(state, view: View) -> list[tuple[str, object]]:
    """What is compared at one node, as (name, value): values are text
    (exact reprs) or float64 arrays (tensors)."""
    player = state.current_player()
    out = [("current_player", repr(player))]
    if state.is_terminal():
        out.append(("returns", repr(_guard(state.returns))))
    else:
        if state.is_chance_node():
            outcomes = _guard(state.chance_outcomes)
            out.append(("chance_outcomes", repr(outcomes)))
            actions = [a for a, _ in outcomes] if isinstance(outcomes, list) else []
        else:
            actions = _guard(state.legal_actions)
            out.append(("legal_actions", repr(actions)))
            actions = actions if isinstance(actions, list) else []
        out.append(("action_strings", repr([_guard(lambda a=a: state.action_to_string(player, a)) for a in actions])))
    for p in view.players:
        for name, tensor in view.per_player:
            call = getattr(state, name)
            out.append((f"{name}[{p}]", _tensor(lambda: call(p)) if tensor else _guard(lambda: call(p))))
        if view.info_state is not None:
            out.append((f"information_state_tensor[{p}]", _tensor(lambda: view.information_state_tensor(state, p))))
            if state.is_terminal():
                out.append((f"information_state_tensor[{p}] (State)", _tensor(lambda: state.information_state_tensor(p))))
        for e in view.encodings:
            out.append((f"{e}[{p}]", _tensor(lambda: view.encoding_tensor(state, p, e))))
    out.append(("str(state)", _guard(lambda: str(state))))
    return out


def _update(h, fields) -> None:
    """Adds fields to the blake2b ``h``: a name, its value's length and the
    value; a tensor as its shape and the positions and float64 bits of its
    entries whose bits are not all zero (tensors are mostly zeros)."""
    for name, value in fields:
        if isinstance(value, str):
            data = value.encode()
        else:
            bits = value.reshape(-1).view(np.uint64)
            nonzero = np.flatnonzero(bits)
            data = (b"\x01" + repr(value.shape).encode() + b"\0" + nonzero.astype(np.int64).tobytes()
                    + bits[nonzero].tobytes())
        h.update(name.encode() + b"\0" + len(data).to_bytes(8, "little") + data)


def walk_random(game, seed: int, index: int):
    """The states of random game ``index`` of ``seed``, in order (the same
    state object, played on after each yield; the caller must not change it):
    chance by its probabilities, decisions uniform over the legal actions,
    all drawn from ``numpy.random.default_rng([seed, index])``."""
    rng = np.random.default_rng([seed, index])
    state = game.new_initial_state()
    while True:
        yield state
        if state.is_terminal():
            return
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            cumulative = np.cumsum([p for _, p in outcomes])
            i = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
            state.apply_action(outcomes[min(i, len(outcomes) - 1)][0])
        else:
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.integers(len(legal)))])


def walk_tree(game):
    """Every state of ``game``'s tree, depth first, children in the order of
    the chance outcomes or legal actions."""
    stack = [game.new_initial_state()]
    while stack:
        state = stack.pop()
        yield state
        if not state.is_terminal():
            actions = ([a for a, _ in state.chance_outcomes()] if state.is_chance_node()
                       else state.legal_actions())
            stack.extend(state.child(a) for a in reversed(actions))


def _walk(game, walk):
    return walk_tree(game) if walk[0] == "tree" else walk_random(game, walk[1], walk[2])


def _run(job: dict) -> dict:
    """One job of a process (a dict of plain values, its answer likewise)."""
    import pyspiel

    game = pyspiel.load_game(job["game"])
    kind = job["kind"]
    if kind == "game":
        return {"fields": game_fields(game)}
    view = View(game)
    if kind == "random":
        digests, nodes = [], 0
        for index in range(job["start"], job["stop"]):
            h = hashlib.blake2b(digest_size=16)
            for state in walk_random(game, job["seed"], index):
                _update(h, node_fields(state, view))
                nodes += 1
            digests.append(h.hexdigest())
        return {"digests": digests, "nodes": nodes}
    if kind == "tree":
        h, nodes = hashlib.blake2b(digest_size=16), 0
        for state in walk_tree(game):
            _update(h, node_fields(state, view))
            nodes += 1
        return {"digests": [h.hexdigest()], "nodes": nodes}
    if kind == "steps":  # a digest per node of one walk
        out = []
        for state in _walk(game, job["walk"]):
            h = hashlib.blake2b(digest_size=8)
            _update(h, node_fields(state, view))
            out.append(h.hexdigest())
        return {"digests": out}
    if kind == "node":  # every field of one node of one walk
        for step, state in enumerate(_walk(game, job["walk"])):
            if step == job["step"]:
                return {"history": state.history(),
                        "fields": [(n, v if isinstance(v, str) else v.tolist()) for n, v in node_fields(state, view)]}
        return {"history": None, "fields": []}
    raise ValueError(f"unknown job kind {kind!r}")


# ---------------------------------------------------------------- the process


def _use_games(folder: Path) -> None:
    """Makes ``kibitz.games`` the package in ``folder`` (and ``kibitz`` an
    empty package around it) in this process."""
    kibitz = types.ModuleType("kibitz")
    kibitz.__path__ = []
    sys.modules["kibitz"] = kibitz
    spec = importlib.util.spec_from_file_location("kibitz.games", folder / "__init__.py",
                                                  submodule_search_locations=[str(folder)])
    games = importlib.util.module_from_spec(spec)
    sys.modules["kibitz.games"] = kibitz.games = games
    spec.loader.exec_module(games)


def _strays(folder: Path) -> list[str]:
    """The ``kibitz.*`` modules of this process from outside ``folder``
    (a module without a file: by its package path)."""
    def inside(m) -> bool:
        places = [m.__file__] if getattr(m, "__file__", None) else list(getattr(m, "__path__", None) or [])
        return bool(places) and all(Path(p).resolve().is_relative_to(folder) for p in places)
    return sorted(name for name, m in list(sys.modules.items()) if name.startswith("kibitz.") and not inside(m))


def worker(folder: str) -> None:
    """A process's main: the games from ``folder``; jobs from standard input
    and answers to standard output, one JSON object a line each, an answer
    with the job's CPU seconds (or an ``error``)."""
    folder = Path(folder).resolve()
    _use_games(folder)
    for line in sys.stdin:
        job = json.loads(line)
        start = time.process_time()
        try:
            answer = _run(job)
        except Exception as e:  # noqa: BLE001 - reported by the other process, with the job
            answer = {"error": f"{describe(job)}: {type(e).__name__}: {e}"}
        strays = _strays(folder)
        if strays:
            answer = {"error": f"kibitz modules loaded from outside {folder}: {', '.join(strays)}"}
        answer["seconds"] = time.process_time() - start
        print(json.dumps(answer), flush=True)


# The processes start with this: it loads this file (not the package
# kibitz.experiments, so that nothing of kibitz is imported before the games).
_BOOT = ("import importlib.util, sys\n"
         "spec = importlib.util.spec_from_file_location('kibitz_frozen_rules', sys.argv[2])\n"
         "module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)\n"
         "spec.loader.exec_module(module)\n"
         "module.worker(sys.argv[1])\n")


class _Process:
    """A process running jobs, one at a time, on the games of one folder
    (``side`` is "current" or "frozen": the frozen side's numba cache goes
    beside its folder)."""

    def __init__(self, side: str, folder: Path):
        self.side, self.folder = side, folder
        self.stderr = tempfile.TemporaryFile()
        env = dict(os.environ)
        if side == "frozen":
            env["NUMBA_CACHE_DIR"] = str(folder.parent / "numba")
        self.proc = subprocess.Popen([sys.executable, "-P", "-c", _BOOT, str(folder), str(Path(__file__).resolve())],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
                                     env=env, cwd=folder.parent, text=True)

    def send(self, job: dict) -> None:
        try:
            self.proc.stdin.write(json.dumps(job) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass  # answer() says why

    def answer(self) -> dict:
        """The answer to the oldest job sent; FrozenRulesError if the
        process failed or answered with an error."""
        line = self.proc.stdout.readline()
        if not line:
            self.stderr.seek(0)
            tail = self.stderr.read().decode(errors="replace").strip().splitlines()[-1:]
            raise FrozenRulesError(f"the process of the {self.side} games ({self.folder}) ended "
                                   f"(exit {self.proc.wait()}): {tail[0] if tail else 'no message'}")
        answer = json.loads(line)
        if "error" in answer:
            raise FrozenRulesError(f"the {self.side} games ({self.folder}): {answer['error']}")
        return answer

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()
        self.stderr.close()


class _Pair:
    """The two processes, the current games' and the frozen ones'."""

    def __init__(self, sides: dict):
        self.sides = sides
        self.procs = {}
        try:
            for side, folder in sides.items():
                self.procs[side] = _Process(side, folder)
        except BaseException:
            self.close()
            raise

    def ask(self, job: dict) -> dict:
        """Both sides' answers to ``job``, worked out at once."""
        for p in self.procs.values():
            p.send(job)
        return {side: p.answer() for side, p in self.procs.items()}

    def close(self) -> None:
        for p in self.procs.values():
            p.close()


# ------------------------------------------------------- the frozen games


def cache_folder(commit: str = COMMIT) -> Path:
    """``$KIBITZ_CACHE/frozen/COMMIT`` or ``~/.cache/kibitz/frozen/COMMIT``."""
    env = os.environ.get("KIBITZ_CACHE")
    return (Path(env) if env else Path.home() / ".cache" / "kibitz") / "frozen" / commit


def repository() -> Path:
    """The git checkout this file is in."""
    here = Path(__file__).resolve().parent
    if shutil.which("git") is None:
        raise FrozenRulesError("git is not on the PATH: the frozen games are read from the git history")
    top = subprocess.run(["git", "-C", str(here), "rev-parse", "--show-toplevel"], capture_output=True, text=True)
    if top.returncode != 0:
        raise FrozenRulesError(f"{here} is not in a git checkout: the frozen games are read from the git history")
    return Path(top.stdout.strip())


def frozen_games(commit: str = COMMIT, part: str = "games") -> Path:
    """The ``games/`` folder of ``commit`` (or another top-level folder,
    ``part``), read from git into :func:`cache_folder` on first use (a
    complete folder is reused)."""
    folder = cache_folder(commit if part == "games" else f"{commit}-{part}")
    if (folder / "complete").is_file():
        return folder / part
    repo = repository()
    known = subprocess.run(["git", "-C", str(repo), "cat-file", "-e", f"{commit}^{{commit}}"], capture_output=True)
    if known.returncode != 0:
        raise FrozenRulesError(f"commit {commit} is not in the git history of {repo} "
                               "(a shallow clone? `git fetch --unshallow` brings it)")
    archive = subprocess.run(["git", "-C", str(repo), "archive", "--format=tar", commit, part], capture_output=True)
    if archive.returncode != 0:
        raise FrozenRulesError(f"git archive {commit} {part} failed: {archive.stderr.decode(errors='replace').strip()}")
    folder.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{commit}.", dir=folder.parent))
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(scratch, filter="data")
    (scratch / "complete").write_text(f"{part}/ of {commit}, from git archive\n")
    try:
        scratch.rename(folder)
    except OSError:  # another process was first
        shutil.rmtree(scratch, ignore_errors=True)
        if not (folder / "complete").is_file():
            raise
    return folder / part


def current_games() -> Path:
    """The ``games/`` folder that ``kibitz.games`` is imported from here."""
    return Path(importlib.util.find_spec("kibitz.games").submodule_search_locations[0]).resolve()


# ------------------------------------------------------------- the comparison


@dataclass
class Outcome:
    """One job compared: ``difference`` is None when both sides agree."""
    job: dict
    games: int
    nodes: int
    difference: str | None
    seconds: dict = field(default_factory=dict)  # side -> CPU seconds

    @property
    def label(self) -> str:
        return describe(self.job)


def describe(job: dict) -> str:
    kind, game = job["kind"], job["game"]
    if kind == "random":
        return f"{game}: random games {job['start']}..{job['stop'] - 1} of seed {job['seed']}"
    if kind in ("steps", "node"):
        return _where(game, job["walk"])
    return f"{game}: {'the whole tree' if kind == 'tree' else 'attributes'}"


def random_jobs(game: str, games: int, seed: int = SEED, chunk: int | None = None, start: int = 0) -> list[dict]:
    """Jobs for random games start..games-1 of ``seed`` (in chunks of ``chunk``)."""
    chunk = chunk or max(games - start, 1)
    return [{"kind": "random", "game": game, "seed": seed, "start": lo, "stop": min(lo + chunk, games)}
            for lo in range(start, games, chunk)]


def jobs_for(name: str, games: int, small_games: int, seed: int = SEED, chunk: int | None = None,
             start: int = 0) -> list[dict]:
    """All jobs of one game: attributes, random games ``start``..``games``-1
    at the default size and all at the small configuration, the small tree."""
    small = SMALL[name]
    return ([{"kind": "game", "game": name}, {"kind": "game", "game": small}]
            + random_jobs(name, games, seed, chunk, start) + random_jobs(small, small_games, seed, chunk)
            + [{"kind": "tree", "game": small}])


def compare(jobs: list[dict], frozen: Path | None = None, current: Path | None = None, on_outcome=None) -> list[Outcome]:
    """Runs ``jobs`` on the current games and the frozen ones, each job on
    both at once (two processes), and compares them; ``on_outcome(outcome)``
    is called as each job is done. ``frozen`` and ``current`` are
    ``games/`` folders (the frozen commit's and the imported one by default)."""
    pair = _Pair({"current": current or current_games(), "frozen": frozen or frozen_games()})
    outcomes = []
    try:
        for job in jobs:
            outcome = _outcome(job, pair)
            outcomes.append(outcome)
            if on_outcome:
                on_outcome(outcome)
    finally:
        pair.close()
    return outcomes


def _outcome(job: dict, pair: _Pair) -> Outcome:
    answers = pair.ask(job)
    cur, fro = answers["current"], answers["frozen"]
    seconds = {side: a["seconds"] for side, a in answers.items()}
    if job["kind"] == "game":
        diff = _first_field(job["game"], "attributes", cur["fields"], fro["fields"])
        return Outcome(job, 0, 0, diff, seconds)
    games = len(cur["digests"])
    nodes = cur["nodes"]
    diff = None
    if cur["digests"] != fro["digests"] or cur["nodes"] != fro["nodes"]:
        index = next((i for i, (a, b) in enumerate(zip(cur["digests"], fro["digests"])) if a != b), 0)
        walk = ["tree"] if job["kind"] == "tree" else ["random", job["seed"], job["start"] + index]
        diff = _locate(job["game"], walk, pair)
    return Outcome(job, games, nodes, diff, seconds)


def _where(game: str, walk: list) -> str:
    return f"{game}, the small tree walked depth first" if walk[0] == "tree" else \
        f"{game}, random game {walk[2]} of seed {walk[1]}"


def _locate(game: str, walk: list, pair: _Pair) -> str:
    """The first differing node and field of one walk, played again on both sides."""
    steps = pair.ask({"kind": "steps", "game": game, "walk": walk})
    cur, fro = steps["current"]["digests"], steps["frozen"]["digests"]
    step = next((i for i, (a, b) in enumerate(zip(cur, fro)) if a != b), min(len(cur), len(fro)))
    where = _where(game, walk)
    if step == min(len(cur), len(fro)):
        return f"{where}: the current game has {len(cur)} nodes, the frozen one {len(fro)}"
    nodes = pair.ask({"kind": "node", "game": game, "walk": walk, "step": step})
    history = nodes["current"]["history"]
    return _first_field(f"{where}, step {step} (history {history})", "fields",
                        nodes["current"]["fields"], nodes["frozen"]["fields"])


def _first_field(where: str, what: str, cur: list, fro: list) -> str | None:
    """None if the (name, value) lists agree, else the first difference."""
    cur_names, fro_names = [n for n, _ in cur], [n for n, _ in fro]
    if cur_names != fro_names:
        return f"{where}: {what} differ: current {cur_names}, frozen {fro_names}"
    for (name, a), (_, b) in zip(cur, fro):
        if a != b:
            return f"{where}, {name}: {_contrast(a, b)}"
    return None


def _contrast(a, b) -> str:
    """Where two values first differ, and both there."""
    if isinstance(a, str) and isinstance(b, str):
        i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        lo = max(0, i - 40)
        return (f"current {a[lo:i + 40]!r}, frozen {b[lo:i + 40]!r} (first difference at character {i}; "
                f"lengths {len(a)}, {len(b)})")
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"current has {len(a)} values, frozen {len(b)}"
        i = next(k for k, (x, y) in enumerate(zip(a, b)) if x != y)
        return f"current[{i}] = {a[i]!r}, frozen[{i}] = {b[i]!r} (of {len(a)} values)"
    return f"current {str(a)[:200]!r}, frozen {str(b)[:200]!r}"


# ------------------------------------------------------------------ the command


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=10_000, help="random games per game at its default size")
    ap.add_argument("--small-games", type=int, default=1_000, help="random games per game at its small configuration")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--only", action="append", choices=GAMES, help="only this game (repeatable)")
    ap.add_argument("--chunk", type=int, default=500, help="games per progress line")
    ap.add_argument("--start", type=int, default=0,
                    help="first random game at the default size (to go on from an earlier run's progress lines)")
    args = ap.parse_args(argv)
    if not 0 <= args.start <= args.games:
        print(f"error: --start must be between 0 and --games ({args.games}), got {args.start}", file=sys.stderr)
        return 2
    names = args.only or list(GAMES)
    jobs = [j for name in names for j in jobs_for(name, args.games, args.small_games, args.seed, args.chunk, args.start)]
    try:
        frozen = frozen_games()
    except FrozenRulesError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"current games: {current_games()}\nfrozen games: {COMMIT} ({frozen})\nseed {args.seed}"
          f"{f', default-size random games from game {args.start}' if args.start else ''}\n", flush=True)
    rows: dict[tuple, dict] = {}
    started = last = time.monotonic()

    def progress(o: Outcome) -> None:
        nonlocal last
        now = time.monotonic()
        kind = {"game": "attributes", "random": "random games", "tree": "whole tree"}[o.job["kind"]]
        row = rows.setdefault((o.job["game"], kind), {"games": 0, "nodes": 0, "difference": None, "wall": 0.0,
                                                      "current": 0.0, "frozen": 0.0})
        row["games"] += o.games if o.job["kind"] == "random" else 0
        row["nodes"] += o.nodes
        row["difference"] = row["difference"] or o.difference
        row["wall"] += now - last
        for side in ("current", "frozen"):
            row[side] += o.seconds[side]
        last = now
        print(f"  [{now - started:7.0f} s] {o.label}: {'identical' if o.difference is None else 'DIFFERENT'}",
              file=sys.stderr, flush=True)

    try:
        compare(jobs, frozen=frozen, on_outcome=progress)
    except FrozenRulesError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print("| game string | compared | games | nodes | result | wall s | CPU s current | CPU s frozen |")
    print("|---|---|---:|---:|---|---:|---:|---:|")
    differences = []
    for (game, kind), r in rows.items():
        if r["difference"]:
            differences.append(r["difference"])
        result = "identical" if r["difference"] is None else f"DIFFERENT ({len(differences)} below)"
        print(f"| `{game}` | {kind} | {r['games'] if kind == 'random games' else '-'} | {r['nodes']:,} | {result} | "
              f"{r['wall']:,.1f} | {r['current']:,.1f} | {r['frozen']:,.1f} |")
    for i, d in enumerate(differences, 1):
        print(f"\n{i}. {d}")
    print(f"\n{'all identical' if not differences else f'{len(differences)} different'}; "
          f"wall {time.monotonic() - started:,.0f} s")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
