"""The ``ismcts`` agent kind: single-observer IS-MCTS (solvers/ismcts.py).

Spec examples: ``ismcts``, ``ismcts(sims=1000)``, ``ismcts(seconds=0.5,sims=0)``,
``ismcts(sims=200,rollout=heuristic,final=distribution)``, ``ismcts(preset=one_round)``,
``ismcts(belief,sims=200)`` (a preset, with options in place of its values),
``ismcts(best_response,model=heuristic,sims=200)`` (ISMCTS-BR: a best
response to the heuristic, which is its belief and plays the other seats),
``ismcts(prior=trained,sims=100)`` (PUCT at its own nodes with the trained
network's policy as prior), ``ismcts(guided,sims=100)`` (that prior, and the
trained network as opponent model).

The options are the fields of :class:`~kibitz.solvers.ismcts.ISMCTSConfig`
and the presets its :data:`~kibitz.solvers.ismcts.PRESETS`.

The search is handed the game's heuristic (agents/heuristics/) as
:class:`~kibitz.solvers.ismcts.SearchPolicies`: :func:`heuristic_policies`
builds them, :func:`make_search` builds a search with them where its
options use them. Any agent spec can be the search's opponent model
(``model=SPEC``, for the options ``belief``, ``opponents`` and ``rollout``
``=model``): :func:`model_policy` builds the callable from it. An agent
spec whose ``action_probabilities`` are known (:data:`PRIOR_KINDS`) can be
its prior (``prior=SPEC``: PUCT at the searcher's own nodes), built the
same way.
"""

from __future__ import annotations

import dataclasses
import sys

import numpy as np

from kibitz.agents.base import Agent
from kibitz.agents.heuristics import HEURISTICS
from kibitz.agents.registry import make_agent, parse_spec, register_agent
from kibitz.solvers.ismcts import PRESETS, ISMCTS, ISMCTSConfig, SearchPolicies, make_config

#: the optional functions a heuristic module may offer a search (SearchPolicies' fields)
_HOOKS = ("rollout_action", "shortlist", "policy_key", "believed_draw")
#: the agent kinds a prior may be: a policy read off a file, a network or a rule, no search
PRIOR_KINDS = ("trained", "net", "policy", "heuristic", "random")


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


def model_policy(game, spec: str, seed: int | None = None):
    """The agent ``spec`` in every seat of ``game`` as one policy callable,
    ``model(state, player) -> {action: probability}`` (its agents'
    ``action_probabilities``): the opponent model a search is handed.
    ``seed`` seeds the agents (seat ``p`` gets a seed drawn from it)."""
    seeds = np.random.SeedSequence(seed).generate_state(game.num_players(), dtype=np.uint32)
    agents = [make_agent(spec, game, p, seed=int(seeds[p])) for p in range(game.num_players())]

    def model(state, player):
        return agents[player].action_probabilities(state)
    return model


def prior_policy(game, spec: str, seed: int | None = None):
    """The agent ``spec`` as a search's prior (``prior=SPEC``): the callable
    of :func:`model_policy`, for a spec of one of :data:`PRIOR_KINDS`;
    ValueError naming the option and what it allows otherwise, or when the
    agent cannot be made for ``game``."""
    allowed = ("the prior is an agent spec whose action_probabilities are known: "
               "trained, net(FILE), policy(FILE), heuristic or random")
    try:
        kind = parse_spec(spec)[0]
    except ValueError as e:
        raise ValueError(f"prior={spec}: {e}; {allowed}") from None
    if kind not in PRIOR_KINDS:
        raise ValueError(f"prior={spec}: {kind!r} cannot be a prior; {allowed}")
    try:
        return model_policy(game, spec, seed)
    except (ValueError, OSError) as e:
        raise ValueError(f"prior={spec}: {e}") from None


def make_search(game, player_id, rng, config: ISMCTSConfig | str | None = None, *, model: str | None = None,
                prior: str | None = None, **options) -> ISMCTS:
    """An :class:`ISMCTS` with ``config`` (a config, a preset's name or None:
    the defaults) and ``options`` in place of its values, handed the game's
    heuristic policies where the options use them, the agent spec
    ``model`` as its opponent model where they use one and the agent spec
    ``prior`` as its prior (``model`` and ``prior`` are options too; errors
    name what is missing)."""
    options.update((k, v) for k, v in (("model", model), ("prior", prior)) if v is not None)
    config = make_config(config, **options)
    policies = SearchPolicies()
    if config.needs_model():
        if not config.model:
            raise ValueError("belief, opponents or rollout=model: give the opponent model as model=SPEC "
                             "(an agent spec, e.g. model=heuristic)")
        policies = SearchPolicies(model=model_policy(game, config.model, int(rng.integers(2**32))))
    elif config.model:
        raise ValueError(f"model={config.model}: no option uses the opponent model; "
                         f"give belief, opponents or rollout=model (or preset=best_response)")
    if config.prior:
        policies = dataclasses.replace(policies, prior=prior_policy(game, config.prior, int(rng.integers(2**32))))
    if config.needs_policies():
        policies = dataclasses.replace(heuristic_policies(game), model=policies.model, prior=policies.prior)
        if config.moves == "shortlist" and policies.shortlist is None:
            with_list = sorted(g for g, cls in HEURISTICS.items()
                               if getattr(sys.modules[cls.__module__], "shortlist", None) is not None)
            raise ValueError(f"moves=shortlist: the {game.get_type().short_name!r} heuristic offers no "
                             f"shortlist; games with one: {', '.join(with_list)}")
    return ISMCTS(game, player_id, rng, config, policies=policies)


#: the agent's options: a preset, then the config's fields (default, help)
OPTIONS = {"preset": (None, f"a named configuration, whose values the other options given replace: "
                            f"{' | '.join(PRESETS)}")}
# the agent specs (model, prior) default to None: no spec
OPTIONS.update((f.name, (f.default if f.default != "" else None, f.metadata["help"]))
               for f in dataclasses.fields(ISMCTSConfig))


def _spelled(config: ISMCTSConfig) -> str:
    """A config as agent-spec options: the values that differ from the defaults."""
    return ",".join(f"{k}={v}" for k, v in config.changes().items()) or "(the defaults)"


class ISMCTSAgent(Agent):
    """An agent that runs one SO-ISMCTS search per move from its own seat."""

    name = "ismcts"

    def __init__(self, game, player_id, seed=None, config: ISMCTSConfig | str | None = None, **options):
        super().__init__(game, player_id, seed)
        self.search = make_search(game, player_id, self.rng, config, **options)

    def action_probabilities(self, state):
        return self.search.policy(state)

    def policy_and_visits(self, state) -> tuple[dict[int, float], dict[int, float]]:
        """The policy of :meth:`action_probabilities` and the root's visit
        shares, from one search (distillation's targets: agents/training/distill.py)."""
        return self.search.policy_and_visits(state)


@register_agent("ismcts", "information-set Monte Carlo tree search (single observer, Cowling et al. 2012)",
                options=OPTIONS, positional="preset",
                presets={name: _spelled(config) for name, config in PRESETS.items()})
def _ismcts(game, player_id, seed, preset=None, **options):
    return ISMCTSAgent(game, player_id, seed, preset, **options)
