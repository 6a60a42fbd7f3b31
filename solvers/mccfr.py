"""Monte Carlo counterfactual regret minimization over game states.

Lanctot, Waugh, Zinkevich and Bowling, "Monte Carlo Sampling for Regret
Minimization in Extensive Games", NIPS 2009; Lanctot's PhD thesis (2013),
chapter 4. The game is walked through the public pyspiel API (no compiled
tree), so it works for any number of players and for games far too large to
enumerate; only the information states met are stored.

One *iteration* is one traversal per player (the *traverser*):

* **external sampling** (``"es"``): chance and the other players sample one
  action (the others from their current strategy); every action of the
  traverser is walked. At a traverser's information set ``I`` with sampled
  counterfactual action values ``v(a)`` and current strategy ``sigma``:
  ``regret[I][a] += v(a) - sum_b sigma(b) v(b)``. The average strategy is
  updated at the nodes of player ``(traverser + 1) mod n`` with ``sigma``
  itself ("simple" averaging: those nodes are reached on-policy).
* **outcome sampling** (``"os"``): one trajectory per traversal; the
  traverser samples from ``epsilon * uniform + (1 - epsilon) * sigma``, the
  others and chance on-policy. With ``q`` the probability that the
  trajectory was sampled, ``pi_o`` the other players' reach, ``u`` the
  traverser's return and ``t`` the strategy probability of the rest of the
  trajectory after the sampled action ``a*``, ``w = u * pi_o / q`` and
  ``regret[I][a] += w * t * ((a == a*) - sigma(a*))``. The average strategy is
  stochastically weighted at the traverser's nodes:
  ``avg[I][a] += pi_i * sigma(a) / q_h``.

The current strategy is regret matching: ``sigma(a)`` proportional to the
positive part of ``regret[I][a]``, uniform when none is positive. Tables are
keyed by the acting player's information-state string; each entry holds the
legal actions, the cumulative regrets and the cumulative average-strategy
weights. Moves with a single legal action are applied without a table entry
(they have no regret), so the policy holds only real decisions.

The average policy covers the information states visited. What the policy
does elsewhere is explicit: ``fallback`` is ``"uniform"`` (every legal move
alike) or the spec of an agent (``"heuristic"``, ``"random"``, ...) that plays
those states; it is stored with the policy. The solver only records it:
:class:`PolicyPlayer` is handed the agents that play the unseen states.

External sampling walks every move of the traverser, so the cost of one
iteration grows with the product of the traverser's branching along a path:
astronomically many states in most games at their default sizes.
:func:`estimate_es_states` estimates it before a run (Knuth's estimator of
a tree's size on sampled paths), so that a caller can refuse what external
sampling cannot afford. An iteration can be abandoned part-way
(:meth:`MCCFR.iterate` with ``should_stop``): its updates are undone and the
generator put back, so that the solver is exactly where the previous
iteration left it and a checkpoint taken then resumes exactly.

Randomness is passed in: a ``numpy.random.Generator`` seeds the inner
Mersenne Twister (``random.Random``, one C call per draw) when the solver is
made, so the same seed gives the same tables; the inner generator's state is
part of a checkpoint, so a resumed run continues the same sequence.
"""

from __future__ import annotations

import gzip
import itertools
import json
import math
import random
import sys
import time

import numpy as np
import pyspiel

from kibitz.solvers._direct import direct_rules
from kibitz.games.chance import draw, sample_chance as _sample_chance
from kibitz.solvers._io import gunzip

_TERMINAL = int(pyspiel.PlayerId.TERMINAL)
_CHANCE = int(pyspiel.PlayerId.CHANCE)

