"""Outcome- and external-sampling MCCFR on a game's compiled rules.

The same algorithms as :class:`kibitz.solvers.mccfr.MCCFR` (its module
documents the updates), for a game that
declares ``COMPILED`` (``kibitz.games.search``): every trajectory is
sampled, stepped and updated in numba (``solvers/_mccfr_kernels.py``), with
information states known by a 64-bit hash of the tokens their player has
seen instead of by their strings. The strings are made only when the
policy is written (:attr:`CompiledMCCFR.table`): one history of each
information state, kept when it was first met, is replayed through the
game's Python rules.

The tables live in flat arrays that grow by doubling up to ``max_bytes``;
when the next growth would pass it, :meth:`CompiledMCCFR.iterate` answers
``"memory"``, the iteration in progress undone, so the policy so far and a
checkpoint that resumes exactly can be written. Iterations run in batches
of about :data:`BATCH_SECONDS` in compiled code; the generator
(xoshiro256**) is part of the checkpoint, so a run gives the same tables
whatever its batches, stops and resumes. Its draws are not those of the
Python solver: the two give different (equally valid) samples for one seed.
"""

from __future__ import annotations

import gzip
import json
import time

import numpy as np
import pyspiel

from kibitz.games import search
from kibitz.solvers import _mccfr_kernels as K
from kibitz.solvers._io import gunzip

#: seconds a batch of iterations runs in compiled code between two looks from Python
BATCH_SECONDS = 0.05
#: the starting capacities: entries (information states), and per entry slots and history actions
START_ENTRIES = 1 << 12
#: information states whose policy-file entries are made from scratch and
#: timed to estimate the writing (:meth:`CompiledMCCFR.finish_seconds`)
FINISH_SAMPLE = 32
#: the writing time over the sample's estimate: the sample replays each
#: history from the root (the writing shares prefixes), but leaves out
#: the file's and the checkpoint's output; with --time 10s at the default
#: sizes, 1.0 gave 7.0-12.0 s from start to end
FINISH_FACTOR = 1.3
#: the process's peak memory while it writes, over the policy file's JSON
#: bytes (measured at the default sizes: 3.8x Over/Under to 7.7x Doubt and Bet)
WRITE_MEMORY_FACTOR = 8.0
#: the share of ``kibitz solve --max-memory`` that the tables and the
#: writing's estimated memory may take together (the rest: the process itself)
TABLE_SHARE = 0.8
#: the arrays an entry holds (bytes): table (2 places of 16), entry arrays
ENTRY_BYTES = 2 * 16 + 8 + 8 + 1 + 8 + 4 + 8 + 4
SLOT_BYTES = 4 + 8 + 8
HIST_BYTES = 4
#: the arrays of a checkpoint, in this order
ARRAYS = ("e_key", "e_player", "e_start", "e_n", "e_hist", "e_hlen", "s_action", "regret", "avg", "hist")


def compiled(game) -> bool:
    """Whether ``game`` has compiled rules this solver can run on."""
    return search.COMPILED in search.capabilities(game) and search.SNAPSHOT in search.capabilities(game)


