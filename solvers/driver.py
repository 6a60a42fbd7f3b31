"""The solve driver shared by the iterative solvers (CFR and MCCFR).

A solver that the driver runs has ``iteration`` (the iterations done),
``iterate()`` (one more), and ``state_dict()`` / ``load_state_dict()``
(its state as named numpy arrays). The driver runs it until a stop rule
fires (the iteration count, a time limit, a target NashConv, or a stop
request from SIGINT/SIGTERM), writes checkpoints atomically on the way and
at the end, and resumes from one so that a resumed run ends with exactly
the state an uninterrupted run would have reached.

A checkpoint (``OUT.ckpt.npz``, see :func:`checkpoint_path`) holds the
solver's arrays and a ``meta`` entry: JSON naming the game, the algorithm
and its settings (and, for CFR, the compiled tree's size), plus the seconds
spent so far. A checkpoint resumes only a run whose meta is the same.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import sys
import time
import zipfile
import zlib
from pathlib import Path

import numpy as np

from kibitz.solvers._io import MAX_BYTES_VARIABLE, FileReadError, atomic_write, max_bytes

#: why :func:`run_solver` stopped -> the phrase a summary prints
STOPPED = {"iterations": "reached the iteration count", "time": "time limit",
           "target": "target NashConv reached", "memory": "memory limit"}
#: seconds between two readings of the resident memory between iterations
MEMORY_POLL = 0.25


def resident_bytes() -> int:
    """This process's resident memory in bytes (Linux ``/proc/self/statm``;
    elsewhere the peak that ``getrusage`` reports)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


