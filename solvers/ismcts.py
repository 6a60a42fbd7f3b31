"""Single-observer information-set Monte Carlo tree search (SO-ISMCTS).

Cowling, Powley and Whitehouse, "Information Set Monte Carlo Tree Search",
IEEE Transactions on Computational Intelligence and AI in Games 4(2), 2012
(doi:10.1109/TCIAIG.2012.2200894), algorithm 2.

One search builds one tree from the point of view of the searching player
(the *observer*). Each simulation

1. **determinizes**: draws a full state consistent with the observer's
   information state through the game's ``resample_from_infostate`` (the one
   state copy made per simulation);
2. **selects** down the tree with UCB1 restricted to the actions legal in
   this determinization, using *availability* counts in place of the
   parent's visit count:
   ``value(a) = mean_return(a) + uct_c * sqrt(ln(available(a)) / visits(a))``,
   where ``mean_return`` is the mean return of the player who moves. With a
   *prior* (``SearchPolicies.prior``, a policy of the searcher's), the
   searcher's own nodes select by PUCT instead (Silver et al., "Mastering
   the game of Go without human knowledge", Nature 550, 2017; Rosin 2011):
   ``value(a) = Q(a) + puct_c * P(a) * sqrt(N) / (1 + n(a))`` over all its
   legal moves, ``N`` the visits of the node's legal moves, ``n(a)`` those
   of ``a``, ``Q(a)`` its mean return and, for an unvisited move, the
   *first-play value*: the node's mean return over its visited moves (0
   before any; equal values go to the higher prior). ``P`` is the prior's
   policy at the searcher's information state, which is the same in every
   determinization: it is asked once per information state per search. An
   unvisited move chosen there is the expansion;
3. **expands** one untried legal action (chosen uniformly, or the game's
   heuristic's choice first with ``expand=heuristic``); with progressive
   widening (``widen``) a node gets new moves only as its visits grow;
4. **rolls out** to the end of the game with uniformly random moves or with
   the game's heuristic (its fast ``rollout_action`` where there is one,
   else its agent); with ``rollout_rounds=k`` the rollout stops when the
   k-th next round begins and the game's standing there is backed up;
5. **backs up** the returns: each edge adds the return of the player who
   took it.

Tree nodes are information sets of the observer: an edge for a player's
move is the action itself (single-observer ISMCTS treats every move as seen
by the observer), and chance outcomes met during selection are merged when
the observer cannot tell them apart: the edge below a run of chance moves is
keyed by the observer's information-state string after them (or by the
outcomes themselves in games that declare every chance outcome public,
capability ``PUBLIC_CHANCE``: Over/Under). So the
observer's own later decisions are conditioned on what it will have seen,
and cards it cannot see are not.

What the search uses of a game beyond the pyspiel API is what the game's
spec declares (``kibitz.games.search``: capabilities and the state methods
that come with them). What it uses of a policy (the game's heuristic) it is
handed, as :class:`SearchPolicies`, as OpenSpiel's ``MCTSBot`` is handed an
``Evaluator``; the agent layer builds them (``kibitz.agents.ismcts``).

The final move is the most visited root action (ties shared equally) or an
action drawn in proportion to the root visit counts.

Where it runs (``engine``): with the options a simulation's shape depends
on at their defaults (UCB1, uniform expansion, random rollouts to the end,
a fresh uniform world each simulation) on a game with compiled rules, the
simulations run in compiled code (``solvers/_ismcts_kernel.py``: steps 2-5
on the worlds of step 1, which the game's resample still draws in Python,
or none for a game that declares ``KNOWN_WORLD``); chance edges are then
keyed by a 64-bit hash of the observer's compiled tokens since the root,
which partitions histories as its information-state strings do. Every
other configuration, and ``engine=python``, runs as described above.

Randomness is passed in: a ``numpy.random.Generator`` seeds the search's
inner Mersenne Twister (``random.Random``: one C call per draw, the cheapest
source in the hot loop) once per search, and the compiled engine's
xoshiro256** once per search object, so the same generator state gives
the same tree and the same move. Searches bounded by ``seconds`` instead of
``sims`` depend on machine speed and are not reproducible.
"""

from __future__ import annotations

import dataclasses
import math
from bisect import bisect_left
import numbers
import random
import time
from typing import Callable

import numpy as np
import pyspiel

from kibitz.games import search as game_search
from kibitz.games.compiled_random import seeded_rng
from kibitz.solvers import _ismcts_kernel as _kernel
from kibitz.solvers._direct import direct_rules
from kibitz.games.chance import draw, sample_chance as _sample_chance

#: where random rollouts run (``playouts``)
PLAYOUTS = ("compiled", "python")
#: where a simulation's tree walk runs (the ``engine`` option)
ENGINES = ("compiled", "python")
#: rollout policies
ROLLOUTS = ("random", "heuristic", "model")
#: final move selection
FINALS = ("visits", "distribution")
#: which untried move a node tries first
EXPANSIONS = ("random", "heuristic")
#: how determinizations are weighted: uniformly over the consistent worlds,
#: or by how likely the heuristic makes the opponents' moves of this round,
#: or by the opponent model's probabilities of all the opponents' moves
BELIEFS = ("uniform", "heuristic", "model")
#: how other players' moves are chosen inside the tree
OPPONENTS = ("search", "heuristic", "model")
#: which of the searcher's own moves are searched
MOVES = ("all", "shortlist")
#: the default PUCT constant (``puct_c``): AlphaZero-style 1.0, not tuned on these games
PUCT_C = 1.0

_TERMINAL = int(pyspiel.PlayerId.TERMINAL)
_CHANCE = int(pyspiel.PlayerId.CHANCE)
# Nodes with more legal moves than this, of which under a quarter are tried,
# draw an untried move by rejection from the legal moves: a draw there is
# most likely untried, so the node need not list its untried moves (Doubt
# and Bet's claims and its showdowns with many chips: thousands of moves).
# Smaller nodes list the untried moves and draw one from the list. The two
# draws use the random numbers differently, so this bound is part of what
# a seed's search is (tests/test_ismcts_fixed_positions.py).
_MANY = _kernel.MANY
#: the options whose defaults the compiled engine runs (any other value: the Python engine)
_ENGINE_DEFAULTS = ("rollout", "max_world_samples", "widen", "expand", "rollout_moves", "rollout_rounds", "belief",
                    "opponents", "playouts", "moves", "prior")
