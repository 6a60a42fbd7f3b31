"""kibitz agents: the agent interface, built-in agents and their specs."""

from kibitz.agents.base import Agent, RandomAgent
from kibitz.agents.registry import agent_kinds, make_agent, parse_spec, register_agent, split_specs

__all__ = ["Agent", "RandomAgent", "agent_kinds", "make_agent", "parse_spec", "register_agent",
           "split_specs"]