class CompiledMCCFR:
    """Outcome- or external-sampling MCCFR on compiled rules (see the module's doc).

    Args: as :class:`kibitz.solvers.mccfr.MCCFR`, and ``max_bytes``, the
    most the tables (and the writing of their policy file) may take.
    """

    #: :meth:`iterate` may answer a stop reason (the driver's ``should_stop`` protocol)
    abandons_iterations = True

    def __init__(self, game, rng: np.random.Generator, sampling: str = "os", epsilon: float = 0.6,
                 fallback: str = "uniform", max_bytes: float | None = None):
        if sampling not in ("os", "es"):
            raise ValueError(f"sampling must be 'os' or 'es', not {sampling!r}")
        if not 0.0 < epsilon <= 1.0:
            raise ValueError(f"epsilon must be in (0, 1]; got {epsilon}")
        if not compiled(game):
            raise ValueError(f"game {game.get_type().short_name!r} has no compiled rules")
        self.game = game
        self.sampling = sampling
        self.epsilon = float(epsilon)
        self.fallback = fallback
        self.num_players = game.num_players()
        self.max_bytes = max_bytes
        self.rules = game.compiled_rules()
        self.max_len = int(game.max_game_length())
        self.rng = K.seeded_rng(int(rng.integers(2**63)))
        self.ctr = np.zeros(K.CTR_SIZE, dtype=np.int64)
        entries = START_ENTRIES
        while entries > 16 and max_bytes is not None and self._bytes_for(entries) > max_bytes / 2:
            entries //= 2
        self._allocate(entries)
        #: the iteration count up to which :meth:`iterate` may run (the driver's target)
        self.iteration_limit = np.iinfo(np.int64).max
        self._batch = 1
        self._table = None
        self.abandoned_decisions = 0
        self.finished = 0
        self._cost, self._cost_at = (0.0, 0.0), 0

    # -------------------------------------------------------------- arrays
    def _sizes(self, entries: int, slots: int | None = None, hist: int | None = None):
        """The slots, history and journal sizes allocated with ``entries`` entries."""
        mb = self.rules.max_branch
        return (slots or max(4 * entries, 2 * mb), hist or max(16 * entries, 2 * self.max_len),
                max(64, self.num_players * self.max_len), max(1024, 4 * mb))

    def _bytes_for(self, entries: int) -> int:
        slots, hist, journal_entries, journal = self._sizes(entries)
        return (ENTRY_BYTES * entries + SLOT_BYTES * slots + HIST_BYTES * hist + 8 * journal_entries
                + 8 * journal)

    def _allocate(self, entries: int, slots: int | None = None, hist: int | None = None):
        slots, hist, journal_entries, journal = self._sizes(entries, slots, hist)
        self.e_key = np.zeros(entries, dtype=np.uint64)
        self.e_player = np.zeros(entries, dtype=np.int8)
        self.e_start = np.zeros(entries, dtype=np.int64)
        self.e_n = np.zeros(entries, dtype=np.int32)
        self.e_hist = np.zeros(entries, dtype=np.int64)
        self.e_hlen = np.zeros(entries, dtype=np.int32)
        self.s_action = np.zeros(slots, dtype=np.int32)
        self.regret = np.zeros(slots, dtype=np.float64)
        self.avg = np.zeros(slots, dtype=np.float64)
        self.hist = np.zeros(hist, dtype=np.int32)
        self.t_key, self.t_entry, self.e_tpos = K.rehash(self.e_key, 0, _power_of_two(2 * entries))
        self.j_entry = np.zeros(journal_entries, dtype=np.int64)
        self.j_old = np.zeros(journal, dtype=np.float64)

    def table_bytes(self) -> int:
        """The bytes the arrays take now."""
        return sum(getattr(self, name).nbytes for name in ARRAYS + ("t_key", "t_entry", "e_tpos", "j_entry", "j_old"))

    def _grow(self, need: int) -> bool:
        """Doubles the array ``need`` names (and what goes with it); False past ``max_bytes``."""
        grown = {K.NEED_ENTRIES: ("e_key", "e_player", "e_start", "e_n", "e_hist", "e_hlen", "e_tpos"),
                 K.NEED_SLOTS: ("s_action", "regret", "avg"), K.NEED_HIST: ("hist",),
                 K.NEED_JOURNAL: ("j_old",), K.NEED_JOURNAL_ENTRIES: ("j_entry",)}
        names = grown.get(need, ("t_key",))
        extra = sum(getattr(self, name).nbytes for name in names)
        if need == K.NEED_TABLE:
            extra = self.t_key.nbytes + self.t_entry.nbytes
        if self.max_bytes is not None and self.table_bytes() + extra + self.finish_bytes() > self.max_bytes:
            return False
        if need == K.NEED_TABLE:
            self.t_key, self.t_entry, self.e_tpos = K.rehash(self.e_key, int(self.ctr[K.NE]), 2 * len(self.t_key))
            return True
        for name in names:
            old = getattr(self, name)
            new = np.zeros(2 * len(old), dtype=old.dtype)
            new[:len(old)] = old
            setattr(self, name, new)
        return True

    # -------------------------------------------------------------- iterate
    @property
    def iteration(self) -> int:
        return int(self.ctr[K.ITERATION])

    @property
    def decisions(self) -> int:
        """Decision nodes with more than one legal action walked."""
        return int(self.ctr[K.DECISIONS])

    @property
    def forced_decisions(self) -> int:
        return int(self.ctr[K.FORCED])

    @property
    def collisions(self) -> int:
        """Information states met whose hash was another's (played uniformly, not updated)."""
        return int(self.ctr[K.COLLISIONS])

    @property
    def underflows(self) -> int:
        """Trajectories whose sampling probability underflowed to 0 (no update)."""
        return int(self.ctr[K.UNDERFLOWS])

    @property
    def num_infostates(self) -> int:
        return int(self.ctr[K.NE])

    def iterate(self, should_stop=None):
        """A batch of iterations (about :data:`BATCH_SECONDS`, never past
        :attr:`iteration_limit`); returns None, or ``"memory"`` when the
        tables cannot grow within ``max_bytes`` (the iteration in progress
        undone). ``should_stop`` is not asked: a batch is short."""
        del should_stop
        r = self.rules
        limit = int(min(self.iteration_limit, 2**62))
        while True:
            t0 = time.perf_counter()
            before = self.iteration
            kernel = K.os_batch if self.sampling == "os" else K.es_batch
            status = kernel(r.kind, r.legal, r.outcomes, r.apply, r.returns, r.token, r.initial, r.params,
                                self.num_players, r.max_branch, self.max_len, limit,
                                self._batch, self.epsilon, self.rng, self.ctr, self.t_key, self.t_entry,
                                self.e_key, self.e_tpos, self.e_player, self.e_start, self.e_n, self.e_hist,
                                self.e_hlen, self.s_action, self.regret, self.avg, self.hist,
                                self.j_entry, self.j_old)
            done = self.iteration - before
            if done:
                self._table = None
                self.finished += done
            if status == K.DONE:
                spent = time.perf_counter() - t0
                if spent < BATCH_SECONDS / 2 and done == self._batch:
                    self._batch *= 2
                elif spent > 2 * BATCH_SECONDS and self._batch > 1:
                    self._batch //= 2
                return None
            if not self._grow(int(self.ctr[K.NEED])):
                return "memory"
            if done:
                return None

    def run(self, iterations: int):
        """``iterations`` more iterations (no memory limit is reached silently: raises MemoryError)."""
        self.iteration_limit = self.iteration + iterations
        while self.iteration < self.iteration_limit:
            if self.iterate() == "memory":
                raise MemoryError(f"the MCCFR tables would pass max_bytes={self.max_bytes}")

    #: :meth:`finish_seconds` is arithmetic between samples: the driver may ask it after every batch
    finish_poll_seconds = 0.0

    def _costs(self) -> tuple[float, float]:
        """(seconds, JSON bytes) an information state's policy-file entry
        takes, measured on :data:`FINISH_SAMPLE` entries spread over the
        table, each history replayed from the root; measured again each
        time the table has doubled."""
        ne = self.num_infostates
        if ne < 64:
            return 0.0, 0.0
        if self._cost_at and ne < 2 * self._cost_at:
            return self._cost
        picks = np.linspace(0, ne - 1, min(FINISH_SAMPLE, ne)).astype(np.int64)
        t0 = time.perf_counter()
        strings = [self._replayed_string(int(e)) for e in picks]
        size = len(json.dumps(dict(zip(strings, (self._file_entry(int(e)) for e in picks)))))
        self._cost = ((time.perf_counter() - t0) / len(picks), size / len(picks))
        self._cost_at = ne
        return self._cost

    def finish_seconds(self) -> float:
        """About how long making the strings and writing the policy file take:
        the sampled seconds an entry (:meth:`_costs`) times the entries,
        times :data:`FINISH_FACTOR`."""
        return FINISH_FACTOR * self._costs()[0] * self.num_infostates

    def finish_bytes(self) -> float:
        """About the most memory writing the policy file takes: its sampled
        JSON bytes times :data:`WRITE_MEMORY_FACTOR`."""
        return WRITE_MEMORY_FACTOR * self._costs()[1] * self.num_infostates

    # -------------------------------------------------------------- results
    @property
    def table(self) -> dict:
        """{information-state string: [legal actions, regrets, average weights, player]}
        (the shape of :attr:`kibitz.solvers.mccfr.MCCFR.table`), made from the
        arrays on first use after an iteration."""
        if self._table is None:
            strings = self.strings()
            table = {}
            for e, key in enumerate(strings):
                lo, k = int(self.e_start[e]), int(self.e_n[e])
                table[key] = [self.s_action[lo:lo + k].tolist(), self.regret[lo:lo + k].tolist(),
                              self.avg[lo:lo + k].tolist(), int(self.e_player[e])]
            if len(table) != len(strings):
                raise RuntimeError(f"{len(strings) - len(table)} information-state strings met twice: "
                                   "the game's compiled tokens do not follow its strings")
            self._table = table
        return self._table

    def strings(self) -> list[str]:
        """The information-state string of each entry, from its history
        replayed through the game's Python rules (histories sorted, so that
        one shares the moves of the previous one's path)."""
        ne = self.num_infostates
        paths = [tuple(self.hist[int(self.e_hist[e]):int(self.e_hist[e]) + int(self.e_hlen[e])].tolist())
                 for e in range(ne)]
        order = sorted(range(ne), key=paths.__getitem__)
        string_from = self.game.make_py_observer(
            pyspiel.IIGObservationType(perfect_recall=True)).string_from
        state = self.game.new_initial_state()
        snaps = [state.snapshot()]  # snaps[d]: the position after the first d moves of `current`
        current: tuple = ()
        out = [None] * ne
        for e in order:
            path = paths[e]
            shared = 0
            for x, y in zip(current, path):
                if x != y:
                    break
                shared += 1
            del snaps[shared + 1:]
            state.restore(snaps[shared])
            snaps[shared] = state.snapshot()
            for a in path[shared:]:
                state._apply_action(a)
                snaps.append(state.snapshot())
            current = path
            out[e] = string_from(state, int(self.e_player[e]))
        return out

    def _replayed_string(self, e: int) -> str:
        """Entry ``e``'s information-state string, its history replayed from the root."""
        state = self.game.new_initial_state()
        lo = int(self.e_hist[e])
        for a in self.hist[lo:lo + int(self.e_hlen[e])].tolist():
            state._apply_action(a)
        return state.information_state_string(int(self.e_player[e]))

    def _file_entry(self, e: int) -> dict:
        """Entry ``e``'s policy-file entry: its average strategy (uniform before any weight)."""
        lo, k = int(self.e_start[e]), int(self.e_n[e])
        w = self.avg[lo:lo + k]
        total = w.sum()
        probs = (w / total).tolist() if total > 0.0 else [1.0 / k] * k
        return {"player": int(self.e_player[e]), "actions": self.s_action[lo:lo + k].tolist(), "probs": probs}

    def file_entries(self) -> dict[str, dict]:
        """{information-state string: policy-file entry} of every entry, made
        from the arrays (without :attr:`table`'s lists)."""
        return {key: self._file_entry(e) for e, key in enumerate(self.strings())}

    def average_policy(self) -> dict[str, dict[int, float]]:
        """{information-state string: {action: probability}} for the states visited."""
        out = {}
        for key, (legal, _, avg, _) in self.table.items():
            total = sum(avg)
            out[key] = ({a: w / total for a, w in zip(legal, avg)} if total > 0.0
                        else {a: 1.0 / len(legal) for a in legal})
        return out

    # -------------------------------------------------------------- checkpoints
    def state_dict(self) -> dict[str, np.ndarray]:
        """The checkpoint: the settings and counters as compressed JSON, the
        arrays cut to what they hold, and the generator's words."""
        ne, ns, nh = (int(self.ctr[i]) for i in (K.NE, K.NS, K.NH))
        used = {"e_key": ne, "e_player": ne, "e_start": ne, "e_n": ne, "e_hist": ne, "e_hlen": ne,
                "s_action": ns, "regret": ns, "avg": ns, "hist": nh}
        head = {"backend": "compiled", "sampling": self.sampling, "epsilon": self.epsilon,
                "fallback": self.fallback, "ctr": self.ctr.tolist(), "batch": self._batch}
        raw = gzip.compress(json.dumps(head).encode("utf-8"), compresslevel=1, mtime=0)
        arrays = {f"cmccfr_{name}": getattr(self, name)[:n] for name, n in used.items()}
        return {"cmccfr": np.frombuffer(raw, dtype=np.uint8), "cmccfr_rng": self.rng.copy(), **arrays}

    def load_state_dict(self, arrays: dict) -> None:
        if "cmccfr" not in arrays:
            raise ValueError("not a checkpoint of the compiled MCCFR (made by the Python MCCFR?)")
        head = json.loads(gunzip(arrays["cmccfr"].tobytes(), "the MCCFR state").decode("utf-8"))
        if head.get("sampling") != self.sampling:
            raise ValueError(f"checkpoint is for sampling {head.get('sampling')!r}, not {self.sampling!r}")
        ctr = np.asarray(head["ctr"], dtype=np.int64)
        ne, ns, nh = (int(ctr[i]) for i in (K.NE, K.NS, K.NH))
        got = {name: arrays[f"cmccfr_{name}"] for name in ARRAYS}
        for name, a in got.items():
            size = nh if name == "hist" else ne if name.startswith("e_") else ns
            if len(a) != size:
                raise ValueError(f"the checkpoint's {name} holds {len(a)} values, its counters say {size}")
        self._allocate(_power_of_two(max(START_ENTRIES, 2 * ne)), slots=_power_of_two(max(1024, 2 * ns)),
                       hist=_power_of_two(max(1024, 2 * nh)))
        for name, a in got.items():
            getattr(self, name)[:len(a)] = a
        self.t_key, self.t_entry, self.e_tpos = K.rehash(self.e_key, ne, len(self.t_key))
        self.ctr = ctr
        self.rng = np.asarray(arrays["cmccfr_rng"], dtype=np.uint64).copy()
        self.epsilon = float(head["epsilon"])
        self.fallback = head["fallback"]
        self._batch = int(head.get("batch", 1))
        self._table = None
        self._cost, self._cost_at = (0.0, 0.0), 0


def _power_of_two(n: int) -> int:
    return 1 << max(1, int(n - 1).bit_length())