#: worlds drawn, then simulated in one compiled call (a timed search: fewer, to stop near its time)
_ENGINE_CHUNK = 256
_ENGINE_TIMED_CHUNK = 16
#: the most nodes a compiled search's tree grows to (plus a game's length; 56 bytes a node and 24 to 48
#: in the edge table): a search that would pass it stops there, with the simulations that fit
#: (``last_simulations``)
_ENGINE_MAX_NODES = 1 << 23


def _option(default, help: str, *, choices: tuple | None = None, rule: str | None = None,
            valid: Callable | None = None):
    """A field of :class:`ISMCTSConfig`: its default, its help text and its
    allowed values (``choices``, or ``valid(value)``, which ``rule`` states)."""
    return dataclasses.field(default=default, metadata={"help": help, "choices": choices, "rule": rule,
                                                        "valid": valid})


def _typed(name: str, kind: type, value):
    """``value`` as an option of type ``kind`` (an agent spec's values are
    ints, floats or strings); a value of another kind is refused."""
    if kind is str:
        return str(value)
    if (isinstance(value, bool) or not isinstance(value, numbers.Real)
            or (kind is int and not float(value).is_integer())):
        raise ValueError(f"{name} must be {'an integer' if kind is int else 'a number'}; got {value!r}")
    return kind(value)