#: sampling schemes
SAMPLINGS = ("es", "os")
#: share of forced decisions above which legal actions are asked before the key
FORCED_SHARE = 0.2
#: an external-sampling iteration is undone when abandoned if the last one
#: walked at least this many decisions (shorter ones simply finish)
JOURNAL_DECISIONS = 1000
#: decisions between two calls of ``should_stop`` inside an iteration (a
#: decision costs tens to hundreds of microseconds through the pyspiel API)
STOP_POLL = 64
#: sampled paths per traverser of :func:`estimate_es_states`
ES_PROBES = 64
#: table entries whose policy-file JSON is timed by :meth:`MCCFR.finish_seconds`,
#: and the measured ratio of writing the checkpoint and the policy file to it
FINISH_SAMPLE = 256
FINISH_FACTOR = 1.5
#: the most decision nodes an external-sampling iteration may walk by
#: :func:`estimate_es_states` for ``kibitz solve`` to run it (seconds an
#: iteration at this machine's rates of tens of thousands of nodes a second)
ES_MAX_STATES = 200_000
#: the most decision nodes an external-sampling iteration may walk (by the
#: estimate) for ``kibitz solve`` to run it compiled: a compiled iteration is
#: not stopped part-way, and walks millions of nodes a second
ES_COMPILED_MAX_STATES = 20_000


class IterationAbandoned(Exception):
    """Raised inside an iteration when ``should_stop`` answers; carries its answer."""

    def __init__(self, why):
        super().__init__(why)
        self.why = why


def _knuth(game, rand, probes: int, branching, give_up_above: float, whole_tree: bool) -> float:
    """Knuth's estimate of the size of a traversal ("Estimating the efficiency
    of backtrack programs", Math. Comp. 1975): along a sampled path each node
    counts the product of the numbers of moves walked at the nodes above it,
    which is how many copies of it the traversal meets; the mean over
    ``probes`` paths is an unbiased estimate of the number of nodes.
    ``branching(player)`` says whether the traversal walks every move of
    that player (then the path draws one uniformly); the others' moves are
    drawn uniformly too, and chance by its probabilities, except that with
    ``whole_tree`` chance branches (uniformly drawn) and every node counts,
    not only decisions. Stops early, with the mean so far, above ``give_up_above``."""
    summed = 0.0
    for done in range(1, probes + 1):
        state = game.new_initial_state()
        weight = 1.0
        while True:
            if whole_tree:
                summed += weight
            if state.is_terminal():
                break
            if state.is_chance_node():
                if whole_tree:
                    outcomes = state.chance_outcomes()
                    weight *= len(outcomes)
                    state.apply_action(outcomes[int(rand() * len(outcomes))][0])
                else:
                    state.apply_action(_sample_chance(state, rand))
                continue
            if not whole_tree:
                summed += weight
            legal = state.legal_actions()
            if branching(state.current_player()):
                weight *= len(legal)
            state.apply_action(legal[int(rand() * len(legal))])
        if summed / done > give_up_above:
            return summed / done
    return summed / probes


def estimate_es_states(game, seed: int = 0, probes: int = ES_PROBES, give_up_above: float = math.inf) -> float:
    """The expected number of decision nodes that one external-sampling
    iteration (one traversal per player) walks, estimated by Knuth's
    estimator on ``probes`` sampled paths per traverser (see :func:`_knuth`):
    the traverser's moves branch, chance and the others are sampled, the
    others uniformly, as every regret-matching strategy plays before its
    first update. Draws come from a generator of their own (``seed``), so an
    estimate never changes a solver's stream. Probing stops early, with the
    estimate so far, once it exceeds ``give_up_above``."""
    rand = random.Random(int(seed)).random
    total = 0.0
    for traverser in range(game.num_players()):
        total += _knuth(game, rand, probes, lambda p, t=traverser: p == t, give_up_above - total, False)
        if total > give_up_above:
            break
    return total


def estimate_tree_nodes(game, seed: int = 0, probes: int = ES_PROBES, give_up_above: float = math.inf) -> float:
    """The number of nodes of the whole game tree (chance and terminal
    nodes included), by Knuth's estimator on ``probes`` paths (:func:`_knuth`)."""
    return _knuth(game, random.Random(int(seed)).random, probes, lambda p: True, give_up_above, True)


