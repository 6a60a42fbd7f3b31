"""The ``ismcts`` agent kind: single-observer IS-MCTS (solvers/ismcts.py).

Spec examples: ``ismcts``, ``ismcts(sims=1000)``, ``ismcts(seconds=0.5,sims=0)``,
``ismcts(sims=200,rollout=heuristic,final=distribution)``.

The search is handed the game's heuristic (agents/heuristics/) as
:class:`~kibitz.solvers.ismcts.SearchPolicies`: :func:`heuristic_policies`
builds them, :func:`make_search` builds a search with them where its
options use them.
"""

from __future__ import annotations

import sys

from kibitz.agents.base import Agent
from kibitz.agents.heuristics import HEURISTICS
from kibitz.agents.registry import register_agent
from kibitz.solvers.ismcts import ISMCTS, SearchPolicies, needs_policies

#: the optional functions a heuristic module may offer a search (SearchPolicies' fields)
_HOOKS = ("rollout_action", "shortlist", "policy_key", "believed_draw")


def heuristic_policies(game) -> SearchPolicies:
    """The game's heuristic as a search uses it: its agent class and the
    module-level functions its module offers (``rollout_action``,
    ``shortlist``, ``policy_key``, ``believed_draw``)."""
    short = game.get_type().short_name
    if short not in HEURISTICS:
        raise ValueError(f"rollout, expand, belief or opponents=heuristic or moves=shortlist: "
                         f"no heuristic agent for game {short!r}; "
                         f"heuristics exist for: {', '.join(sorted(HEURISTICS))}")
    cls = HEURISTICS[short]
    module = sys.modules[cls.__module__]
    return SearchPolicies(cls, **{name: getattr(module, name, None) for name in _HOOKS})


def make_search(game, player_id, rng, **options) -> ISMCTS:
    """An :class:`ISMCTS` with ``options``, handed the game's heuristic
    policies where the options use them (errors name what is missing)."""
    policies = None
    if needs_policies(**{k: options[k] for k in ("rollout", "expand", "belief", "opponents", "moves")
                         if k in options}):
        policies = heuristic_policies(game)
        if options.get("moves") == "shortlist" and policies.shortlist is None:
            with_list = sorted(g for g, cls in HEURISTICS.items()
                               if getattr(sys.modules[cls.__module__], "shortlist", None) is not None)
            raise ValueError(f"moves=shortlist: the {game.get_type().short_name!r} heuristic offers no "
                             f"shortlist; games with one: {', '.join(with_list)}")
    return ISMCTS(game, player_id, rng, policies=policies, **options)

OPTIONS = {
    "sims": (1000, "simulations per move (0 = no limit, then seconds must be > 0)"),
    "seconds": (0.0, "time per move in seconds (0 = no limit); with sims too, the first limit reached stops "
                     "the search; timed searches are not reproducible"),
    "uct_c": (0.7, "UCB1 exploration constant (returns are win shares in [0, 1] by default)"),
    "rollout": ("random", "rollout policy: random | heuristic (the game's heuristic agent in every seat)"),
    "final": ("visits", "final move: visits (most visited, ties shared) | distribution (in proportion to visits)"),
    "max_world_samples": (-1, "determinizations drawn per move (-1 = a fresh one every simulation)"),
    "widen": (0.0, "progressive widening: a node reached k times tries at most ceil(widen * sqrt(k)) moves "
                   "(0 = off: every legal move once before any twice)"),
    "expand": ("random", "first move tried at a new node: random | heuristic (the game's heuristic agent's choice)"),
    "rollout_moves": (-1, "-1 = no limit; k >= 0: stop a rollout before its (k+1)-th player move and back up "
                          "the standing there (kibitz games)"),
    "rollout_rounds": (0, "0 = roll out to the end of the game; k = stop when the k-th next round begins "
                          "and back up the standing there (underdog, over_under, doubt_and_bet)"),
    "belief": ("uniform", "determinizations: uniform (every consistent world alike) | heuristic (weighted by how "
                          "likely the game's heuristic makes the other players' moves of this round)"),
    "belief_eps": (0.1, "belief=heuristic: weight of a move the heuristic would not make, in (0, 1]"),
    "belief_tries": (50, "belief=heuristic: worlds drawn per determinization before one is used whatever "
                         "its weight"),
    "opponents": ("search", "other players' moves in the tree: search (UCB1 on their statistics) | heuristic "
                            "(the game's heuristic's move, or a random one with probability belief_eps)"),
    "moves": ("all", "the searcher's moves searched: all | shortlist (the game heuristic's shortlist: "
                     "doubt_and_bet)"),
}


class ISMCTSAgent(Agent):
    """An agent that runs one SO-ISMCTS search per move from its own seat."""

    name = "ismcts"

    def __init__(self, game, player_id, seed=None, **options):
        super().__init__(game, player_id, seed)
        self.search = make_search(game, player_id, self.rng, **options)

    def action_probabilities(self, state):
        return self.search.policy(state)


def _options(sims, seconds, uct_c, rollout, final, max_world_samples, rollout_rounds, widen, expand,
             rollout_moves, belief, belief_eps, belief_tries, opponents, moves):
    return dict(sims=int(sims), seconds=float(seconds), uct_c=float(uct_c), rollout=str(rollout),
                final=str(final), max_world_samples=int(max_world_samples),
                rollout_rounds=int(rollout_rounds), widen=float(widen), expand=str(expand),
                rollout_moves=int(rollout_moves), belief=str(belief), belief_eps=float(belief_eps),
                belief_tries=int(belief_tries), opponents=str(opponents), moves=str(moves))


@register_agent("ismcts", "information-set Monte Carlo tree search (single observer, Cowling et al. 2012)",
                options=OPTIONS)
def _ismcts(game, player_id, seed, sims=1000, seconds=0.0, uct_c=0.7, rollout="random", final="visits",
            max_world_samples=-1, rollout_rounds=0, widen=0.0, expand="random", rollout_moves=-1,
            belief="uniform", belief_eps=0.1, belief_tries=50, opponents="search", moves="all"):
    return ISMCTSAgent(game, player_id, seed, **_options(sims, seconds, uct_c, rollout, final, max_world_samples,
                                                         rollout_rounds, widen, expand, rollout_moves,
                                                         belief, belief_eps, belief_tries, opponents,
                                                         moves))