@dataclasses.dataclass(frozen=True)
class ISMCTSConfig:
    """The options of a search, each with its default, allowed values and help.

    The ``ismcts`` agent's options (``kibitz agents``) are these fields;
    :data:`PRESETS` names the configurations the results use, and
    :func:`make_config` builds one from a preset and options. Values are
    converted to the field's type and checked on construction.
    """

    sims: int = _option(1000, "simulations per move (0 = no limit, then seconds must be > 0)",
                        rule="0..1,000,000,000", valid=lambda v: 0 <= v <= 10**9)
    seconds: float = _option(0.0, "time per move in seconds (0 = no limit); with sims too, the first limit "
                                  "reached stops the search; timed searches are not reproducible",
                             rule=">= 0", valid=lambda v: v >= 0)
    uct_c: float = _option(0.7, "UCB1 exploration constant (returns are win shares in [0, 1] by default)",
                           rule=">= 0", valid=lambda v: v >= 0)
    rollout: str = _option("random", "rollout policy: random | heuristic (the game's heuristic in every seat: "
                                     "the policies' rollout_action where there is one, else its agent) | model "
                                     "(the opponent model's moves, drawn from its probabilities, in every seat)",
                           choices=ROLLOUTS)
    final: str = _option("visits", "final move: visits (most visited, ties shared) | distribution (in proportion "
                                   "to visits)", choices=FINALS)
    max_world_samples: int = _option(-1, "determinizations drawn per move (-1 = a fresh one every simulation; "
                                         "k >= 1: at most k, and the simulations reuse copies of them at random)",
                                     rule="-1 (unlimited) or >= 1", valid=lambda v: v == -1 or v >= 1)
    widen: float = _option(0.0, "progressive widening: a node reached k times tries at most ceil(widen * sqrt(k)) "
                                "moves (0 = off: every legal move once before any twice); for nodes with many "
                                "legal moves searched without a shortlist (Doubt and Bet's claims: only its pilot "
                                "matches use it)", rule=">= 0 (0 = off)", valid=lambda v: v >= 0)
    expand: str = _option("random", "first move tried at a new node: random | heuristic (the game's heuristic "
                                    "agent's choice in the simulation's world; later ones random), which keeps "
                                    "the heuristic's move among the few a widened node tries (only Doubt and "
                                    "Bet's pilot matches use it)", choices=EXPANSIONS)
    rollout_moves: int = _option(-1, "-1 = no limit; k >= 0: stop a rollout before its (k+1)-th player move and "
                                     "back up the standing there (0: the standing once the expanded move's chance "
                                     "moves are resolved); kibitz games; with rollout_rounds too, the first "
                                     "limit reached stops it",
                                 rule="-1 (no limit) or >= 0", valid=lambda v: v >= -1)
    rollout_rounds: int = _option(0, "0 = roll out to the end of the game; k = stop when the k-th next round "
                                     "begins and back up the standing there (underdog, over_under, doubt_and_bet)",
                                  rule=">= 0 (0 = to the end of the game)", valid=lambda v: v >= 0)
    belief: str = _option("uniform", "determinizations: uniform (every consistent world alike) | heuristic "
                                     "(kept with weight belief_eps per move of another player in this round "
                                     "that the game's heuristic would not make: rejection sampling) | model "
                                     "(kept with the opponent model's probability of every move of another "
                                     "player in the world: the model's posterior, by rejection sampling)",
                          choices=BELIEFS)
    belief_eps: float = _option(0.1, "belief=heuristic, opponents=heuristic: weight of a move the heuristic "
                                     "would not make, in (0, 1] (1 = the uniform belief)",
                                rule="in (0, 1]", valid=lambda v: 0 < v <= 1)
    belief_tries: int = _option(50, "belief=heuristic: worlds drawn per determinization before one is used "
                                    "whatever its weight", rule=">= 1", valid=lambda v: v >= 1)
    opponents: str = _option("search", "other players' moves in the tree: search (UCB1 on their statistics) | "
                                       "heuristic (the game's heuristic's move, or a random one with probability "
                                       "belief_eps; only the searcher's moves are searched) | model (a move drawn "
                                       "from the opponent model's probabilities)", choices=OPPONENTS)
    playouts: str = _option("compiled", "where random rollouts to the end of the game run: compiled (on the "
                                        "game's compiled rules, where it has them and they read a Python state: "
                                        "the kibitz games) | python (its Python rules); the same distribution, "
                                        "other draws", choices=PLAYOUTS)
    engine: str = _option("compiled", "where the simulations run: compiled (tree walk, chance and rollouts in "
                                       "compiled code, on a game with compiled rules, when every other option that "
                                       "shapes a simulation has its default: UCB1, random expansion and rollouts to "
                                       "the end, uniform belief, a fresh world each simulation; otherwise python) | "
                                       "python; the same search, other draws", choices=ENGINES)
    moves: str = _option("all", "the searcher's moves searched: all | shortlist (the game heuristic's shortlist, "
                                "which depends only on the searcher's information: doubt_and_bet)", choices=MOVES)
    model: str = _option("", "the opponent model of belief, opponents or rollout=model: an agent spec, e.g. "
                             "model=heuristic or model=policy(FILE) (the agent layer builds the policy from it)")
    prior: str = _option("", "the searcher's prior: an agent spec whose action_probabilities are known (trained | "
                             "net(FILE) | policy(FILE) | heuristic | random); with one, the searcher's own nodes "
                             "select by PUCT (puct_c) in place of UCB1; none: UCB1")
    puct_c: float = _option(PUCT_C, "PUCT exploration constant with a prior: Q(a) + puct_c * P(a) * sqrt(N) / "
                                    "(1 + n(a)), an unvisited move's Q the node's mean over its visited moves",
                            rule=">= 0", valid=lambda v: v >= 0)

    def __post_init__(self):
        for f in dataclasses.fields(self):
            value = _typed(f.name, type(f.default), getattr(self, f.name))
            object.__setattr__(self, f.name, value)
            choices, valid = f.metadata["choices"], f.metadata["valid"]
            if choices is not None and value not in choices:
                raise ValueError(f"{f.name} must be one of {', '.join(choices)}; got {value!r}")
            if valid is not None and not valid(value):
                raise ValueError(f"{f.name} must be {f.metadata['rule']}; got {value!r}")
        if self.sims == 0 and self.seconds == 0:
            raise ValueError("give a budget: sims > 0 or seconds > 0")

    def needs_policies(self) -> bool:
        """Whether the search uses the heuristic's policies (an option ``heuristic`` or ``moves=shortlist``)."""
        return "heuristic" in (self.rollout, self.expand, self.belief, self.opponents) or self.moves == "shortlist"

    def needs_model(self) -> bool:
        """Whether the search uses an opponent model (an option ``model``)."""
        return "model" in (self.rollout, self.belief, self.opponents)

    def changes(self) -> dict:
        """The options that differ from the defaults, in field order."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if getattr(self, f.name) != f.default}


#: the configurations of the strength results (docs/results/ismcts_strength;
#: docs/solvers/ismcts.md lists which match uses which)
PRESETS = {
    # stop rollouts at the next round and back up the standing there
    "one_round": ISMCTSConfig(sims=1000, rollout_rounds=1),
    # score an expanded move by the standing once its chance moves are resolved
    "one_step": ISMCTSConfig(sims=1000, uct_c=0.05, rollout_moves=0),
    # the heuristic as opponent model in the determinizations, 100 per move
    "belief": ISMCTSConfig(sims=1000, max_world_samples=100, belief="heuristic"),
    # ... and in the tree
    "belief_opponents": ISMCTSConfig(sims=1000, max_world_samples=100, belief="heuristic", opponents="heuristic"),
    # the heuristic's shortlist of the searcher's moves, the heuristic as
    # opponent model and as rollout policy, rollouts to the next round
    "shortlist_model": ISMCTSConfig(sims=1000, rollout_rounds=1, rollout="heuristic", belief="heuristic",
                                    opponents="heuristic", moves="shortlist"),
    # ISMCTS-BR (Timbers et al. 2022): a best response to the opponent
    # model, which is the belief and plays the other seats in the tree and
    # in the rollouts
    "best_response": ISMCTSConfig(sims=1000, belief="model", opponents="model", rollout="model"),
    # the game's trained network as the searcher's prior (PUCT) and as the
    # opponent model in the determinizations and in the tree
    "guided": ISMCTSConfig(sims=1000, prior="trained", model="trained", belief="model", opponents="model"),
}


def make_config(preset: str | ISMCTSConfig | None = None, **options) -> ISMCTSConfig:
    """The preset (a name in :data:`PRESETS`, a config, or None: the
    defaults) with ``options`` in place of its own values."""
    if preset is None:
        base = ISMCTSConfig()
    elif isinstance(preset, ISMCTSConfig):
        base = preset
    elif preset in PRESETS:
        base = PRESETS[preset]
    else:
        raise ValueError(f"unknown IS-MCTS preset {preset!r}; presets: {', '.join(PRESETS)}")
    names = [f.name for f in dataclasses.fields(ISMCTSConfig)]
    unknown = sorted(set(options) - set(names))
    if unknown:
        raise ValueError(f"IS-MCTS has no option {unknown[0]!r}; its options: {', '.join(names)}")
    return dataclasses.replace(base, **options) if options else base


@dataclasses.dataclass(frozen=True)
class SearchPolicies:
    """The policies a search is handed: a game's heuristic, as the search
    uses it, and an opponent model.

    ``agent(game, player_id, seed)`` makes an agent (``step(state)`` returns
    its move; a move may depend only on that player's information state);
    the options ``heuristic`` and ``moves=shortlist`` use it and these
    optional, faster or narrower forms of the same policy:

    * ``rollout_action(state, rand)``: the agent's move computed from the
      state directly (no agent object); ``rand()`` is the search's uniform
      source. Used for ``rollout=heuristic`` and as the opponent model.
    * ``shortlist(state, legal)``: the moves ``moves=shortlist`` searches at
      the searcher's nodes (depends only on the searcher's information).
    * ``policy_key(state, player)``: what the agent's move for ``player``
      depends on, cheaper than the information-state string (the key of the
      opponent model's cache).
    * ``believed_draw(state, player_id, sampler, move_of, eps, memo)``: one
      candidate world of ``belief=heuristic`` drawn by the policy's own
      method (None: rejected), in the distribution of the generic
      rejection; used on games with the capabilities ``DIRECT`` and
      ``RESAMPLE_MEMO``.

    ``prior(state, player)``, a policy of the same form, is the searcher's
    prior: with one, the searcher's own nodes select by PUCT over all their
    legal moves (``puct_c``; ``widen`` and ``expand`` then apply to the other
    players' nodes only); a search asks it once per information state.

    ``model(state, player)`` is any policy, the opponent model:
    ``{action: probability}`` over ``player``'s legal moves in ``state``,
    depending only on ``player``'s information state (an agent's
    ``action_probabilities``). The options ``belief=model``,
    ``opponents=model`` and ``rollout=model`` use it; a search keeps its
    answers by player and information-state string.
    """

    agent: Callable | None = None
    rollout_action: Callable | None = None
    shortlist: Callable | None = None
    policy_key: Callable | None = None
    believed_draw: Callable | None = None
    model: Callable | None = None
    prior: Callable | None = None


class _Rejected(Exception):
    """A candidate world the belief filter threw away."""


class _Node:
    """An edge and the node it leads to: statistics of the move into it."""

    __slots__ = ("children", "visits", "total", "avail", "passes", "moves")

    def __init__(self):
        self.children = {}
        self.visits = 0
        self.total = 0.0
        self.avail = 1
        self.passes = 0  # simulations that reached this node at a decision (for widening)
        # moves=shortlist: the searcher's shortlists here by what it saw since
        # the root (its information state, on which the list depends)
        self.moves = None


def _no_move(state, player):
    """ValueError for a determinization in which ``player`` is to move and
    has no legal move: the game's ``resample_from_infostate`` drew a state
    its own rules cannot continue (seen with OpenSpiel's hearts)."""
    name = state.get_game().get_type().short_name
    raise ValueError(f"{name}: a state drawn by its resample_from_infostate has player {player} to move with "
                     "no legal move; the game's resampler is inconsistent, so IS-MCTS cannot search it")


def _child(node, key):
    """The child of ``node`` along the edge ``key`` (made on first use)."""
    child = node.children.get(key)
    if child is None:
        child = node.children[key] = _Node()
    return child


def _select(node, tried, c):
    """UCB1 over the children of ``node`` for the moves ``tried`` (availability
    counts in place of the parent's visits): ``(move, child)``; counts the
    availability of each."""
    log, sqrt = math.log, math.sqrt
    children = node.children
    best, best_value, action = None, -math.inf, None
    for a in tried:
        ch = children.get(a)
        if ch is None:
            continue
        ch.avail += 1
        value = ch.total / ch.visits + c * sqrt(log(ch.avail) / ch.visits)
        if value > best_value:
            best, best_value, action = ch, value, a
    return action, best


def _puct(node, legal, prior, c):
    """PUCT over the moves ``legal`` of the searcher's ``node`` with the prior
    ``{move: probability}``: the move of the highest
    ``Q(a) + c * P(a) * sqrt(N) / (1 + n(a))``, an unvisited move's ``Q`` the
    node's mean return over its visited moves (0 before any visit); equal
    values go to the higher prior, then to the first in ``legal``."""
    children = node.children
    visits, total = 0, 0.0
    for a in legal:
        ch = children.get(a)
        if ch is not None:
            visits += ch.visits
            total += ch.total
    first_play = total / visits if visits else 0.0
    scale = c * math.sqrt(visits)
    best_value, best_p, action = -math.inf, -math.inf, None
    for a in legal:
        p = prior.get(a, 0.0)
        ch = children.get(a)
        if ch is None or not ch.visits:
            value = first_play + scale * p
        else:
            value = ch.total / ch.visits + scale * p / (1 + ch.visits)
        if value > best_value or (value == best_value and p > best_p):
            best_value, best_p, action = value, p, a
    return action


def _backup(path, returns):
    """Each edge of ``path`` adds a visit and the return of the player who took it."""
    for child, player in path:
        child.visits += 1
        child.total += returns[player]


def _engine_rules(game, config: ISMCTSConfig):
    """The compiled rules a search of ``game`` with ``config`` runs its simulations on, or None (in Python)."""
    if config.engine != "compiled":
        return None
    if not {game_search.DIRECT, game_search.COMPILED} <= game_search.capabilities(game):
        return None
    defaults = ISMCTSConfig()
    if any(getattr(config, name) != getattr(defaults, name) for name in _ENGINE_DEFAULTS):
        return None
    rules = game.compiled_rules()
    return rules if rules.position_of is not None and rules.token is not None else None


class ISMCTS:
    """SO-ISMCTS search for one seat.

    Args:
      game: a ``pyspiel.Game`` whose states implement
        ``resample_from_infostate(player_id, sampler)``.
      player_id: the observer (the seat this search plays for).
      rng: ``numpy.random.Generator``; all randomness of the search.
      config: the options, an :class:`ISMCTSConfig` or the name of one of
        :data:`PRESETS` (None: the defaults); ``options`` (the config's
        field names) replace its values.
      policies: :class:`SearchPolicies`, the heuristic that every
        ``heuristic`` option and ``moves=shortlist`` use, the opponent model
        of the ``model`` options and the prior (its ``prior``: PUCT at the
        searcher's nodes); needed only with those options.
    """

    def __init__(self, game, player_id: int, rng: np.random.Generator,
                 config: ISMCTSConfig | str | None = None, *, policies: SearchPolicies | None = None,
                 **options):
        if game.get_type().dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
            raise ValueError(f"IS-MCTS needs a sequential game; {game.get_type().short_name!r} is not")
        self.config = config = make_config(config, **options)
        self.game = game
        self.player_id = player_id
        self.rng = rng
        self._belief_agents = None
        self._belief_cache = {}
        self._model_cache = {}  # (player, information-state string) -> the model's moves and cumulative weights
        self._prior = policies.prior if policies is not None else None
        self._prior_cache = {}  # the searcher's information state -> the prior over its legal moves (one search)
        self._memo = {}  # keyword arguments for the internal resample, set per search
        self._memo_root = None  # the state the memo is for
        #: worlds drawn and worlds kept by the belief filter (all searches)
        self.belief_drawn = self.belief_kept = 0
        self._expand_agents = None
        self._stop_round = 0
        self._mark = None
        self._model = None
        self._rollout_agents = None
        self._rollout_fn = None
        self._shortlist = None
        #: what the game offers beyond the pyspiel API (``kibitz.games.search``)
        self._caps = game_search.capabilities(game)
        if (self.config.rollout_rounds or self.config.rollout_moves >= 0) and \
                not {game_search.DIRECT, game_search.ROUNDS} <= self._caps:
            # checked when the search is made, so that an agent spec is refused before any game is played
            raise ValueError(f"rollout_rounds > 0 and rollout_moves >= 0 need a game with a standing "
                             f"(the kibitz games); "
                             f"{self.game.get_type().short_name!r} has none: use rollout_rounds=0 "
                             f"and rollout_moves=-1")
        #: every chance outcome is public: chance edges are keyed by the outcomes
        self._public_chance = game_search.PUBLIC_CHANCE in self._caps
        # chance outcomes drawn and played in one compiled call on the search's own worlds
        self._compiled_chance = {game_search.DIRECT, game_search.COMPILED} <= self._caps
        self.policies = policies
        short = game.get_type().short_name
        if config.needs_model() and (policies is None or policies.model is None):
            raise ValueError(f"rollout, belief or opponents=model: no opponent model was given for game {short!r} "
                             f"(kibitz.agents.ismcts.make_search builds one from an agent spec)")
        if config.prior and self._prior is None:
            raise ValueError(f"prior={config.prior}: no prior policy was given for game {short!r} "
                             f"(kibitz.agents.ismcts.make_search builds one from the agent spec)")
        if config.needs_policies():
            if policies is None or policies.agent is None:
                raise ValueError(f"rollout, expand, belief or opponents=heuristic or moves=shortlist: "
                                 f"no heuristic policies were given for game {short!r} "
                                 f"(kibitz.agents.ismcts.make_search builds them from the game's heuristic)")
            self._heuristic_cls = policies.agent
            # ``rollout_action(state, rand)``: the same policy as the agent,
            # computed from the state's own lists (no agent object, no policy
            # dict, no C++ round trip)
            if config.rollout == "heuristic":
                self._rollout_fn = policies.rollout_action
            if config.moves == "shortlist":
                self._shortlist = policies.shortlist
                if self._shortlist is None:
                    raise ValueError(f"moves=shortlist: the {short!r} heuristic offers no shortlist")
        #: the game's compiled rules when the simulations run in compiled code (engine=compiled)
        self._engine_rules = None
        if self._prior is None:  # a prior handed in: PUCT, in Python
            self._engine_rules = _engine_rules(game, config)
        if self._engine_rules is not None:
            self._engine_rng = seeded_rng(int(rng.integers(2**63)))
        # random rollouts to the end on the compiled rules (kibitz.games.batched)
        self._compiled_playouts = None
        if self._engine_rules is None and (config.playouts == "compiled" and config.rollout == "random" and not config.rollout_rounds
                and config.rollout_moves < 0):
            from kibitz.games.batched import compiled_playouts
            # its generator is seeded from the search's, once (only where there
            # are compiled playouts: other games draw as before); playouts draw from it in turn
            if compiled_playouts(game) is not None:
                self._compiled_playouts = compiled_playouts(game, int(rng.integers(2**63)))
        #: simulations run by the last search
        self.last_simulations = 0
        #: the root of the last search's tree (engine=python)
        self.root = None
        #: the last compiled search's tree arrays (engine=compiled: ``_ismcts_kernel.children`` walks them)
        self.compiled_tree = None

    @staticmethod
    def compiled_engine(game, config: ISMCTSConfig) -> bool:
        """Whether a search of ``game`` with ``config`` runs its simulations in compiled code."""
        return _engine_rules(game, config) is not None

    # ------------------------------------------------------------------ search
    def search(self, state) -> dict[int, int]:
        """Runs one search from ``state`` (observer to move); returns root visit counts."""
        me = self.player_id
        if state.current_player() != me:
            raise ValueError(f"the search plays seat {me} but seat {state.current_player()} is to move")
        rnd = random.Random(int(self.rng.integers(2**63)))
        rand = rnd.random
        if self.config.rollout == "heuristic" and self._rollout_fn is None:
            seeds = self.rng.integers(2**63, size=self.game.num_players())
            self._rollout_agents = [self._heuristic_cls(self.game, p, int(seeds[p]))
                                    for p in range(self.game.num_players())]
        if self.config.expand == "heuristic":
            seeds = self.rng.integers(2**63, size=self.game.num_players())
            self._expand_agents = [self._heuristic_cls(self.game, p, int(seeds[p]))
                                   for p in range(self.game.num_players())]
        if self.config.rollout_rounds:
            self._stop_round = state.round_number() + self.config.rollout_rounds
        if self._engine_rules is not None:
            return self._compiled_search(state, rand)
        self._mark = state.log_mark() if {game_search.DIRECT, game_search.VIEWS} <= self._caps else None
        root = self.root = _Node()
        legal_root = state.legal_actions()
        self._prior_cache = {}
        self._model = None
        self._memo, self._memo_root = self._memo_for(), state
        if self.config.belief == "heuristic" or self.config.opponents == "heuristic":
            self._model = self._model_move(state, rand)
        if self.config.belief == "heuristic":
            def resample():
                return self._believed_world(state, rand)
        elif self.config.belief == "model":
            def resample():
                return self._model_world(state, rand)
        elif direct_rules(state):  # kibitz games replay without pyspiel's history bookkeeping
            memo = self._memo

            mark = self._mark

            def resample():
                world = state.resample_from_infostate(me, rand, internal=True, **memo)
                if mark is not None:  # its views since the root without writing its replayed log
                    world.anchor_view(mark)
                return world
        else:
            def resample():
                return state.resample_from_infostate(me, rand)
        try:
            first = resample()
        except (AttributeError, pyspiel.SpielError) as e:
            raise ValueError(f"IS-MCTS needs resample_from_infostate, which game "
                             f"{self.game.get_type().short_name!r} does not implement ({e})") from None
        sims, n = self.config.sims, 0
        deadline = time.perf_counter() + self.config.seconds if self.config.seconds else None
        worlds = []
        while True:
            if sims and n >= sims:
                break
            if deadline is not None and time.perf_counter() >= deadline and n > 0:
                break
            if first is not None:
                world, first = first, None
                if self.config.max_world_samples > 0:
                    worlds.append(world.clone())
            elif self.config.max_world_samples < 0:
                world = resample()
            elif len(worlds) < self.config.max_world_samples:
                world = resample()
                worlds.append(world.clone())
            else:
                world = worlds[int(rand() * len(worlds))].clone()
            self._simulate(root, world, rand)
            n += 1
        self.last_simulations = n
        return {a: (root.children[a].visits if a in root.children else 0) for a in legal_root}

    def _compiled_search(self, state, rand) -> dict[int, int]:
        """:meth:`search` with engine=compiled: the worlds drawn by the game's
        resample, as before, and their simulations run in compiled code
        (``solvers/_ismcts_kernel.py``)."""
        me, r, config = self.player_id, self._engine_rules, self.config
        legal_root = state.legal_actions()
        memo = self._memo = self._memo_for()
        self._memo_root = state
        self.root = None
        max_len = int(self.game.max_game_length())
        sims = config.sims
        deadline = time.perf_counter() + config.seconds if config.seconds else None
        tree = _kernel.new_tree(min(4 * min(sims or _ENGINE_CHUNK, 1 << 16), _ENGINE_MAX_NODES) + max_len + 2)
        simulate = _kernel.simulator(r)
        known = game_search.KNOWN_WORLD in self._caps
        root_world = r.position_of(state)[None, :] if known else None
        n = 0
        while not (sims and n >= sims) and not (deadline is not None and n > 0 and time.perf_counter() >= deadline):
            count = min(sims - n, _ENGINE_CHUNK) if sims else _ENGINE_CHUNK
            if deadline is not None:
                count = min(count, _ENGINE_TIMED_CHUNK)
            if known:  # the game's worlds are the root itself
                worlds = root_world
            else:
                worlds = np.stack([r.position_of(state.resample_from_infostate(me, rand, internal=True, **memo))
                                   for _ in range(count)])
            done, full = 0, False
            while done < count:
                ran = simulate(r.params, self.game.num_players(), r.max_branch, max_len, me, config.uct_c, worlds,
                               done, count - done, self._engine_rng, *tree)
                if ran == -3:
                    raise RuntimeError(f"{self.game}: a world went on past max_game_length() = {max_len} moves")
                if ran < 0:
                    _no_move(state, int(tree[-1][_kernel.ERROR]))
                done += ran
                if done < count:
                    bound = _ENGINE_MAX_NODES + max_len + 2
                    full = len(tree[4]) >= bound
                    if full:  # the tree stays within its bound: the search stops here
                        break
                    tree = _kernel.regrown(tree, min(2 * len(tree[4]), bound))
            n += done
            if full:
                break
        self.last_simulations = n
        self.compiled_tree = tree
        visits = tree[3][:, _kernel.VISITS]
        tried = _kernel.children(tree, 0)  # the root's children (at most one a simulation), not every legal move
        return {a: int(visits[tried[a]]) if a in tried else 0 for a in legal_root}

    def _memo_for(self) -> dict:
        """Keyword arguments for a kibitz game's internal resample: a fresh
        ``memo`` for this search where the game takes one (capability
        ``RESAMPLE_MEMO``; Doubt and Bet: the earlier rounds' hidden cards,
        which nothing in the search reads, are drawn once per search
        instead of once per world)."""
        return {"memo": {}} if game_search.RESAMPLE_MEMO in self._caps else {}

    def _model_move(self, state, rand):
        """The opponent model's move: ``move(world, player)`` is the game's
        heuristic's choice for ``player`` in ``world``.

        The policies' fast ``rollout_action`` (Doubt and Bet, Over/Under) is
        the same policy computed from the state's own lists and is called as
        it is; otherwise the heuristic agent's move, which depends only on
        that player's information state, is cached by the player and its
        information-state string (or the policies' cheaper
        ``policy_key(state, player)``, Underdog: the seat's view of the
        current round) for the search object's lifetime.
        """
        fast = self.policies.rollout_action
        if fast is not None and direct_rules(state):
            return lambda world, player: fast(world, rand)
        if self._belief_agents is None:
            seeds = self.rng.integers(2**63, size=self.game.num_players())
            self._belief_agents = [self._heuristic_cls(self.game, p, int(seeds[p]))
                                   for p in range(self.game.num_players())]
        agents, cache = self._belief_agents, self._belief_cache
        if len(cache) > 500_000:
            cache.clear()
        # the policies may say what a move depends on (``policy_key``),
        # cheaper than the information-state string it is a function of
        policy_key = self.policies.policy_key
        if policy_key is None or not direct_rules(state):
            def policy_key(world, player):
                return world.information_state_string(player)

        def move(world, player):
            key = (player, policy_key(world, player))
            choice = cache.get(key)
            if choice is None:
                choice = cache[key] = int(agents[player].step(world))
            return choice
        return move

    def _believed_world(self, state, rand):
        """A determinization drawn by rejection under the heuristic opponent model.

        At each move of another player in the current round of a candidate
        world, the heuristic's move there (:meth:`_model_move`) is compared
        with the world's; the world survives a differing move with
        probability ``belief_eps``. kibitz games check while their
        ``resample_from_infostate`` replays (``check``), so a rejected world
        costs only the replay up to the move that rejects it; other games'
        candidates are replayed from their history. Policies with a
        ``believed_draw`` (Doubt and Bet) draw each candidate themselves, in
        the same distribution, without replaying the rejected ones.
        """
        me, eps = self.player_id, self.config.belief_eps
        if self._model is None:
            self._model = self._model_move(state, rand)
        model = self._model
        this_round = state.round_number() if game_search.ROUNDS in self._caps else None

        def check(world, player, action):
            if this_round is not None and world.round_number() != this_round:
                return
            if model(world, player) != action and rand() >= eps:
                raise _Rejected

        if self._memo_root is not state:  # called outside a search (tests)
            self._memo, self._memo_root = self._memo_for(), state
        believed_draw = self.policies.believed_draw
        if direct_rules(state) and believed_draw is not None and self._memo:
            # the policies draw the candidates themselves (Doubt and Bet: each
            # player's factor worked out once per hand; the same distribution)
            memo = self._memo["memo"]
            for _ in range(self.config.belief_tries):
                self.belief_drawn += 1
                world = believed_draw(state, me, rand, model, eps, memo)
                if world is not None:
                    self.belief_kept += 1
                    return world
            return state.resample_from_infostate(me, rand, internal=True, memo=memo)
        return self._checked_world(state, rand, check)

    def _model_world(self, state, rand):
        """A determinization drawn under the opponent model (``belief=model``):
        a world consistent with the observer's information state, kept with
        the model's probability of each move of another player in it (every
        round), so that the worlds kept follow the posterior
        ``P(world | observation) ~ P_chance(world) * prod model(move)``
        (rejection sampling: the resampler draws by chance's probabilities).
        After ``belief_tries`` rejections a world is drawn without the filter
        (the searcher's information state may be one the model never
        reaches)."""
        model = self._model_entry

        def check(world, player, action):
            p = model(world, player)[2].get(action, 0.0)
            if p < 1.0 and rand() >= p:
                raise _Rejected
        if self._memo_root is not state:  # called outside a search (tests)
            self._memo, self._memo_root = self._memo_for(), state
        return self._checked_world(state, rand, check)

    def _checked_world(self, state, rand, check):
        """A world consistent with the observer's information state whose
        other players' moves ``check(world, player, action)`` lets pass (it
        raises :class:`_Rejected` otherwise), or after ``belief_tries``
        rejections one drawn without the check."""
        me = self.player_id
        if direct_rules(state):
            memo = self._memo

            def draw(last):
                return state.resample_from_infostate(me, rand, internal=True,
                                                     check=None if last else check, **memo)
        else:
            def draw(last):
                world = state.resample_from_infostate(me, rand)
                if last:
                    return world
                replay = self.game.new_initial_state()
                for action in world.history():
                    player = replay.current_player()
                    if player >= 0 and player != me:
                        check(replay, player, action)
                    replay.apply_action(action)
                return replay
        for _ in range(self.config.belief_tries):
            self.belief_drawn += 1
            try:
                world = draw(False)
            except _Rejected:
                continue
            self.belief_kept += 1
            return world
        # every try was rejected: a uniform draw, whatever its weight
        return draw(True)

    def _model_entry(self, world, player):
        """The opponent model's policy for ``player`` in ``world``, as
        ``(moves, cumulative probabilities, {move: probability})``, kept by the player and its
        information-state string for the search object's lifetime (a
        policy depends only on that)."""
        key = (player, world.information_state_string(player))
        entry = self._model_cache.get(key)
        if entry is None:
            if len(self._model_cache) > 500_000:
                self._model_cache.clear()
            probs = self.policies.model(world, player)
            moves = tuple(int(a) for a, p in probs.items() if p > 0)
            total, cumulative = 0.0, []
            for a in moves:
                total += probs[a]
                cumulative.append(total)
            if not moves or total <= 0:
                raise ValueError(f"the opponent model gave no move with a positive probability to player {player}")
            entry = self._model_cache[key] = (moves, tuple(c / total for c in cumulative),
                                              {a: probs[a] / total for a in moves})
        return entry

    def _model_pick(self, world, player, rand):
        """A move for ``player`` drawn from the opponent model's probabilities."""
        moves, cumulative, _ = self._model_entry(world, player)
        x = rand()
        for a, c in zip(moves, cumulative):
            if x < c:
                return a
        return moves[-1]

    def _model_rollout(self, state, rand):
        """rollout=model: the opponent model's move, in every seat."""
        return self._model_pick(state, state.current_player(), rand)

    def _simulate(self, root, state, rand):
        """One simulation on the determinization ``state``: down the tree
        from ``root`` to an expansion (or the end of the game), a rollout
        from there, and the backup of its returns."""
        me = self.player_id
        if direct_rules(state):  # the search's own copy: no C++ history needed
            apply, legal_of = state._apply_action, state._legal_actions
        else:
            apply = state.apply_action

            def legal_of(_player):
                return state.legal_actions()
        opponents = self.config.opponents
        modelled = (self._model is not None and opponents == "heuristic") or opponents == "model"
        shortlist = self._shortlist
        prior, puct_c = self._prior, self.config.puct_c
        node = root
        path = []  # (edge, the player who took it)
        player = state.current_player()
        while player != _TERMINAL:
            if player == _CHANCE:
                player, key = self._chance_run(state, apply, rand)
                if player == _TERMINAL:
                    break
                node = _child(node, key)
                continue
            if modelled and player != me:
                node = _child(node, self._modelled_move(state, player, apply, legal_of, rand))
                path.append((node, player))
                player = state.current_player()
                continue
            if shortlist is not None and player == me:
                legal = self._shortlisted(node, state, player, legal_of)
            else:
                legal = legal_of(player)
            if not legal:
                _no_move(state, player)
            if prior is not None and player == me:
                action = _puct(node, legal, self._prior_at(state, legal), puct_c)
                child = node.children.get(action)
                new = child is None
                if new:  # an unvisited move: the expansion
                    child = node.children[action] = _Node()
                node = child
                path.append((node, player))
                apply(action)
                if new:
                    break
                player = state.current_player()
                continue
            tried, untried, expand = self._tried(node, legal)
            if expand:
                action, child = self._expand(node, state, player, legal, tried, untried, rand)
                path.append((child, player))
                apply(action)
                break
            action, node = _select(node, tried, self.config.uct_c)
            path.append((node, player))
            apply(action)
            player = state.current_player()
        _backup(path, self._playout(state, rand))

    def _prior_at(self, state, legal):
        """The prior's policy over ``legal`` (renormalized; uniform where it
        gives them no mass) at the searcher's information state in
        ``state``, asked once per information state in a search (kept by
        the searcher's view since the root where the game has views, else by
        its information-state string)."""
        me = self.player_id
        key = state.view_since(me, self._mark) if self._mark is not None else state.information_state_string(me)
        p = self._prior_cache.get(key)
        if p is None:
            probs = self._prior(state, me)
            total = sum(probs.get(a, 0.0) for a in legal)
            p = self._prior_cache[key] = ({a: probs.get(a, 0.0) / total for a in legal} if total > 0
                                          else {a: 1.0 / len(legal) for a in legal})
        return p

    def _chance_run(self, state, apply, rand):
        """Plays the chance moves from ``state`` up to the next player's move;
        returns that player and the key of the edge below the run: what the
        observer saw of it (None at the end of the game)."""
        drawn = []
        player = _CHANCE
        if self._compiled_chance and direct_rules(state):  # the same outcomes from the same draws
            step = state.chance_step
            while player == _CHANCE:
                drawn.append(step(rand()))
                player = state.current_player()
        while player == _CHANCE:
            outcome = _sample_chance(state, rand)
            apply(outcome)
            drawn.append(outcome)
            player = state.current_player()
        if player == _TERMINAL:
            return player, None
        if self._public_chance:  # the outcomes themselves: cheaper than the string
            return player, tuple(drawn)
        if self._mark is not None:  # the observer's view since the root: cheaper, same partition
            return player, state.view_since(self.player_id, self._mark)
        return player, state.information_state_string(self.player_id)

    def _modelled_move(self, state, player, apply, legal_of, rand):
        """opponents=heuristic: plays the opponent model's move for ``player``
        (with probability belief_eps a uniformly random legal move); returns
        the key of its edge."""
        if self.config.opponents == "model":
            action = self._model_pick(state, player, rand)
        elif rand() < self.config.belief_eps:
            legal = legal_of(player)
            action = legal[int(rand() * len(legal))]
        else:
            action = self._model(state, player)
        if self._mark is None:
            apply(action)
            return action
        # the edge is what the observer saw of the move (Underdog's "keep 9"
        # shows only the card laid), not the action, so the observer's later
        # nodes do not split by hidden cards
        before = state.log_mark()
        apply(action)
        return "saw", state.view_since(self.player_id, before)

    def _shortlisted(self, node, state, player, legal_of):
        """moves=shortlist: the observer's moves searched at ``node``."""
        if self._mark is None:
            return self._shortlist(state, legal_of(player))
        # kept per node and what the observer saw since the root: a node below
        # the observer's own call can be reached with either outcome of the
        # showdown (the edge is the action), and so with other chips and other
        # legal moves
        view = state.view_since(self.player_id, self._mark)
        lists = node.moves
        if lists is None:
            lists = node.moves = {}
        moves = lists.get(view)
        if moves is None:
            moves = lists[view] = self._shortlist(state, legal_of(player))
        return moves

    def _tried(self, node, legal):
        """``(tried, untried, expand)``: the moves of ``legal`` that ``node``
        selects among, its untried ones (None where they are not listed),
        and whether the node expands now."""
        children = node.children
        widen = self.config.widen
        if widen:
            # progressive widening: the node's tried legal moves are few;
            # work from them, not from the (possibly thousands of) legal ones
            node.passes += 1
            legal_set = set(legal)
            tried = [a for a in children if a in legal_set]
            return tried, None, len(tried) < len(legal) and len(tried) < math.ceil(widen * math.sqrt(node.passes))
        if len(legal) > _MANY and len(children) * 4 < len(legal):
            # few of many legal moves tried (Doubt and Bet's claims): one is
            # surely untried; count the tried ones from the children (each
            # looked up in the legal moves, ascending as OpenSpiel lists
            # them), and _expand draws an untried one by rejection (uniform
            # all the same) instead of scanning every legal move twice
            n = len(legal)
            return [a for a in children if (i := bisect_left(legal, a)) < n and legal[i] == a], None, True
        untried = [a for a in legal if a not in children]
        return legal, untried, bool(untried)

    def _expand(self, node, state, player, legal, tried, untried, rand):
        """Adds a child for one untried move of ``node`` (with expand=heuristic,
        the heuristic's move at the node's first expansion; else uniform)
        and counts one more availability for each tried move's child.
        Returns the move and the child."""
        children = node.children
        action = None
        expanders = self._expand_agents
        if expanders is not None and (not tried if untried is None else len(untried) == len(legal)):
            action = int(expanders[player].step(state))  # the first move tried here
        if action is None or action in children:
            if untried is None and not self.config.widen:
                action = legal[int(rand() * len(legal))]
                while action in children:
                    action = legal[int(rand() * len(legal))]
            else:
                if untried is None:
                    untried = [a for a in legal if a not in children]
                action = untried[int(rand() * len(untried))]
        for a in tried:
            if a in children:
                children[a].avail += 1
        child = children[action] = _Node()
        return action, child

    def _playout(self, state, rand):
        """Plays ``state`` on (to the end, or to the round limit); its returns."""
        agents = self._rollout_agents if self.config.rollout == "heuristic" else None
        choose = self._model_rollout if self.config.rollout == "model" else None
        if direct_rules(state):
            if choose is not None:
                return self._fast_playout(state, rand, choose)
            if self._rollout_fn is not None:
                return self._fast_playout(state, rand, self._rollout_fn)
            if agents is None:
                return self._fast_playout(state, rand, None)
            stop, left = self._stop_round, self.config.rollout_moves
        else:
            stop, left = 0, -1
        apply = state.apply_action
        player = state.current_player()
        while player != _TERMINAL:
            if player == _CHANCE:
                if stop and state.round_number() >= stop:
                    return state.standing()
                apply(_sample_chance(state, rand))
                player = state.current_player()
                continue
            if left == 0:
                return state.standing()
            left -= 1
            if agents is not None:
                apply(agents[player].step(state))
            elif choose is not None:
                apply(choose(state, rand))
            else:
                legal = state.legal_actions()
                if not legal:
                    _no_move(state, player)
                apply(legal[int(rand() * len(legal))])
            player = state.current_player()
        return state.returns()

    def _fast_playout(self, state, rand, choose):
        """A rollout on a kibitz game, calling its rule methods directly:
        uniformly random moves, or ``choose(state, rand)`` (the policies'
        ``rollout_action``) if given.

        ``state.apply_action`` goes from Python to C++ and back to the game's
        ``_apply_action``, and ``legal_actions`` likewise; a rollout state is
        thrown away after its returns are read, so the C++ side's history
        bookkeeping is not needed. Profiling Underdog showed these trampolines
        at about half of the rollout time.
        """
        if choose is None and self._compiled_playouts is not None:
            if state.current_player() == _TERMINAL:  # nothing to play: no conversion
                return state.returns()
            return self._compiled_playouts(state)
        apply, legal_of = state._apply_action, state._legal_actions
        # a game may pick the uniformly random move without listing them all
        # (Doubt and Bet's claims): the same move for the same number
        pick = state.random_action if game_search.RANDOM_ACTION in self._caps else None
        current, outcomes_of = state.current_player, state.chance_outcomes
        stop, left = self._stop_round, self.config.rollout_moves
        round_of = state.round_number if stop else None
        player = current()
        while player != _TERMINAL:
            if player == _CHANCE:
                if stop and round_of() >= stop:
                    return state.standing()
                apply(draw(outcomes_of(), rand()))
                player = current()
                continue
            if left == 0:
                return state.standing()
            left -= 1
            if choose is not None:
                apply(choose(state, rand))
            elif pick is not None:
                apply(pick(player, rand()))
            else:
                legal = legal_of(player)
                apply(legal[int(rand() * len(legal))])
            player = current()
        return state.returns()

    # ------------------------------------------------------------------ policy
    def policy(self, state) -> dict[int, float]:
        """{action: probability} over the legal actions after one search."""
        return self.policy_and_visits(state)[0]

    def policy_and_visits(self, state) -> tuple[dict[int, float], dict[int, float]]:
        """The policy of :meth:`policy` and the root's visit shares (over the
        legal actions), from one search."""
        legal = state.legal_actions()
        if len(legal) == 1:
            self.last_simulations = 0
            return {legal[0]: 1.0}, {legal[0]: 1.0}
        visits = self.search(state)
        total = sum(visits.values())
        shares = {a: visits.get(a, 0) / total for a in legal}
        if self.config.final == "distribution":
            return dict(shares), shares
        top = max(visits.values())
        best = [a for a, v in visits.items() if v == top]
        return {a: (1.0 / len(best) if a in best else 0.0) for a in legal}, shares