def regret_matching(regrets):
    """The strategy in proportion to the positive regrets (uniform if none)."""
    pos = [r if r > 0.0 else 0.0 for r in regrets]
    total = sum(pos)
    if total > 0.0:
        return [x / total for x in pos]
    n = len(regrets)
    return [1.0 / n] * n


class MCCFR:
    """External- or outcome-sampling MCCFR with tabular regrets.

    Args:
      game: a sequential ``pyspiel.Game`` with information-state strings.
      rng: ``numpy.random.Generator`` (seeds every draw of the solver).
      sampling: ``"es"`` (external) or ``"os"`` (outcome).
      epsilon: outcome sampling's exploration of the traverser (0 < eps <= 1).
      fallback: behaviour on information states the policy never visited:
        ``"uniform"`` or an agent spec; recorded with the policy.
    """

    #: the solve driver may hand :meth:`iterate` a stop test (solvers/driver.py)
    abandons_iterations = True

    def __init__(self, game, rng: np.random.Generator, sampling: str = "es", epsilon: float = 0.6,
                 fallback: str = "uniform"):
        if sampling not in SAMPLINGS:
            raise ValueError(f"sampling must be one of {', '.join(SAMPLINGS)}; got {sampling!r}")
        if not 0.0 < epsilon <= 1.0:
            raise ValueError(f"epsilon must be in (0, 1]; got {epsilon}")
        gtype = game.get_type()
        if gtype.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
            raise ValueError("MCCFR needs a sequential game")
        if not gtype.provides_information_state_string:
            raise ValueError(f"game {gtype.short_name!r} has no information-state strings")
        self.game = game
        self.sampling = sampling
        self.epsilon = float(epsilon)
        self.fallback = fallback
        self.num_players = game.num_players()
        #: information-state string -> [legal actions, regrets, average weights, player]
        self.table: dict[str, list] = {}
        #: information states with a single legal action -> that action (no entry in the table)
        self._forced: dict[str, int] = {}
        #: decision nodes walked, and how many of them had a single legal action
        self.decisions = self.forced_decisions = 0
        # Where many decisions are forced, asking for the legal actions first
        # skips their information-state strings; elsewhere the string comes
        # first and the legal actions are asked only for new information
        # states. Both orders give the same results (no random draw differs).
        self._legal_first = False
        #: iterations done
        self.iteration = 0
        #: outcome-sampling trajectories whose sampling probability underflowed to 0 (not used)
        self.underflows = 0
        # decisions of the last iteration (None: none yet in this process);
        # the journal of the iteration in progress ({key: (regrets, avg)
        # before it, or None for an entry it made}) and its stop test
        self._last_decisions = None
        self._undo = None
        self._should_stop = None
        self._walked = 0
        #: decisions walked by the last iteration abandoned (0: none was), and
        #: the iterations this object finished (a restored count not included)
        self.abandoned_decisions = 0
        self.finished = 0
        self._random = random.Random(int(rng.integers(2**63)))
        need = 4 * game.max_game_length() + 100
        if sys.getrecursionlimit() < need:
            sys.setrecursionlimit(need)

    def reseed(self, seed: int) -> None:
        """Draws from now on from a generator seeded with ``seed`` (the Ray
        actors of solvers/mccfr_ray.py reseed per batch)."""
        self._random = random.Random(int(seed))

    # -------------------------------------------------------------- iterate
    def iterate(self, should_stop=None):
        """One iteration: one traversal per player. Returns None when it ends.

        ``should_stop()``, when given, is asked every :data:`STOP_POLL`
        decisions of an external-sampling iteration that may be long (the
        last one walked :data:`JOURNAL_DECISIONS` decisions or more, or none
        ran yet in this process); a truthy answer abandons the iteration:
        its updates are undone, the generator is put back, and the answer is
        returned. Any exception raised inside such an iteration (a
        MemoryError, a KeyboardInterrupt) undoes it the same way before it
        propagates. Outcome-sampling iterations (one path per player) and
        short ones always finish.
        """
        self._legal_first = self.forced_decisions > FORCED_SHARE * self.decisions
        journal = (should_stop is not None and self.sampling == "es"
                   and (self._last_decisions is None or self._last_decisions >= JOURNAL_DECISIONS))
        start = self.decisions
        if journal:
            saved = (self._random.getstate(), self.decisions, self.forced_decisions)
            self._undo = {}
            self._should_stop = should_stop
        try:
            for player in range(self.num_players):
                state = self.game.new_initial_state()
                if self.sampling == "es":
                    self._external(state, player)
                else:
                    self._outcome(state, player)
        except BaseException as e:
            if not journal:
                raise
            self._roll_back(saved)
            self.abandoned_decisions = self._walked
            if isinstance(e, IterationAbandoned):
                return e.why
            raise
        finally:
            self._undo = None
            self._should_stop = None
        self._last_decisions = self.decisions - start
        self.iteration += 1
        self.finished += 1
        return None

    def finish_seconds(self) -> float:
        """About how long writing this table's checkpoint and policy file
        takes: the policy-file entries of about :data:`FINISH_SAMPLE` table
        entries spread over it are built and turned into JSON, timed, and
        scaled to the whole table and by :data:`FINISH_FACTOR` (the
        checkpoint's binary arrays beside it; measured on the four games at
        their default sizes). The solve driver stops a timed run that much
        earlier."""
        n = len(self.table)
        if not n:
            return 0.0
        t0 = time.perf_counter()
        sample = list(itertools.islice(self.table.items(), 0, None, max(1, n // FINISH_SAMPLE)))
        json.dumps({key: _file_entry(entry) for key, entry in sample})
        return FINISH_FACTOR * (time.perf_counter() - t0) * n / len(sample)

    def _roll_back(self, saved):
        """Undoes the updates of the iteration in progress (see :meth:`iterate`)."""
        for key, before in self._undo.items():
            if before is None:
                del self.table[key]
            else:
                entry = self.table[key]
                entry[1][:] = before[0]
                entry[2][:] = before[1]
        state, decisions, self.forced_decisions = saved
        self._walked = self.decisions - decisions
        self.decisions = decisions
        self._random.setstate(state)

    def run(self, iterations: int):
        """``iterations`` more iterations."""
        for _ in range(iterations):
            self.iterate()

    def _new_entry(self, state, key, player):
        """The table entry for an information state met for the first time, or,
        for a forced move (one legal action), None after applying it."""
        forced = self._forced.get(key)
        if forced is None:
            legal = state.legal_actions()
            if len(legal) > 1:
                entry = self.table[key] = [legal, [0.0] * len(legal), [0.0] * len(legal), player]
                return entry
            forced = self._forced[key] = legal[0]
        self.forced_decisions += 1
        state.apply_action(forced)
        return None

    def _external(self, state, traverser):
        """The traverser's sampled value of ``state`` (which it may modify).

        Chance and the other players' moves are applied in place in a loop;
        only the traverser's nodes branch (a clone for every action but the
        last, which reuses ``state``).
        """
        table = self.table
        rand = self._random.random
        averaging = (traverser + 1) % self.num_players
        direct = direct_rules(state)
        apply = state._apply_action if direct else state.apply_action
        undo = self._undo
        while True:
            player = state.current_player()
            if player == _CHANCE:
                apply(_sample_chance(state, rand))
                continue
            if player == _TERMINAL:
                return state.returns()[traverser]
            self.decisions += 1
            if undo is not None and not self.decisions % STOP_POLL:
                why = self._should_stop()
                if why:
                    raise IterationAbandoned(why)
            made = False
            if self._legal_first:
                legal = state._legal_actions(player) if direct else state.legal_actions()
                if len(legal) == 1:
                    self.forced_decisions += 1
                    apply(legal[0])
                    continue
                key = state.information_state_string(player)
                entry = table.get(key)
                if entry is None:
                    entry = table[key] = [legal, [0.0] * len(legal), [0.0] * len(legal), player]
                    made = True
            else:
                key = state.information_state_string(player)
                entry = table.get(key)
                if entry is None:
                    entry = self._new_entry(state, key, player)
                    if entry is None:
                        continue
                    made = True
            legal, regrets, avg, _ = entry
            if undo is not None and key not in undo:
                undo[key] = None if made else (regrets[:], avg[:])
            if player == traverser:
                break
            total = 0.0
            for r in regrets:
                if r > 0.0:
                    total += r
            if total > 0.0:
                choice = draw(enumerate(regrets), rand() * total)
                if player == averaging:
                    for j, r in enumerate(regrets):
                        if r > 0.0:
                            avg[j] += r / total
            else:
                n = len(legal)
                choice = int(rand() * n)
                if player == averaging:
                    w = 1.0 / n
                    for j in range(n):
                        avg[j] += w
            apply(legal[choice])
        sigma = regret_matching(regrets)
        last = len(legal) - 1
        values = []
        for j, action in enumerate(legal):
            child = state.clone() if j < last else state
            if direct:
                child._apply_action(action)
            else:
                child.apply_action(action)
            values.append(self._external(child, traverser))
        value = 0.0
        for p, v in zip(sigma, values):
            value += p * v
        for j, v in enumerate(values):
            regrets[j] += v - value
        return value

    def _outcome(self, state, traverser):
        """One sampled trajectory from ``state`` (modified in place), then the updates."""
        table = self.table
        rand = self._random.random
        eps = self.epsilon
        my_reach = opp_reach = sample_reach = 1.0
        visited = []  # traverser's nodes: (regrets, avg, sigma, choice, my_reach, opp_reach, sample_reach)
        tails = []  # sigma(choice) at every player node, in order
        while True:
            player = state.current_player()
            if player == _CHANCE:
                state.apply_action(_sample_chance(state, rand))
                continue
            if player == _TERMINAL:
                break
            self.decisions += 1
            if self._legal_first:
                legal = state.legal_actions()
                if len(legal) == 1:
                    self.forced_decisions += 1
                    state.apply_action(legal[0])
                    continue
                key = state.information_state_string(player)
                entry = table.get(key)
                if entry is None:
                    entry = table[key] = [legal, [0.0] * len(legal), [0.0] * len(legal), player]
            else:
                key = state.information_state_string(player)
                entry = table.get(key)
                if entry is None:
                    entry = self._new_entry(state, key, player)
                    if entry is None:
                        continue
            legal, regrets, avg, _ = entry
            sigma = regret_matching(regrets)
            if player == traverser:
                n = len(legal)
                behaviour = [eps / n + (1.0 - eps) * p for p in sigma]
                choice = draw(enumerate(behaviour), rand())
                visited.append((regrets, avg, sigma, choice, my_reach, opp_reach, sample_reach,
                                len(tails)))
                my_reach *= sigma[choice]
                sample_reach *= behaviour[choice]
            else:
                choice = draw(enumerate(sigma), rand())
                opp_reach *= sigma[choice]
                sample_reach *= sigma[choice]
            tails.append(sigma[choice])
            state.apply_action(legal[choice])
        if not sample_reach > 0.0:  # underflowed (hundreds of decisions among hundreds of moves): no update
            self.underflows += 1
            return
        u = state.returns()[traverser] / sample_reach
        # suffix products of the strategy probabilities along the trajectory
        suffix = [1.0] * (len(tails) + 1)
        for k in range(len(tails) - 1, -1, -1):
            suffix[k] = suffix[k + 1] * tails[k]
        for regrets, avg, sigma, choice, mine, opp, q, k in visited:
            tail = suffix[k + 1]
            w = u * opp * tail
            taken = sigma[choice]
            for j in range(len(regrets)):
                regrets[j] += w * ((1.0 if j == choice else 0.0) - taken)
            scale = mine / q
            for j, p in enumerate(sigma):
                avg[j] += scale * p

    # -------------------------------------------------------------- results
    def average_policy(self) -> dict[str, dict[int, float]]:
        """{information-state string: {action: probability}} for the states visited."""
        out = {}
        for key, (legal, _, avg, _) in self.table.items():
            total = sum(avg)
            if total > 0.0:
                out[key] = {a: w / total for a, w in zip(legal, avg)}
            else:
                out[key] = {a: 1.0 / len(legal) for a in legal}
        return out

    def tabular_policy(self):
        """The average policy as an OpenSpiel ``TabularPolicy`` (uniform where unvisited).

        Enumerates every state of the game: for small games only (NashConv).
        """
        from open_spiel.python import policy as os_policy
        tab = os_policy.TabularPolicy(self.game)
        avg = self.average_policy()
        for key, row in tab.state_lookup.items():
            probs = avg.get(key)
            if probs is None:
                continue
            arr = tab.action_probability_array[row]
            arr[:] = 0.0
            for a, p in probs.items():
                arr[a] = p
        return tab

    # -------------------------------------------------------------- checkpoints
    def checkpoint(self) -> dict:
        """Everything needed to resume: tables, iteration count, generator state."""
        version, words, gauss = self._random.getstate()
        return {"sampling": self.sampling, "epsilon": self.epsilon, "fallback": self.fallback,
                "iteration": self.iteration, "table": self.table,
                "random": [version, list(words), gauss]}

    def restore(self, data: dict):
        if data["sampling"] != self.sampling:
            raise ValueError(f"checkpoint is for sampling {data['sampling']!r}, not {self.sampling!r}")
        self.epsilon = data["epsilon"]
        self.fallback = data["fallback"]
        self.iteration = data["iteration"]
        self.table = data["table"]
        self._last_decisions = None
        version, words, gauss = data["random"]
        self._random.setstate((version, tuple(words), gauss))

    def state_dict(self) -> dict:
        """The checkpoint as arrays, for ``numpy.savez``: ``mccfr`` the
        gzip-compressed JSON of the settings, the generator and the
        information-state keys; the tables' numbers as flat binary arrays in
        key order (``mccfr_sizes`` the number of legal actions of each key,
        ``mccfr_players``, ``mccfr_legal``, ``mccfr_regrets``, ``mccfr_avg``),
        which write and read far faster than their JSON (Doubt and Bet at its
        default size has hundreds of moves at a decision)."""
        head = self.checkpoint()
        table = head.pop("table")
        head["keys"] = list(table)
        entries = table.values()
        chain = itertools.chain.from_iterable
        raw = gzip.compress(json.dumps(head, separators=(",", ":")).encode("utf-8"), compresslevel=1, mtime=0)
        return {"mccfr": np.frombuffer(raw, dtype=np.uint8),
                "mccfr_sizes": np.fromiter((len(e[0]) for e in entries), dtype=np.int64, count=len(table)),
                "mccfr_players": np.fromiter((e[3] for e in entries), dtype=np.int64, count=len(table)),
                "mccfr_legal": np.fromiter(chain(e[0] for e in entries), dtype=np.int64),
                "mccfr_regrets": np.fromiter(chain(e[1] for e in entries), dtype=np.float64),
                "mccfr_avg": np.fromiter(chain(e[2] for e in entries), dtype=np.float64)}

    def load_state_dict(self, arrays: dict):
        data = json.loads(gunzip(arrays["mccfr"].tobytes(), "the MCCFR state").decode("utf-8"))
        if "table" not in data:  # the tables in binary arrays (a checkpoint of JSON alone holds them in it)
            keys = data.pop("keys")
            sizes = arrays["mccfr_sizes"].tolist()
            if len(sizes) != len(keys) or sum(sizes) != arrays["mccfr_legal"].size:
                raise ValueError(f"{len(keys)} information states, {len(sizes)} sizes and "
                                 f"{arrays['mccfr_legal'].size} actions do not match")
            legal, regrets, avg = (arrays[k].tolist() for k in ("mccfr_legal", "mccfr_regrets", "mccfr_avg"))
            if len(regrets) != len(legal) or len(avg) != len(legal):
                raise ValueError("the regret and average arrays do not match the actions")
            table, at = {}, 0
            for key, n, player in zip(keys, sizes, arrays["mccfr_players"].tolist()):
                table[key] = [legal[at:at + n], regrets[at:at + n], avg[at:at + n], player]
                at += n
            data["table"] = table
        self.restore(data)


def _file_entry(entry) -> dict:
    """The policy-file entry of a table entry: its average strategy (uniform
    before any weight)."""
    legal, _, weights, player = entry
    total = sum(weights)
    probs = [w / total for w in weights] if total > 0.0 else [1.0 / len(legal)] * len(legal)
    return {"player": int(player), "actions": [int(a) for a in legal], "probs": probs}


class PolicyPlayer:
    """Plays a tabular average policy, with an explicit fallback on unseen states.

    ``policy`` maps information-state strings to {action: probability};
    ``fallback`` is ``"uniform"`` (every legal move alike) or a function
    ``fallback(player)`` that returns the agent playing ``player``'s unseen
    states (anything with ``action_probabilities(state)``), called once per
    seat: the caller builds it, e.g. from the file's agent spec with
    ``kibitz.agents.make_agent``. ``last_source`` says which one answered.
    """

    def __init__(self, game, policy: dict, fallback="uniform"):
        if fallback != "uniform" and not callable(fallback):
            raise ValueError(f"fallback must be 'uniform' or a function of the player, not {fallback!r}")
        self.game = game
        self.policy = policy
        self.fallback = fallback
        self._agents = {}
        self.last_source = None

    def action_probabilities(self, state, player: int | None = None) -> dict[int, float]:
        player = state.current_player() if player is None else player
        probs = self.policy.get(state.information_state_string(player))
        if probs is not None:
            self.last_source = "policy"
            return dict(probs)
        self.last_source = "fallback"
        if self.fallback == "uniform":
            legal = state.legal_actions()
            return {a: 1.0 / len(legal) for a in legal}
        agent = self._agents.get(player)
        if agent is None:
            agent = self._agents[player] = self.fallback(player)
        return agent.action_probabilities(state)


# ---------------------------------------------------------------------- policy files
#: ``kibitz solve --algorithm`` names -> sampling
ALGORITHMS = {"mccfr-es": "es", "mccfr-os": "os"}
#: node budget for compiling the game to fill and evaluate the policy
EVAL_MAX_NODES = 20_000


#: the MCCFR implementations: ``auto`` picks ``compiled`` (solvers/mccfr_compiled.py)
#: on a game with compiled rules, else ``python`` (this module)
BACKENDS = ("auto", "compiled", "python")


def make_solver(game, seed: int, algorithm: str, *, epsilon: float = 0.6, fallback: str = "uniform",
                backend: str = "auto", max_bytes: float | None = None, es_states: float | None = None):
    """``(solver, backend)``: the MCCFR solver of ``kibitz solve -a
    ALGORITHM`` (``mccfr-es`` or ``mccfr-os``) for ``game``, seeded with
    ``seed``, and the backend it is (``compiled`` or ``python``; see
    :data:`BACKENDS`). ``max_bytes`` bounds the compiled solver's tables.

    ``auto`` runs external sampling compiled only when ``es_states`` (the
    decision nodes an iteration walks, :func:`estimate_es_states`) is at
    most :data:`ES_COMPILED_MAX_STATES`: a compiled iteration runs to its
    end, where the Python one stops within 64 nodes on ``--time`` or Ctrl-C."""
    from kibitz.solvers import mccfr_compiled

    if backend not in BACKENDS:
        raise ValueError(f"backend={backend!r}; allowed: {', '.join(BACKENDS)}")
    sampling = ALGORITHMS[algorithm]
    if backend == "auto":
        short = sampling == "os" or (es_states is not None and es_states <= ES_COMPILED_MAX_STATES)
        backend = "compiled" if short and mccfr_compiled.compiled(game) else "python"
    rng = np.random.default_rng(seed)
    if backend == "compiled":
        return mccfr_compiled.CompiledMCCFR(game, rng, sampling, epsilon=epsilon, fallback=fallback,
                                            max_bytes=max_bytes), backend
    return MCCFR(game, rng, sampling, epsilon=epsilon, fallback=fallback), backend


def policy_document(solver, *, algorithm: str, seconds: float, tree=None) -> dict:
    """The policy-file document (docs/formats/policy-file.md) of ``solver``'s average policy.

    Beside the version-1 keys it records ``fallback`` (what the policy plays
    on information states it does not list) and ``coverage``. When ``tree``
    (the compiled game) is given and the fallback is ``"uniform"``, the
    information states MCCFR never met (forced moves included) are written
    with the uniform policy, which is what the fallback plays there, so
    that the file lists every information state and ``solvers.load_policy``
    reads it; ``coverage`` counts both kinds, and ``nash_conv`` and
    ``expected_returns`` are exact. With an agent as fallback the same holds
    when every information state MCCFR never met is a forced move (one
    legal action: every policy plays it); otherwise they are None (the
    tree's evaluation cannot run the agent) and only the visited states are
    written.
    """
    from kibitz.solvers import evaluate as ev
    from kibitz.solvers import policy_file

    if hasattr(solver, "file_entries"):  # the compiled solver makes them from its arrays
        entries = solver.file_entries()
    else:
        entries = {key: _file_entry(entry) for key, entry in solver.table.items()}
    visited = len(entries)
    filled = 0
    nash_conv = returns = None
    # With an agent as fallback the policy played on unseen information
    # states is that agent's, which the tree's evaluation cannot run: no
    # NashConv then (a uniform fill would measure another policy), unless
    # every unseen one is a forced move, where every policy plays alike.
    missing = [] if tree is None else [k for k, key in enumerate(tree.infoset_strings) if key not in entries]
    forced_only = tree is not None and all(
        int(tree.infoset_slots[k + 1]) - int(tree.infoset_slots[k]) == 1 for k in missing)
    if tree is not None and (solver.fallback == "uniform" or forced_only):
        slots = ev.policy_to_slots(tree, solver.average_policy(), default="uniform")
        nash_conv, _, returns = ev.nash_conv(tree, slots, details=True)
        for k in missing:
            key = tree.infoset_strings[k]
            lo, hi = int(tree.infoset_slots[k]), int(tree.infoset_slots[k + 1])
            entries[key] = {"player": int(tree.infoset_player[k]),
                            "actions": [int(a) for a in tree.slot_action[lo:hi]],
                            "probs": [1.0 / (hi - lo)] * (hi - lo)}
            filled += 1
    return {
        "format": policy_file.FORMAT,
        "format_version": policy_file.FORMAT_VERSION,
        "kibitz_version": policy_file.kibitz_version(),
        "game": str(solver.game),
        "num_players": solver.num_players,
        "algorithm": algorithm,
        "settings": {"sampling": solver.sampling, "epsilon": solver.epsilon if solver.sampling == "os" else None,
                     "averaging": "simple" if solver.sampling == "es" else "stochastically weighted"},
        "iterations": int(solver.iteration),
        "seconds": float(seconds),
        "nash_conv": None if nash_conv is None else float(nash_conv),
        "expected_returns": None if returns is None else [float(v) for v in returns],
        "tree": None if tree is None else {"nodes": int(tree.num_nodes), "infostates": int(tree.num_infosets)},
        "fallback": solver.fallback,
        "coverage": {"visited": visited, "filled_with_fallback": filled,
                     "complete": tree is not None and filled + visited == tree.num_infosets},
        "policy": entries,
    }

