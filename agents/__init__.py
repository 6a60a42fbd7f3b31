"""kibitz agents: the agent interface, built-in agents and their specs."""

from agents.base import Agent, RandomAgent
from agents.registry import AGENT_HELP, make_agent, parse_spec

__all__ = ["Agent", "RandomAgent", "AGENT_HELP", "make_agent", "parse_spec"]
