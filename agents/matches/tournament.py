"""Bot tournaments: seat rotation, duplicate deals, statistics, ratings.

A tournament plays a list of agent specs against each other on one game.

Arrangements (which agent sits in which seat), see :func:`arrangements`:

* as many agents as seats: the cyclic rotations, so every agent plays every
  seat once per deal;
* more agents than seats: every combination of agents, each in all its
  cyclic rotations;
* fewer agents than seats: every arrangement in which each agent holds at
  least one seat.

Duplicate deals (see :class:`DealChance`): every arrangement of a deal is
played with the same chance stream, so luck cancels between agents. Game
number ``g`` is deal ``g // A``, arrangement ``g % A`` (``A`` arrangements),
so the results of game ``g`` depend only on the tournament seed, the specs
and ``g``: any number of worker processes gives the same records.

Per agent the tournament reports the games it played, its mean payoff with a
95% confidence interval (an agent in several seats of one game counts the
mean of those seats as one sample; the games of one deal share its cards,
so the standard error takes each deal's games as one cluster, and the
interval is Student t over the deals), its win rate
(the winners of a game, the seats with the highest return, share one win),
an OpenSkill Plackett-Luce rating updated game by game in game order, and a
per-seat breakdown. Every game is recorded (deal seed, seats, agent seeds,
every action with chance included, returns) so that it can be replayed
exactly.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import itertools
import json
import math
import multiprocessing
import os
import queue
import random
import signal
import time
from typing import Callable, Iterable

import numpy as np

from kibitz import games
from kibitz.agents.base import check_turn_based
from kibitz.agents.registry import make_agent
from kibitz.games.chance import draw
from kibitz.solvers.solve import quiet
from kibitz.solvers.stats import clustered_interval, clustered_mean, t95


# ---------------------------------------------------------------- arrangements
def arrangements(num_agents: int, num_seats: int) -> list[tuple[int, ...]]:
    """Seatings: ``arr[seat]`` is the index of the agent in that seat."""
    if num_agents < 1:
        raise ValueError("a tournament needs at least one agent")
    if num_agents >= num_seats:
        out = []
        for combo in itertools.combinations(range(num_agents), num_seats):
            for r in range(num_seats):
                out.append(tuple(combo[(s - r) % num_seats] for s in range(num_seats)))
        return out
    return [arr for arr in itertools.product(range(num_agents), repeat=num_seats)
            if len(set(arr)) == num_agents]


# ---------------------------------------------------------------- chance
class DealChance:
    """Chance outcomes for one deal, the same for every arrangement.

    Card draws come from a "deck": a shuffled sequence of outcomes (with
    repeats for repeated cards, e.g. 8 copies of each bill) fixed by the deal
    seed and the deck's number. A chance node continues the current deck
    when its probabilities are exactly those of the cards left in it (count
    left / cards left, over the same outcomes); it then takes the deck's next
    card. Failing that, a node whose probabilities are the deck's full
    composition again (a reshuffle, a new round) starts a new deck. If they
    are those of the deck with every count multiplied by an integer k (a
    first node cannot tell 1 of each bill from 8 of each), the deck is
    scaled: the cards already taken stay its prefix and the rest is shuffled
    afresh. Any other node (a die, a seating shuffle, another deck) starts a
    new deck from its probabilities: the smallest whole counts that give
    them. Given everything before it, the next card of a uniformly shuffled
    deck follows the counts left, so every node's outcome follows its
    ``chance_outcomes()`` exactly.

    A node whose probabilities are not ratios of small whole numbers (up to
    1000 cards) is drawn by inverse CDF from a uniform number fixed by the
    deal seed and the chance node's index (the number of chance nodes before
    it): exact too, and the same in every arrangement where the nodes line up.

    Shuffles use Python's ``random.Random`` seeded with a BLAKE2 hash of the
    deal seed and the deck's key: cheap to seed, the same in every process.
    """

    MAX_CARDS = 1000
    MAX_SCALE = 64
    TOL = 1e-9

    def __init__(self, seed_words: tuple[int, ...]):
        self._words = tuple(int(w) for w in seed_words)
        self._decks = 0
        self._deck: list[int] = []         # the deck's cards in order
        self._counts: dict[int, int] = {}  # the deck's composition (current scale)
        self._pos = 0                      # cards taken so far (a prefix of _deck)
        self._left: dict[int, int] = {}    # cards left, by outcome
        self._left_total = 0
        self._support = 0                  # outcomes with cards left
        self._index = 0

    def _random(self, *key) -> random.Random:
        digest = hashlib.blake2b(repr(self._words + key).encode(), digest_size=16).digest()
        return random.Random(int.from_bytes(digest, "little"))

    def _fits(self, counts: dict, total: int, actions, probs) -> bool:
        if total <= 0:
            return False
        tol = self.TOL
        for a, p in zip(actions, probs):
            if abs(counts.get(a, 0) / total - p) > tol:
                return False
        return True

    def _start(self, counts: dict, deck: list[int], pos: int) -> None:
        self._counts, self._deck, self._pos = counts, deck, pos
        taken: dict[int, int] = {}
        for a in deck[:pos]:
            taken[a] = taken.get(a, 0) + 1
        self._left = {a: c - taken.get(a, 0) for a, c in counts.items()}
        self._left_total = sum(self._left.values())
        self._support = sum(1 for c in self._left.values() if c > 0)

    def _take(self) -> int:
        card = self._deck[self._pos]
        self._pos += 1
        self._left[card] -= 1
        self._left_total -= 1
        if self._left[card] == 0:
            self._support -= 1
        return card

    def _shuffled(self, counts: dict, *key) -> list[int]:
        cards = [a for a in sorted(counts) for _ in range(counts[a])]
        self._random(*key).shuffle(cards)
        return cards

    @classmethod
    def _whole_counts(cls, probs):
        for total in range(len(probs), cls.MAX_CARDS + 1):
            counts = [p * total for p in probs]
            if all(abs(c - round(c)) <= 1e-6 and round(c) >= 1 for c in counts):
                return [int(round(c)) for c in counts]
        return None

    def __call__(self, outcomes) -> int:
        index = self._index
        self._index += 1
        actions = [int(a) for a, _ in outcomes]
        total_p = float(sum(p for _, p in outcomes))
        probs = [p / total_p for _, p in outcomes]
        if self._deck:
            # the deck's next card
            if len(actions) == self._support and self._fits(self._left, self._left_total, actions, probs):
                return self._take()
            full = sum(self._counts.values())
            if not (len(actions) == len(self._counts) and self._fits(self._counts, full, actions, probs)):
                # the same deck with k times the cards: keep the prefix, shuffle the rest
                for k in range(2, self.MAX_SCALE + 1):
                    left = {a: self._left[a] + (k - 1) * c for a, c in self._counts.items()}
                    support = sum(1 for c in left.values() if c > 0)
                    if support == len(actions) and self._fits(left, sum(left.values()), actions, probs):
                        rest = self._shuffled(left, 3, self._decks, k, self._pos)
                        counts = {a: k * c for a, c in self._counts.items()}
                        self._start(counts, self._deck[:self._pos] + rest, self._pos)
                        return self._take()
        if len(actions) == 1:
            return actions[0]
        counts = self._whole_counts(probs)
        if counts is not None:
            self._decks += 1
            composition = dict(zip(actions, counts))
            self._start(composition, self._shuffled(composition, 1, self._decks), 0)
            return self._take()
        return draw(zip(actions, probs), self._random(2, index).random())


# ---------------------------------------------------------------- one game
@dataclasses.dataclass(frozen=True)
class Plan:
    """Everything that determines the games of a tournament."""

    game: str
    specs: tuple[str, ...]
    seed: int
    num_seats: int
    #: the value function of the AIVAT corrections (:func:`value_function`); "none": no corrections
    value: str = "none"

    @property
    def arrangements(self):
        return arrangements(len(self.specs), self.num_seats)

    def deal_words(self, deal: int) -> tuple[int, ...]:
        return (self.seed, deal)

    def agent_seed(self, game_index: int, seat: int) -> int:
        ss = np.random.SeedSequence((self.seed, 1_000_003, game_index, seat))
        return int(ss.generate_state(1, dtype=np.uint32)[0])


_GAMES: dict = {}


def _load(game_string: str):
    if game_string not in _GAMES:
        from kibitz.games import load_game
        _GAMES[game_string] = load_game(game_string)
    return _GAMES[game_string]


def play_recorded(game, agents, chance: Callable, corrections=None) -> tuple[list[int], list[float]]:
    """Plays one game; returns (every action, chance included; returns).
    ``corrections`` (a :class:`kibitz.solvers.aivat.Corrections`) is given
    every chance node and every decision of an agent that reports its
    policy, and its ``finish(moves)`` (when it has one) at the end: the
    moves are the same with it and without."""
    state = game.new_initial_state()
    for a in agents:
        a.restart_at(state)
    moves = []
    while not state.is_terminal():
        player = state.current_player()
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            action = chance(outcomes)
            if corrections is not None:
                corrections.at_node(state, outcomes, action, chance=True)
        elif corrections is not None:
            action, policy = agents[player].step_and_policy(state)
            action = int(action)
            if policy is not None:
                corrections.at_node(state, policy, action, chance=False)
        else:
            action = int(agents[player].step(state))
        for i, a in enumerate(agents):  # as kibitz play does: every action, chance too
            if i != player:
                a.inform_action(state, player, action)
        moves.append(action)
        state.apply_action(action)
    if corrections is not None and hasattr(corrections, "finish"):  # deferred terms (solvers/aivat.py)
        corrections.finish(moves)
    return moves, [float(r) for r in state.returns()]


class GameFailed(RuntimeError):
    """An agent or the game raised during a tournament game."""


def play_one(plan: Plan, game_index: int) -> dict:
    """Plays game number ``game_index`` of ``plan``; returns its record."""
    game = _load(plan.game)
    arrs = plan.arrangements
    deal, arr_index = divmod(game_index, len(arrs))
    arr = arrs[arr_index]
    seeds = [plan.agent_seed(game_index, s) for s in range(plan.num_seats)]
    agents = [make_agent(plan.specs[a], game, s, seed=seeds[s]) for s, a in enumerate(arr)]
    corrections = None
    if plan.value != "none":
        from kibitz.solvers.aivat import Corrections
        corrections = Corrections(_seated_value(plan, arr, agents), plan.num_seats)
    try:
        moves, returns = play_recorded(game, agents, DealChance(plan.deal_words(deal)), corrections)
    except Exception as e:  # name the game, so that it can be replayed
        raise GameFailed(f"game {game_index} (deal {deal}, seats {', '.join(plan.specs[a] for a in arr)}) "
                         f"failed: {type(e).__name__}: {e}") from e
    return {
        "index": game_index,
        "game": plan.game,
        "deal": deal,
        "deal_seed": list(plan.deal_words(deal)),
        "arrangement": arr_index,
        "seats": [plan.specs[a] for a in arr],
        "seat_agents": list(arr),
        "agent_seeds": seeds,
        "moves": moves,
        "returns": returns,
        **({} if corrections is None else {"aivat": {
            "chance": [float(x) for x in corrections.chance],
            "action": [float(x) for x in corrections.action]}}),
    }


# ---------------------------------------------------------------- AIVAT's value functions
#: the value-function specs of ``--aivat`` -> what they are
VALUE_SPECS = {
    "none": "no AIVAT corrections",
    "zero": "V = 0: every term is zero (the plain payoff; a check)",
    "exact": "the expected returns under the seated agents' policies, by enumerating the game (small games; "
             "agents that report their policy)",
    "rollout(N)": "the mean of N uniformly random playouts from each child (compiled in the kibitz games)",
    "net": "the game's shipped value network (agents/trained/GAME.value.npz)",
    "net(FILE)": "a value network made by kibitz value-net",
}

_VALUES: dict = {}


def value_function(spec: str, game):
    """The :class:`kibitz.solvers.aivat.ValueFunction` that ``spec`` names
    (:data:`VALUE_SPECS`); ValueError naming the allowed specs otherwise."""
    from kibitz.solvers import aivat

    spec = spec.strip()
    allowed = ", ".join(VALUE_SPECS)
    if spec == "zero":
        return aivat.ZeroValue(game.num_players())
    if spec == "exact":
        return "exact"  # made per seating, from the agents seated (_seated_value)
    if spec.startswith("rollout(") and spec.endswith(")"):
        text = spec[len("rollout("):-1]
        if not text.isdigit() or int(text) < 1:
            raise ValueError(f"rollout(N): N must be a whole number >= 1, not {text!r}")
        return aivat.RolloutValue(game, int(text))
    if spec == "net" or (spec.startswith("net(") and spec.endswith(")")):
        path = shipped_value_path(game) if spec == "net" else spec[len("net("):-1]
        from kibitz.solvers import state_value, value_net
        if state_value.is_state_value_file(path):
            return state_value.load(path, game)
        return value_net.load(path, game)
    raise ValueError(f"{spec!r} is not a value function; allowed: {allowed}")


def shipped_value_path(game) -> str:
    """agents/trained/GAME.value.npz, the value network shipped for ``game``
    at its default size; ValueError if there is none for ``game``."""
    from kibitz.agents.net_agent import TRAINED_DIR

    short = game.get_type().short_name
    path = TRAINED_DIR / f"{short}.value.npz"
    if not path.is_file():
        raise ValueError(f"no value network ships for {short!r}; make one with kibitz value-net, then "
                         f"--aivat 'net(FILE)'")
    return str(path)


def _seated_value(plan: Plan, arrangement, agents):
    """The value function of ``plan`` for one seating: ``exact`` is made
    from the policies of the agents seated (once per seating and process)."""
    value = _value(plan.value, plan.game)
    if value != "exact":
        return value
    key = ("exact", plan.game, tuple(plan.specs[a] for a in arrangement))
    if key not in _VALUES:
        from kibitz.solvers.aivat import ExactValue
        unknown = [a.name for a in agents if not a.reports_policy]
        if unknown:
            raise ValueError(f"--aivat exact needs agents that report their policy (random, policy, net, "
                             f"trained); {', '.join(sorted(set(unknown)))} does not")
        _VALUES[key] = ExactValue(_load(plan.game), [a.action_probabilities for a in agents])
    return _VALUES[key]


def _value(spec: str, game_string: str):
    """The value function of ``spec`` for ``game_string``, made once per process."""
    key = (spec, game_string)
    if key not in _VALUES:
        _VALUES[key] = value_function(spec, _load(game_string))
    return _VALUES[key]


def replay_record(record: dict, rerun: bool = False):
    """The final state of a recorded game.

    ``rerun=False`` applies the recorded moves (each checked against the
    legal actions) and checks the recorded returns against the game's.
    ``rerun=True`` plays the game again from its seeds with
    fresh agents and raises if any move differs from the record.
    """
    game = _load(record["game"])
    if rerun:
        agents = [make_agent(spec, game, s, seed=seed)
                  for s, (spec, seed) in enumerate(zip(record["seats"], record["agent_seeds"]))]
        moves, returns = play_recorded(game, agents, DealChance(tuple(record["deal_seed"])))
        if moves != record["moves"]:
            at = next((i for i, (a, b) in enumerate(zip(moves, record["moves"])) if a != b),
                      min(len(moves), len(record["moves"])))
            raise ValueError(f"game {record['index']}: the rerun differs from the record at move {at}")
    state = game.new_initial_state()
    for i, a in enumerate(record["moves"]):
        if state.is_terminal() or a not in state.legal_actions():
            raise ValueError(f"game {record['index']}: move {i} ({a}) is not legal in the recorded game")
        state.apply_action(a)
    if not state.is_terminal():
        raise ValueError(f"game {record['index']}: the recorded moves end before the game does")
    returns = state.returns()
    if any(abs(float(r) - float(q)) > 1e-9 for r, q in zip(returns, record["returns"])):
        raise ValueError(f"game {record['index']}: the recorded returns {list(record['returns'])} are not the "
                         f"game's, {[float(r) for r in returns]} (the record was edited, or the rules changed)")
    return state


# ---------------------------------------------------------------- statistics
def win_shares(returns: list[float]) -> list[float]:
    """The highest returns (within float rounding) share one win."""
    return games.win_shares(returns, tolerance=1e-12)


def compute_results(specs: list[str], num_seats: int, records: Iterable[dict]) -> dict:
    """Per-agent statistics and ratings from game records (taken in index order)."""
    from openskill.models import PlackettLuce

    model = PlackettLuce()
    ratings = [model.rating() for _ in specs]
    pay = [[] for _ in specs]
    deals = [[] for _ in specs]  # the clusters: the games of one deal share its cards
    aivat_pay = [[] for _ in specs]
    win = [[] for _ in specs]
    seat_pay = [[[] for _ in range(num_seats)] for _ in specs]
    seat_win = [[[] for _ in range(num_seats)] for _ in specs]
    count = 0
    for rec in sorted(records, key=lambda r: r["index"]):
        count += 1
        arr, ret = rec["seat_agents"], rec["returns"]
        wins = win_shares(ret)
        corrected = None
        if "aivat" in rec:
            from kibitz.solvers.aivat import estimate
            corrected = estimate(ret, rec["aivat"]["chance"], rec["aivat"]["action"])
        for a in set(arr):
            seats = [s for s in range(num_seats) if arr[s] == a]
            pay[a].append(sum(ret[s] for s in seats) / len(seats))
            deals[a].append(rec.get("deal", rec["index"]))
            if corrected is not None:
                aivat_pay[a].append(float(sum(corrected[s] for s in seats) / len(seats)))
            win[a].append(sum(wins[s] for s in seats) / len(seats))
            for s in seats:
                seat_pay[a][s].append(ret[s])
                seat_win[a][s].append(wins[s])
        if len(set(arr)) > 1:
            teams = [[ratings[a]] for a in arr]
            new = model.rate(teams, scores=list(ret))
            for a in set(arr):
                mine = [new[s][0] for s in range(num_seats) if arr[s] == a]
                ratings[a] = model.rating(mu=float(np.mean([r.mu for r in mine])),
                                          sigma=float(np.mean([r.sigma for r in mine])))
    agents = []
    for a, spec in enumerate(specs):
        mean, lo, hi, se = clustered_interval(pay[a], deals[a])
        aivat = {}
        if aivat_pay[a] and len(aivat_pay[a]) == len(pay[a]):  # every game corrected
            a_mean, a_lo, a_hi, a_se = clustered_interval(aivat_pay[a], deals[a])
            aivat = {"aivat_mean": a_mean, "aivat_ci95_low": a_lo, "aivat_ci95_high": a_hi, "aivat_se": a_se}
        agents.append({
            "name": spec if specs.count(spec) == 1 else f"{spec}#{a}",
            "spec": spec,
            "games": len(pay[a]),
            "mean_payoff": mean,
            "ci95_low": lo,
            "ci95_high": hi,
            "se": se,
            **aivat,
            "win_rate": float(np.mean(win[a])) if win[a] else float("nan"),
            "rating": ratings[a].mu,
            "rating_sigma": ratings[a].sigma,
            "rating_ordinal": ratings[a].ordinal(),
            "seats": [{"seat": s, "games": len(seat_pay[a][s]),
                       "mean_payoff": float(np.mean(seat_pay[a][s])) if seat_pay[a][s] else float("nan"),
                       "win_rate": float(np.mean(seat_win[a][s])) if seat_win[a][s] else float("nan")}
                      for s in range(num_seats)],
        })
    return {"games_played": count, "agents": agents}


def _json_safe(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {k: _json_safe(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_json_safe(v) for v in x]
    return x


def variance_ratio(agent: dict) -> float:
    """The plain mean's variance over AIVAT's (how many times fewer games
    AIVAT needs for the same interval); nan without both."""
    se, a_se = agent.get("se"), agent.get("aivat_se")
    if se is None or a_se is None or not (math.isfinite(se) and math.isfinite(a_se)):
        return float("nan")
    if a_se == 0.0:
        return float("inf") if se > 0 else float("nan")
    return (se / a_se) ** 2


def format_table(results: dict) -> str:
    """The table ``kibitz tournament`` prints of ``results`` (results.json's
    document): per agent games, mean with its 95% interval, win rate and
    rating, and AIVAT's mean, interval and variance ratio where every agent
    has them."""
    def f(x, nd=3):
        return "-" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.{nd}f}"
    aivat = all("aivat_mean" in a for a in results["agents"])
    rows = [("agent", "games", "mean", "95% CI", "win rate", "rating (mu±sigma)")
            + (("AIVAT mean", "AIVAT 95% CI", "variance ratio") if aivat else ())]
    for a in results["agents"]:
        rows.append((a["name"], str(a["games"]), f(a["mean_payoff"]),
                     f"[{f(a['ci95_low'])}, {f(a['ci95_high'])}]", f(a["win_rate"]),
                     f"{f(a['rating'], 2)} ± {f(a['rating_sigma'], 2)}")
                    + ((f(a["aivat_mean"]), f"[{f(a['aivat_ci95_low'])}, {f(a['aivat_ci95_high'])}]",
                        f(variance_ratio(a), 2)) if aivat else ()))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    seat_rows = [("agent", "seat", "games", "mean", "win rate")]
    for a in results["agents"]:
        for s in a["seats"]:
            if s["games"]:
                seat_rows.append((a["name"], str(s["seat"]), str(s["games"]),
                                  f(s["mean_payoff"]), f(s["win_rate"])))
    widths = [max(len(r[i]) for r in seat_rows) for i in range(len(seat_rows[0]))]
    lines += ["", "per seat:"] + ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in seat_rows]
    return "\n".join(lines)


# ---------------------------------------------------------------- the runner
def _start_method() -> str:
    """fork where it is safe (no other threads; saves re-importing), else spawn.
    JAX's runtime threads are not Python threads: a process that has
    imported JAX (training, the network agents' tests) spawns too.

    Results do not depend on it: game ``g`` is a function of the plan and ``g``.
    """
    import sys
    import threading
    if ("fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1
            and "jax" not in sys.modules):
        return "fork"
    return "spawn"


#: a pool worker's queue for its records, one per game as it ends (None: return them by chunk)
_RECORDS = None


def _worker_init(records=None):
    """A pool worker ignores SIGINT (Ctrl-C at a terminal reaches the whole
    process group: the parent stops the pool) and dies at once on SIGTERM
    (what ``Pool.terminate`` sends), whatever handlers a forked worker
    inherited from the command (kibitz.commands._signals)."""
    global _RECORDS
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _RECORDS = records


def play_games(plan: Plan, indices) -> list[dict]:
    """The records of games ``indices`` of ``plan`` (one batch of a pool or of Ray)."""
    return [play_one(plan, i) for i in indices]


def _worker_chunk(job):
    """Plays a chunk; with a records queue each record is sent as its game
    ends (so that a stop keeps every finished game) and the chunk returns []."""
    if _RECORDS is None:
        return play_games(*job)
    plan, indices = job
    for i in indices:
        _RECORDS.put(play_one(plan, i))
    return []


class RecordsError(ValueError):
    """A tournament file (games.jsonl, tournament.json) that is not what a
    kibitz tournament writes; the message names the file, the line and what
    is wrong."""


#: the fields of a game record (see :func:`play_one`) -> what is allowed
RECORD_FIELDS = {"index": "a whole number >= 0", "game": "a game string", "deal": "a whole number",
                 "deal_seed": "a list of whole numbers >= 0", "seats": "a list of agent specs",
                 "seat_agents": "a list of whole numbers", "agent_seeds": "a list of whole numbers >= 0",
                 "moves": "a list of action ids", "returns": "a list of numbers"}


def _whole(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _record_field_ok(key: str, value) -> bool:
    if key == "index":
        return _whole(value) and value >= 0
    if key == "deal":
        return _whole(value)
    if key == "game":
        return isinstance(value, str)
    if key == "seats":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if key in ("agent_seeds", "deal_seed"):  # the seeds of numpy generators
        return isinstance(value, list) and all(_whole(v) and v >= 0 for v in value)
    if key == "returns":
        return isinstance(value, list) and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value)
    return isinstance(value, list) and all(_whole(v) for v in value)


def record_problem(rec) -> str | None:
    """What is wrong with one game record (None: nothing)."""
    if not isinstance(rec, dict):
        return f"a game record is a JSON object, not {type(rec).__name__}"
    for key, allowed in RECORD_FIELDS.items():
        if key not in rec:
            return f"field {key!r} is missing (it must be {allowed}): not a kibitz tournament record"
        if not _record_field_ok(key, rec[key]):
            return f"field {key!r} is {str(rec[key])[:60]!r}; it must be {allowed}"
    if not len(rec["seats"]) == len(rec["seat_agents"]) == len(rec["returns"]):
        return "'seats', 'seat_agents' and 'returns' must have one entry per seat"
    if "aivat" in rec:
        terms = rec["aivat"]
        if not (isinstance(terms, dict) and all(
                isinstance(terms.get(k), list) and len(terms[k]) == len(rec["returns"])
                and _record_field_ok("returns", terms[k]) for k in ("chance", "action"))):
            return "field 'aivat' must be {'chance': [...], 'action': [...]}, a number per seat each"
    return None


def read_records(path: str) -> list[dict]:
    """The game records of a games.jsonl; a missing file has none. A torn
    last line (a run killed while writing it: no newline at its end) is
    dropped; any other line that is not a game record raises
    :class:`RecordsError` naming the file and the line."""
    return read_records_and_tail(path)[0]


def read_records_and_tail(path: str) -> tuple[list[dict], str | None]:
    """:func:`read_records`, and what the torn last line it dropped was
    (``"line N: cut short (...)"``; None if there was none)."""
    out = []
    if not os.path.exists(path):
        return out, None
    try:
        with open(path, "rb") as f:
            lines = f.read().split(b"\n")
    except IsADirectoryError:
        raise RecordsError(f"{path}: a directory, not a games.jsonl file") from None
    except OSError as e:
        raise RecordsError(f"{path}: cannot be read ({e.strerror or e})") from None
    if lines[0][:2] == b"\x1f\x8b":
        raise RecordsError(f"{path}: a gzip file; a games.jsonl is plain text, one JSON game record a line")
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError) as e:  # not UTF-8, not JSON
            if number == len(lines):  # the last line, without its newline: torn
                return out, f"line {number}: cut short (not JSON: {e})"
            raise RecordsError(f"{path}, line {number}: not a JSON game record ({e})") from None
        problem = record_problem(rec)
        if problem:
            raise RecordsError(f"{path}, line {number}: {problem}")
        out.append(rec)
    return out, None


def read_plan(path: str) -> dict:
    """The plan (tournament.json) of a tournament directory, checked for the
    keys that ``--resume`` compares; :class:`RecordsError` otherwise."""
    try:
        with open(path, "rb") as f:
            plan = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError, RecursionError) as e:
        raise RecordsError(f"{path}: not a tournament plan ({e})") from None
    if not isinstance(plan, dict) or not all(k in plan for k in ("game", "agents", "seed")):
        raise RecordsError(f"{path}: not a tournament plan (it needs 'game', 'agents' and 'seed')")
    files = plan.get("agent_files", {})
    if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        raise RecordsError(f"{path}: 'agent_files' must map each agent file to its SHA-256 (hex)")
    return plan


class ResumeError(ValueError):
    """``--resume`` asked for something that would lose finished games, or
    continue another tournament's."""


@dataclasses.dataclass
class Outcome:
    results: dict
    finished: int
    total: int
    interrupted: bool


#: the largest ``games`` and ``workers`` (a tournament lists its games in memory)
MAX_GAMES = 10_000_000
MAX_WORKERS = 64


@dataclasses.dataclass(frozen=True)
class TournamentConfig:
    """One ``kibitz tournament``: every field is an option of the command
    (``agents`` a sequence of specs or their comma-separated text, ``out``
    the folder, None: no files; ``aivat`` the value function's spec),
    checked when it is made (:class:`kibitz.solvers.solve.ConfigError`
    naming the option). :meth:`run` plays it (:func:`run_tournament`)."""

    game: str
    agents: tuple = ()
    games: int = 100
    seed: int = 0
    workers: int = 1
    out: str | None = None
    resume: bool = False
    aivat: str = "none"
    progress: bool = False
    ray: bool = False
    ray_address: str | None = None

    def __post_init__(self):
        from kibitz.agents.registry import split_specs
        from kibitz.solvers.solve import ConfigError

        try:
            game = games.load_game(self.game)
            check_turn_based(game)
        except ValueError as e:  # GameStringError is one
            raise ConfigError(str(e), "GAME") from None
        try:
            agents = split_specs(self.agents) if isinstance(self.agents, str) else list(self.agents)
        except ValueError as e:
            raise ConfigError(str(e), "--agents") from None
        if not agents:
            raise ConfigError("no agents; give one or more agent specs (kibitz agents lists them)", "--agents")
        object.__setattr__(self, "agents", tuple(agents))
        for name, value, low, high in (("--games", self.games, 1, MAX_GAMES), ("--seed", self.seed, 0, None),
                                       ("--workers", self.workers, 1, MAX_WORKERS)):
            if value < low or (high is not None and value > high):
                raise ConfigError(f"{value}: allowed: {low} to {high:,}" if high else f"{value}: at least {low}",
                                  name)
        if self.resume and self.out is None:
            raise ConfigError("--resume continues the tournament in --out: give --out", "--resume")
        if self.aivat != "none":
            try:
                value_function(self.aivat, game)
            except (ValueError, OSError) as e:
                raise ConfigError(str(e), "--aivat") from None

    def run(self, log: Callable[[str], None] = quiet) -> Outcome:
        """Plays (or continues) the tournament; the errors of
        :func:`run_tournament` (GameFailed, RecordsError, ResumeError,
        OSError, ``RayUnavailable``) pass through."""
        return run_tournament(self.game, list(self.agents), self.games, seed=self.seed, workers=self.workers,
                              out_dir=self.out, resume=self.resume, progress=self.progress, log=log,
                              ray=self.ray, ray_address=self.ray_address, value=self.aivat)


def run_tournament(game_string: str, specs: list[str], games: int, seed: int = 0,
                   workers: int = 1, out_dir: str | None = None, resume: bool = False,
                   progress: bool = True, log: Callable[[str], None] | None = None,
                   ray: bool = False, ray_address: str | None = None, value: str = "none") -> Outcome:
    """Runs (or continues) a tournament; writes ``out_dir`` if given.

    ``ray`` plays the games as Ray tasks (``agents.ray_pool``) on the Ray
    that ``ray_address`` names, or as ``solvers.ray_cluster.session``
    chooses; ``workers`` is then unused. The files are the same as with
    ``workers=1``.

    ``games`` is rounded up to a whole number of deals (each deal is played
    in every arrangement), said through ``log``. Files: ``tournament.json``
    (the plan), ``games.jsonl`` (one record per game, sorted by index at the
    end), ``results.json`` and ``results.csv``.

    ``resume`` keeps every finished game: a larger ``games`` plays more, a
    smaller one than the folder's finished games is refused
    (:class:`ResumeError`). The progress bar is drawn only on a terminal.

    ``value`` names the value function of the AIVAT corrections
    (:func:`value_function`; "none": none): each record then holds its
    terms and the results each agent's AIVAT mean, interval and standard
    error beside the plain ones.
    """
    game = _load(game_string)
    check_turn_based(game)
    for s, spec in enumerate(specs):  # fail early on a bad spec
        make_agent(spec, game, 0, seed=0)
    if value != "none":
        fit = getattr(_value(value, game_string), "meta", {}).get("fit", {})  # fail early on a bad value function
        if log and fit.get("r2") is not None and fit["r2"] <= 0.0:
            log(f"AIVAT: this value network predicts the returns no better than their mean (held-out R^2 "
                f"{fit['r2']:+.3f}): its corrections are about zero and only cost time (docs/solvers/value_net.md)")
    plan = Plan(game_string, tuple(specs), int(seed), game.num_players(), value)
    if value == "exact":  # enumerate the game now: too large, or an agent without a policy, fails here
        first = plan.arrangements[0]
        _seated_value(plan, first, [make_agent(specs[a], game, s, seed=0) for s, a in enumerate(first)])
    per_deal = len(plan.arrangements)
    total = -(-games // per_deal) * per_deal
    if total != games and log:
        log(f"--games {games} rounded up to {total}: each deal is played in all {per_deal} "
            f"seatings of {len(specs)} agents in {plan.num_seats} seats")
    config = {"game": game_string, "agents": list(specs), "seed": int(seed), "games": total,
              "seats": plan.num_seats, "arrangements": [list(a) for a in plan.arrangements],
              "agent_files": agent_files(specs, game), "aivat": value}
    records, games_path = _open_folder(out_dir, resume, config, game, games, per_deal)
    todo = [i for i in range(total) if i not in records]
    interrupted = False
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=total, initial=total - len(todo), unit="game", dynamic_ncols=True,
                   disable=None)  # None: drawn on a terminal only
    sink = open(games_path, "a") if games_path else None

    def keep(rec):
        records[rec["index"]] = rec
        if sink:
            sink.write(json.dumps(rec) + "\n")
            sink.flush()
        if bar:
            bar.update(1)

    holder: dict = {}  # the pool and its queue while they run (the finally below ends them)
    try:
        if ray and todo:
            interrupted = _ray_games(plan, todo, keep, bar, ray_address, log)
        elif workers <= 1 or len(todo) <= 1:
            for i in todo:
                keep(play_one(plan, i))
        else:
            _play_in_pool(plan, todo, workers, keep, lambda: len(records) < total, holder)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if holder.get("pool") is not None:
            try:  # the games that ended before the stop
                _drain(holder["finished"], keep, wait=0.5)
            except KeyboardInterrupt:
                pass
            holder["pool"].terminate()
            holder["pool"].join()
        if bar:
            bar.close()
        if sink:
            sink.close()
    results = compute_results(list(specs), plan.num_seats, records.values())
    results.update({"game": game_string, "seed": int(seed), "games_planned": total,
                    "complete": len(records) == total, "aivat": value})
    if out_dir is not None:
        with open(games_path, "w") as f:
            for i in sorted(records):
                f.write(json.dumps(records[i]) + "\n")
        with open(os.path.join(out_dir, "results.json"), "w") as f:
            json.dump(_json_safe(results), f, indent=2)
        write_csv(os.path.join(out_dir, "results.csv"), results)
    return Outcome(results, len(records), total, interrupted)


def agent_files(specs, game) -> dict[str, str]:
    """``{file: SHA-256}`` of the files the agents read (``policy(FILE)``,
    ``net(FILE)``, the network ``trained`` plays), so that ``--resume`` can
    refuse to mix games of two versions of one file."""
    from kibitz.agents.registry import resolve_spec

    files = {}  # the key: the path as the spec gives it, or trained(GAME) for the shipped network
    for spec in specs:
        kind, options = resolve_spec(spec)
        files.update({v: v for v in options.values() if isinstance(v, str) and os.path.isfile(v)})
        if kind.name == "trained":
            from kibitz.agents.net_agent import trained_path
            try:
                files[f"trained({game.get_type().short_name})"] = str(trained_path(game))
            except ValueError:  # no network for this game (make_agent said so already)
                pass
    out = {}
    for key, path in files.items():
        with open(path, "rb") as f:
            out[key] = hashlib.sha256(f.read()).hexdigest()
    return out


def _same_game(game_string: str, game) -> bool:
    """Whether ``game_string`` loads ``game`` (the same parameters in another
    order or spelling)."""
    from kibitz.games import GameStringError
    try:
        return str(_load(game_string)) == str(game)
    except (GameStringError, ValueError):
        return False


def _open_folder(out_dir, resume: bool, config: dict, game, games: int, per_deal: int):
    """Makes the tournament folder ``out_dir`` ready (None: no files):
    writes the plan ``config``; with ``resume`` first checks it against the
    folder's plan and agent files and reads the finished games.
    Returns ``(records by index, the path of games.jsonl or None)``;
    ResumeError or ValueError naming what would be lost."""
    records: dict[int, dict] = {}
    games_path = None
    total = config["games"]
    if out_dir is not None:
        cfg_path = os.path.join(out_dir, "tournament.json")
        games_path = os.path.join(out_dir, "games.jsonl")
        if resume and not os.path.exists(cfg_path):
            raise ResumeError(f"--resume: {out_dir} holds no tournament (no tournament.json); "
                              f"run without --resume to start one")
        os.makedirs(out_dir, exist_ok=True)
        if resume:
            old = read_plan(cfg_path)
            for key in ("game", "agents", "seed"):
                if old[key] != config[key] and not (key == "game" and _same_game(old[key], game)):
                    raise ResumeError(f"--resume: {out_dir} holds a tournament with {key}={old[key]!r}, "
                                     f"not {config[key]!r}")
            if old.get("aivat", "none") != config["aivat"]:
                raise ResumeError(f"--resume: {out_dir} holds a tournament with --aivat "
                                  f"{old.get('aivat', 'none')!r}, not {config['aivat']!r}: its games' corrections "
                                  f"would mix two value functions")
            for path, digest in (old.get("agent_files") or {}).items():
                if config["agent_files"].get(path) != digest:
                    raise ResumeError(f"--resume: the agent file {path} is not the one the tournament in "
                                      f"{out_dir} started with (its SHA-256 differs, or it is gone); put that "
                                      "file back, or start a new tournament in another --out")
            for rec in read_records(games_path):
                records[rec["index"]] = rec
            beyond = [i for i in records if i >= total]
            if beyond:
                need = -(-(max(beyond) + 1) // per_deal) * per_deal
                raise ResumeError(f"--resume: {out_dir} holds {len(records)} finished games "
                                  f"(numbered up to {max(beyond)}); --games {games} would drop "
                                  f"{len(beyond)} of them; give --games {need} or more")
        elif os.path.exists(cfg_path) or (os.path.exists(games_path) and os.path.getsize(games_path) > 0):
            raise ValueError(f"{out_dir} already holds a tournament; use --resume or another --out")
        with open(cfg_path, "w") as f:
            json.dump(config, f, indent=2)
        # rewrite only complete records, so a torn line cannot follow
        with open(games_path, "w") as f:
            for i in sorted(records):
                f.write(json.dumps(records[i]) + "\n")
    return records, games_path


def _play_in_pool(plan: Plan, todo: list[int], workers: int, keep: Callable, missing: Callable,
                  holder: dict) -> None:
    """Plays games ``todo`` of ``plan`` in a pool of ``workers`` processes,
    ``keep``-ing each record as its game ends, until ``missing()`` is false;
    ``holder`` gets the pool and its queue of records as soon as they exist
    (a Ctrl-C leaves them to the caller to end), and ``holder["pool"]`` is
    None once the pool is closed. A game that raises ends the pool, after
    the chunks in flight, and raises here."""
    ctx = multiprocessing.get_context(_start_method())
    finished = ctx.Queue()  # records, one per game as it ends
    pool = ctx.Pool(workers, initializer=_worker_init, initargs=(finished,))
    holder.update(pool=pool, finished=finished)
    size = max(1, min(64, len(todo) // (workers * 8)))
    chunks = [todo[i:i + size] for i in range(0, len(todo), size)]
    # A bounded window of chunks in flight: the pool's task queue
    # never fills, so terminate() on Ctrl-C cannot block on it.
    done_q: queue.Queue = queue.Queue()
    next_chunk, in_flight = 0, 0
    while next_chunk < len(chunks) or in_flight:
        while in_flight < 2 * workers and next_chunk < len(chunks):
            pool.apply_async(_worker_chunk, ((plan, chunks[next_chunk]),),
                             callback=done_q.put, error_callback=done_q.put)
            next_chunk += 1
            in_flight += 1
        _drain(finished, keep)
        try:
            got = done_q.get(timeout=0.2)
        except queue.Empty:
            continue
        in_flight -= 1
        if isinstance(got, BaseException):
            # let the chunks in flight finish before the pool goes:
            # terminate() on workers writing a result can hang the pool's
            # result thread (seen in the test suite under load)
            while in_flight:
                _drain(finished, keep)  # (a worker's unread records would hold it at exit)
                try:
                    done_q.get(timeout=0.2)
                    in_flight -= 1
                except queue.Empty:
                    pass
            _drain(finished, keep, wait=0.5)
            pool.close()
            pool.join()
            holder["pool"] = None
            raise got
        for rec in got:
            keep(rec)
    # every chunk has ended, so every record is sent: take them all
    # before the workers are joined (a worker ends only once its
    # queue is read)
    while missing():
        keep(finished.get(timeout=60))
    pool.close()
    pool.join()
    holder["pool"] = None


def _drain(finished, keep, wait: float = 0.0) -> None:
    """Keeps every record waiting in the queue ``finished``; ``wait``: seconds
    in all to wait for records still in transit (0: take only what is
    there). The bound is on the total: after a stop the workers go on playing
    until they are terminated, and a wait renewed after each record would
    last as long as their chunks whenever games end faster than ``wait``."""
    end = time.monotonic() + wait
    while True:
        left = end - time.monotonic()
        try:
            rec = finished.get(timeout=left) if left > 0 else finished.get_nowait()
        except queue.Empty:
            return
        keep(rec)


def _ray_games(plan: Plan, todo: list[int], keep, bar, address, log) -> bool:
    """Plays the games ``todo`` on Ray; True if interrupted."""
    from kibitz.agents.matches.ray_pool import run_batches
    from kibitz.solvers.ray_cluster import session

    with session(address) as ray:
        def show(report):
            if bar:
                bar.set_postfix(cpus=report.cpus, nodes=len(report.nodes), refresh=False)

        report = run_batches(ray, play_games, plan, todo, lambda i, rec: keep(rec), on_batch=show)
    if log:
        log(report.summary())
    return report.interrupted


CSV_FIELDS = ("name", "spec", "games", "mean_payoff", "ci95_low", "ci95_high", "win_rate",
              "rating", "rating_sigma")


#: the AIVAT columns of results.csv, when the tournament has corrections
AIVAT_FIELDS = ("se", "aivat_mean", "aivat_ci95_low", "aivat_ci95_high", "aivat_se")


def write_csv(path: str, results: dict) -> None:
    extra = AIVAT_FIELDS if all("aivat_mean" in a for a in results["agents"]) else ()
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(CSV_FIELDS + tuple(f"seat{s}_mean_payoff" for s in range(len(results["agents"][0]["seats"])))
                   + extra)
        for a in results["agents"]:
            row = [a[k] for k in CSV_FIELDS] + [s["mean_payoff"] for s in a["seats"]] + [a[k] for k in extra]
            w.writerow(["" if isinstance(v, float) and not math.isfinite(v) else v for v in row])


def paired_comparison(dir_a: str, dir_b: str) -> dict:
    """Two tournaments of the same plan (game, seed, seats, seatings; the
    agents may differ: e.g. a network against the heuristic, and its
    predecessor against the same heuristic) compared game by game. Games
    of one index share their deal, seating and agents' seeds, so the
    difference of an agent slot's mean payoff in them removes the luck the
    two share. Per slot: both means, the mean difference A - B and its 95%
    interval with the deals as clusters (a deal's seatings are not
    independent), over the games both finished. RecordsError naming what
    differs or what is missing."""
    plans = [read_plan(os.path.join(d, "tournament.json")) for d in (dir_a, dir_b)]
    for key in ("game", "seed", "seats", "arrangements"):
        if plans[0].get(key) != plans[1].get(key):
            raise RecordsError(f"the tournaments differ in {key} ({plans[0].get(key)!r} against "
                               f"{plans[1].get(key)!r}): only games of the same plan can be paired")
    if len(plans[0]["agents"]) != len(plans[1]["agents"]):
        raise RecordsError("the tournaments have different numbers of agents: their slots cannot be paired")
    records = [{r["index"]: r for r in read_records(os.path.join(d, "games.jsonl"))} for d in (dir_a, dir_b)]
    common = sorted(set(records[0]) & set(records[1]))
    if len(common) < 2:
        raise RecordsError(f"{len(common)} game(s) finished in both tournaments; at least 2 are needed")
    for i in common:
        a, b = records[0][i], records[1][i]
        for key in ("deal", "seat_agents", "agent_seeds"):
            if a.get(key) != b.get(key):
                raise RecordsError(f"game {i} has another {key} in each tournament: they are not the same plan")
    n = plans[0]["seats"]
    # AIVAT's paired difference too, when both tournaments corrected every game
    aivat = all("aivat" in records[k][i] for k in (0, 1) for i in common)
    slots = []
    for slot in range(len(plans[0]["agents"])):
        pairs = []
        for i in common:
            seats = [s for s in range(n) if records[0][i]["seat_agents"][s] == slot]
            if seats:
                mine = [sum(records[k][i]["returns"][s] for s in seats) / len(seats) for k in (0, 1)]
                corrected = [0.0, 0.0]
                if aivat:
                    from kibitz.solvers.aivat import estimate
                    for k in (0, 1):
                        r = records[k][i]
                        values = estimate(r["returns"], r["aivat"]["chance"], r["aivat"]["action"])
                        corrected[k] = float(sum(values[s] for s in seats) / len(seats))
                pairs.append((records[0][i]["deal"], mine[0], mine[1], corrected[0] - corrected[1]))
        deals = np.array([p[0] for p in pairs])
        diff = np.array([p[1] - p[2] for p in pairs])
        mean, se, k = clustered_mean(diff, deals)
        half = t95(k) * se
        row = {"a": plans[0]["agents"][slot], "b": plans[1]["agents"][slot], "games": len(pairs),
               "deals": k, "mean_a": float(np.mean([p[1] for p in pairs])),
               "mean_b": float(np.mean([p[2] for p in pairs])), "difference": mean, "se": se,
               "ci95_low": mean - half, "ci95_high": mean + half}
        if aivat:
            a_mean, a_se, _ = clustered_mean(np.array([p[3] for p in pairs]), deals)
            row.update({"aivat_difference": a_mean, "aivat_se": a_se,
                        "aivat_ci95_low": a_mean - t95(k) * a_se, "aivat_ci95_high": a_mean + t95(k) * a_se})
        slots.append(row)
    return {"game": plans[0]["game"], "seed": plans[0]["seed"], "games": len(common), "slots": slots,
            "aivat": aivat}
