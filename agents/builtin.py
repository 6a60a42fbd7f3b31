"""The built-in agent kinds: random, heuristic, human."""

from __future__ import annotations

from kibitz.agents.base import RandomAgent
from kibitz.agents.heuristics import HEURISTICS
from kibitz.agents.registry import register_agent


@register_agent("random", "uniformly random legal moves")
def _random(game, player_id, seed):
    return RandomAgent(game, player_id, seed)


@register_agent("heuristic", "the game's rule-based player (games: {})".format(", ".join(sorted(HEURISTICS))))
def _heuristic(game, player_id, seed):
    short = game.get_type().short_name
    if short not in HEURISTICS:
        raise ValueError(f"no heuristic agent for game {short!r}; "
                         f"heuristics exist for: {', '.join(sorted(HEURISTICS))}")
    return HEURISTICS[short](game, player_id, seed)


@register_agent("human", "a person at the terminal (kibitz play only)")
def _human(game, player_id, seed):
    raise ValueError("the human agent is only available in `kibitz play`")