def physical_memory() -> int | None:
    """The machine's memory in bytes, or None where it cannot be read."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (OSError, ValueError, AttributeError):
        return None


class CheckpointMismatch(ValueError):
    """A checkpoint made by another run (game, algorithm, settings or tree)."""


def checkpoint_path(out) -> Path:
    """Where the checkpoint of a run writing the policy file ``out`` goes."""
    return Path(str(out) + ".ckpt.npz")


def checkpoint_meta(game_string: str, algorithm: str, settings: dict, **shape) -> dict:
    """What a checkpoint must match to resume a run: the game, the algorithm,
    its settings, and ``shape`` (e.g. the compiled tree's ``nodes`` and ``slots``)."""
    return {"game": game_string, "algorithm": algorithm, "settings": settings, **shape}


def save_checkpoint(path: Path, solver, meta: dict, seconds: float) -> None:
    """Writes the solver state atomically (temporary file, then rename)."""
    info = dict(meta, seconds=seconds)
    atomic_write(path, lambda f: np.savez(
        f, meta=np.frombuffer(json.dumps(info).encode(), dtype=np.uint8), **solver.state_dict()))


class CheckpointError(FileReadError):
    """A file that is not a readable checkpoint (truncated, another kind of
    file, or not the state of the solver that loads it)."""


def read_checkpoint(path) -> tuple[dict, dict]:
    """``(meta, arrays)`` of a checkpoint: its meta (with ``seconds``) and the
    solver state that :meth:`load_state_dict` takes. A file that is not a
    complete checkpoint, or whose arrays would take more than
    :func:`solvers._io.max_bytes`, raises :class:`CheckpointError`."""
    what = f"{path}: not a kibitz checkpoint"
    try:
        loaded = np.load(path, allow_pickle=False)
        if not isinstance(loaded, np.lib.npyio.NpzFile):
            raise CheckpointError(f"{what} (a single numpy array, not a .npz archive)")
        with loaded as z:
            size = sum(entry.file_size for entry in z.zip.infolist())
            if size > max_bytes():
                raise CheckpointError(f"{path}: its arrays take {size / 2**20:,.0f} MiB, more than the "
                                      f"limit of {max_bytes() / 2**20:g} MiB (the environment "
                                      f"variable {MAX_BYTES_VARIABLE} sets another)")
            arrays = {k: z[k] for k in z.files}
        odd = [k for k, v in arrays.items() if not isinstance(v, np.ndarray)]
        if odd:
            raise CheckpointError(f"{what} (its entry {odd[0]!r} is not a numpy array)")
        if "meta" not in arrays:
            raise CheckpointError(f"{what} (no 'meta' entry)")
        info = json.loads(arrays.pop("meta").tobytes().decode())
    except CheckpointError:
        raise
    except FileNotFoundError:
        raise CheckpointError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CheckpointError(f"{path}: a directory, not a file") from None
    except (OSError, EOFError, ValueError, KeyError, RecursionError, MemoryError, zipfile.BadZipFile,
            zlib.error) as e:
        # ValueError: a text or pickle file, a damaged array, meta that is not JSON
        raise CheckpointError(f"{what} (truncated or another kind of file: {e})") from None
    if not (isinstance(info, dict) and isinstance(info.get("game"), str)
            and isinstance(info.get("algorithm"), str) and isinstance(info.get("settings"), dict)
            and isinstance(info.get("seconds", 0.0), (int, float))):
        raise CheckpointError(f"{what} (its meta lacks the game, the algorithm, the settings or the seconds)")
    return info, arrays


def load_checkpoint(path: Path, solver, meta: dict) -> float:
    """Restores ``solver`` from ``path``; returns the seconds already spent.
    Raises :class:`CheckpointMismatch` when the checkpoint's meta differs
    from ``meta`` (the first differing key is named), :class:`CheckpointError`
    when the file is not a checkpoint of this solver."""
    info, arrays = read_checkpoint(path)
    for key in meta:
        if info.get(key) != meta[key]:
            raise CheckpointMismatch(f"checkpoint {path} was made with {key}={info.get(key)!r}, "
                                     f"this run has {meta[key]!r}")
    try:
        solver.load_state_dict(arrays)
    except FileReadError as e:  # e.g. MCCFR's compressed state, damaged or over the limit
        raise CheckpointError(f"{path}: {e}") from None
    except (KeyError, ValueError, TypeError, IndexError) as e:
        raise CheckpointError(f"{path}: does not hold the state of this solver "
                              f"({type(e).__name__}: {e})") from None
    return float(info.get("seconds", 0.0))


@contextlib.contextmanager
def stop_on_signals():
    """Turns SIGINT and SIGTERM into a flag that the loop checks between
    iterations (so that a checkpoint can be written); yields the flag."""
    flag = {"signal": None}

    def handler(signum, frame):  # noqa: ARG001
        flag["signal"] = signum

    saved = {}
    try:
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                saved[sig] = signal.signal(sig, handler)
            except ValueError:  # not in the main thread
                pass
        yield flag
    finally:
        for sig, old in saved.items():
            signal.signal(sig, old)


def run_solver(solver, *, iterations, time_limit=None, target_nashconv=None, eval_every=0,
               checkpoint=None, checkpoint_every=60.0, meta=None, seconds_before=0.0,
               stop_flag=None, progress=True, evaluate=None, postfix=None, desc="solve", unit="it",
               max_memory=None, finish=None):
    """The solve loop. Returns ``(reason, seconds, last_nash_conv)``; reason is
    ``"iterations"``, ``"time"``, ``"target"``, ``"memory"`` or ``"interrupted"``.

    ``max_memory`` (bytes) stops the run once the process's resident memory
    reaches it. A solver whose ``abandons_iterations`` is true takes the stop
    test into its iterations (``iterate(should_stop)``, see
    ``solvers.mccfr.MCCFR.iterate``): a signal, the time limit or the memory
    limit then stop it within an iteration, which it undoes, instead of
    after it. ``finish(solver)``, when given, estimates the seconds that
    writing the results will take once the loop ends; the time limit then
    stops the loop that much earlier, so that the whole run keeps to it.

    ``stop_flag`` is a dict whose ``"signal"`` entry becomes truthy to stop
    (see :func:`stop_on_signals`); ``evaluate(solver)`` returns the NashConv
    of the average policy. ``postfix(solver)``, when given, returns a dict
    that the progress bar shows after each iteration (e.g. a trainer's loss);
    ``desc`` and ``unit`` label the bar.
    """
    from tqdm import tqdm

    stop_flag = stop_flag if stop_flag is not None else {"signal": None}
    t0 = time.perf_counter()
    last_ckpt = last_memory = t0
    last_nc = None
    reason = "iterations"
    reserve = {"seconds": 0.0, "at": -math.inf}

    def out_of_time(now):
        if time_limit is None:
            return False
        if finish is not None and now - reserve["at"] >= getattr(solver, "finish_poll_seconds", 1.0):
            reserve["seconds"], reserve["at"] = finish(solver), now
        return now - t0 + reserve["seconds"] >= time_limit

    shown = {"at": t0}

    def should_stop():
        now = time.perf_counter()
        if now - shown["at"] >= 0.5:  # a long iteration shows that it walks on
            shown["at"] = now
            bar.set_postfix_str(f"{solver.decisions:,} decision nodes walked", refresh=True)
        if stop_flag.get("signal"):
            return "interrupted"
        if out_of_time(now):
            return "time"
        if max_memory is not None and resident_bytes() >= max_memory:
            return "memory"
        return None

    abandons = getattr(solver, "abandons_iterations", False)
    if hasattr(solver, "iteration_limit"):  # a solver that runs iterations in batches stops at the target
        solver.iteration_limit = iterations
    bar = tqdm(total=iterations, initial=solver.iteration, unit=unit, dynamic_ncols=True,
               disable=None if progress else True, desc=desc, mininterval=0.2)
    bar.refresh()  # shown from the start, before the first iteration ends
    try:
        while solver.iteration < iterations:
            if stop_flag.get("signal"):
                reason = "interrupted"
                break
            before = solver.iteration
            if abandons:
                why = solver.iterate(should_stop)
                if why:
                    reason = why
                    break
            else:
                solver.iterate()
            bar.update(solver.iteration - before)  # a batch of a Ray solver counts several
            if postfix is not None:
                bar.set_postfix(postfix(solver), refresh=False)
            now = time.perf_counter()
            if eval_every and solver.iteration % eval_every == 0:
                last_nc = evaluate(solver)
                bar.set_postfix(nashconv=f"{last_nc:.3g}", refresh=False)
                if target_nashconv is not None and last_nc <= target_nashconv:
                    reason = "target"
                    break
            if out_of_time(now):
                reason = "time"
                break
            if max_memory is not None and now - last_memory >= MEMORY_POLL:
                last_memory = now
                if resident_bytes() >= max_memory:
                    reason = "memory"
                    break
            if checkpoint is not None and now - last_ckpt >= checkpoint_every:
                save_checkpoint(checkpoint, solver, meta, seconds_before + now - t0)
                last_ckpt = time.perf_counter()
    finally:
        bar.close()
    seconds = seconds_before + time.perf_counter() - t0
    if checkpoint is not None:
        save_checkpoint(checkpoint, solver, meta, seconds)
    return reason, seconds, last_nc
