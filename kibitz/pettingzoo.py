"""PettingZoo and Gymnasium environments of the kibitz games (and of any
sequential OpenSpiel game with observation tensors), for reinforcement
learning code: ``pip install 'kibitz[rl]'`` (pettingzoo and gymnasium).

* ``env(game_string, **kwargs)``: the PettingZoo AEC environment of the
  whole table, wrapped as PettingZoo's own are; ``raw_env`` unwrapped.
  Agents ``player_0`` .. ``player_{n-1}``, ``Discrete(num_distinct_actions)``
  actions, chance played inside (seeded by ``reset(seed=...)``).
* ``SingleAgentEnv(game_string, seat=0, opponents="heuristic", seed=None)``:
  the Gymnasium environment of one seat; kibitz agents made from agent specs
  (``random``, ``heuristic``, ``trained``, ...) play the other seats.

An observation is ``{"observation": float32 tensor, "action_mask": int8}``
(PettingZoo's action-mask convention); the reward is the game's return at
the end, 0 before. docs/environments.md has the details and an example of
each; the implementation is ``kibitz.agents.environments``.
"""

from kibitz.agents.environments import SingleAgentEnv, env, raw_env

__all__ = ["SingleAgentEnv", "env", "raw_env"]
