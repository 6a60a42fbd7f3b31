"""PettingZoo and Gymnasium environments of a pyspiel game.

Two environments, for the RL ecosystem's two standard interfaces:

* :func:`env` / ``raw_env``: a PettingZoo AEC (agent environment cycle)
  environment of the whole table. Agents ``player_0`` .. ``player_{n-1}``
  take turns as the game says (``agent_selection`` is the player to move);
  chance nodes are played inside from a generator seeded by
  ``reset(seed=...)``.
* ``SingleAgentEnv``: a Gymnasium environment of one seat. The learner plays
  ``seat``; every other seat is played by a kibitz agent made from an agent
  spec (``random``, ``heuristic``, ``trained``, ``ismcts(sims=50)``, ...:
  :func:`kibitz.agents.make_agent`); chance is played inside.

Both take a game string (or a loaded ``pyspiel.Game``): the four kibitz games
and any sequential OpenSpiel game with explicit chance and the chosen tensor.

Spaces. The action space is ``Discrete(game.num_distinct_actions())``. An
observation is a dict, PettingZoo's action-mask convention:

==============  ====================================================
key             value
==============  ====================================================
observation     float32 ``(encoding_size,)``: the player's ``encoding``
                (``observation_tensor`` by default; any encoding of
                :func:`kibitz.games.encodings`), bounds -inf..inf (a
                game declares no bounds for its tensors)
action_mask     int8 ``(num_distinct_actions,)``: 1 at the player's
                legal actions, all 0 when it is not the player's turn
                or the game is over
==============  ====================================================

Rewards. The game's returns when it ends, 0 before (the kibitz games score
only at the end; for a game with rewards along the way, the sum arrives at
the end). Every agent terminates at the end; nothing is truncated (every
game has a maximum length).

Illegal actions. The AEC environment raises a ValueError naming the action
and the legal ones, and changes nothing. The single-agent environment, by
default (``illegal_action="forfeit"``), ends the episode with the reward
``forfeit_reward`` (the game's minimum utility unless given) and says so in
``info``: Gymnasium's contract is that every action of the action space may
be stepped, and a learner without masking (plain PPO or DQN) then learns to
avoid them; ``illegal_action="raise"`` raises as the AEC environment does.
A learner with masking reads ``obs["action_mask"]`` or calls
``action_masks()`` (sb3-contrib's MaskablePPO convention).

Why the classes are built on first use. pettingzoo and gymnasium are an
optional extra (``pip install 'kibitz[rl]'``), and the agent registry
imports every module of this package when it first makes an agent. So this
module imports neither library: the rules live in the plain classes
:class:`AECTable` and :class:`SeatTable`, and ``raw_env`` (AECTable +
``pettingzoo.AECEnv``) and ``SingleAgentEnv`` (SeatTable +
``gymnasium.Env``) are made from them, importing the libraries, the first
time either name is read (a module ``__getattr__``).
"""

from __future__ import annotations

import functools
import operator

import numpy as np
import pyspiel

from kibitz.agents.registry import make_agent, resolve_spec
from kibitz.games import check_encoding, encoding_size, encoding_tensor, load_game
from kibitz.games.chance import sample_chance

#: the render modes: print the state's string, or return it
RENDER_MODES = ("human", "ansi")
#: what the single-agent environment does with an illegal action
ILLEGAL_ACTIONS = ("forfeit", "raise")
#: an illegal action's message names at most this many legal actions
LISTED = 12
#: deals the single-agent environment plays looking for one in which its
#: seat has a decision, before it gives up
MAX_DEALS = 100


def _load(game) -> pyspiel.Game:
    """The game a ``game`` argument names; ValueError naming the parameter."""
    if isinstance(game, str):
        try:
            game = load_game(game)
        except ValueError as e:
            why = str(e).removeprefix(f"{game}: ")
            raise ValueError(f"game={game!r}: {why}") from None
    elif not isinstance(game, pyspiel.Game):
        raise ValueError(f"game must be a game string (e.g. 'underdog') or a pyspiel.Game; got {game!r}")
    kind = game.get_type()
    if kind.dynamics != pyspiel.GameType.Dynamics.SEQUENTIAL:
        raise ValueError(f"game: {kind.short_name} is not a sequential game (dynamics {kind.dynamics.name}); "
                         "the environments play sequential games")
    if kind.chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC:
        raise ValueError(f"game: {kind.short_name} samples its own chance; the environments need explicit "
                         "chance outcomes")
    return game


def _check_choice(name: str, value, allowed) -> None:
    if value not in allowed:
        raise ValueError(f"{name}={value!r} must be one of: {', '.join(map(repr, allowed))}")


def _spaces(game, encoding: str):
    """(observation space, action space) of every player."""
    from gymnasium import spaces

    try:
        check_encoding(game, encoding)
    except ValueError as e:
        raise ValueError(f"encoding: {e}") from None
    actions = game.num_distinct_actions()
    observation = spaces.Dict({
        "observation": spaces.Box(-np.inf, np.inf, (encoding_size(game, encoding),), np.float32),
        "action_mask": spaces.Box(0, 1, (actions,), np.int8),
    })
    return observation, spaces.Discrete(actions)


def _mask(state, player: int) -> np.ndarray:
    """int8: 1 at ``player``'s legal actions (all 0 unless it is to move)."""
    mask = np.zeros(state.get_game().num_distinct_actions(), np.int8)
    if not state.is_terminal() and state.current_player() == player:
        mask[state.legal_actions(player)] = 1
    return mask


def _observe(state, player: int, encoding: str) -> dict:
    return {"observation": encoding_tensor(state, player, encoding), "action_mask": _mask(state, player)}


def _render(state, mode: str | None) -> str | None:
    """The state's string: printed (``human``), returned (``ansi``)."""
    if mode is None:
        from gymnasium import logger
        logger.warn("render() was called without a render_mode (choose 'human' or 'ansi')")
        return None
    if mode == "ansi":
        return str(state)
    print(state)
    return None


def _named(state, player: int, action: int) -> str:
    try:
        return f"{action} ({state.action_to_string(player, action)})"
    except Exception:  # a game that names only some ids
        return str(action)


def _legal_list(state, player: int) -> str:
    legal = state.legal_actions(player)
    shown = [_named(state, player, a) for a in legal[:LISTED]]
    more = f", ... ({len(legal)} in all)" if len(legal) > LISTED else ""
    return ", ".join(shown) + more


def _checked_action(state, player: int, action, who: str) -> int:
    """``action`` as an int if ``player`` may play it in ``state``; else a
    one-line ValueError naming ``who``, the action and the legal actions.
    Any integer type is taken (numpy's too); nothing else."""
    try:
        value = operator.index(action)
    except TypeError:
        raise ValueError(f"{who}: an action is an integer action id; got {action!r}; "
                         f"legal: {_legal_list(state, player)}") from None
    if value not in state.legal_actions(player):
        actions = state.get_game().num_distinct_actions()
        what = (_named(state, player, value) if 0 <= value < actions
                else f"{value} (no action of the game: ids are 0..{actions - 1})")
        raise ValueError(f"{who} cannot play {what}: legal: {_legal_list(state, player)}")
    return value


def _play_chance(state, rng: np.random.Generator, on_action=None) -> None:
    """Plays ``state``'s chance nodes with ``rng`` up to a decision or the end;
    ``on_action(state, action)`` is told each outcome before it is applied."""
    while state.is_chance_node():
        action = sample_chance(state, rng.random)
        if on_action is not None:
            on_action(state, action)
        state.apply_action(action)


class AECTable:
    """A PettingZoo AEC environment of a sequential pyspiel game.

    Agents ``player_0`` .. ``player_{n-1}``; ``agent_selection`` is the player
    to move. ``reset(seed=s)`` seeds the generator that plays chance;
    ``reset()`` continues it. ``step`` raises a ValueError naming an illegal
    action and the legal ones (and changes nothing). At the end every agent
    is terminated with its return as reward, and steps ``None`` to leave,
    as PettingZoo's API asks. ``state`` is the pyspiel state being played.

    Args:
        game: a game string (``"underdog"``, ``"pub(players=3)"``) or a
            loaded ``pyspiel.Game``.
        render_mode: None, ``"human"`` (``render`` prints the state, and
            every step renders) or ``"ansi"`` (``render`` returns it).
        encoding: the tensor an observation holds: ``observation_tensor``
            (default), ``information_state_tensor`` (perfect recall) or a
            kibitz game's own (``compact``): :func:`kibitz.games.encodings`.
    """

    def __init__(self, game, render_mode: str | None = None, encoding: str = "observation_tensor"):
        super().__init__()
        self.game = _load(game)
        if render_mode is not None:
            _check_choice("render_mode", render_mode, RENDER_MODES)
        self.render_mode = render_mode
        self.encoding = encoding
        observation, action = _spaces(self.game, encoding)
        self.possible_agents = [f"player_{p}" for p in range(self.game.num_players())]
        self.observation_spaces = {a: observation for a in self.possible_agents}
        self.action_spaces = {a: action for a in self.possible_agents}
        short = self.game.get_type().short_name
        self.metadata = {"name": f"kibitz_{short}", "render_modes": list(RENDER_MODES), "is_parallelizable": False}
        self.np_random = np.random.default_rng()
        self.state = None

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None:
            self.np_random = np.random.default_rng(seed)
        self.state = self.game.new_initial_state()
        _play_chance(self.state, self.np_random)
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        if not self._end_if_over(0):
            self.agent_selection = self.possible_agents[self.state.current_player()]
        if self.render_mode == "human":
            self.render()

    def step(self, action) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        player = self.possible_agents.index(agent)
        self.state.apply_action(_checked_action(self.state, player, action, agent))
        _play_chance(self.state, self.np_random)
        self._cumulative_rewards[agent] = 0.0
        self.rewards = {a: 0.0 for a in self.agents}
        if not self._end_if_over(player + 1):
            self.agent_selection = self.possible_agents[self.state.current_player()]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _end_if_over(self, next_seat: int) -> bool:
        """At the end: every agent terminated with its return as reward, the
        turn at ``next_seat`` (each then steps None to leave)."""
        if not self.state.is_terminal():
            return False
        returns = self.state.returns()
        for a in self.agents:
            self.rewards[a] = float(returns[self.possible_agents.index(a)])
            self.terminations[a] = True
        self.agent_selection = self.possible_agents[next_seat % len(self.possible_agents)]
        return True

    def observe(self, agent) -> dict:
        """``{"observation": float32 tensor, "action_mask": int8}`` of ``agent``."""
        return _observe(self.state, self.possible_agents.index(agent), self.encoding)

    def render(self) -> str | None:
        return _render(self.state, self.render_mode)

    def close(self) -> None:
        pass


def _opponent_specs(opponents, seat: int, players: int) -> list:
    """One spec per seat (None at ``seat``) from one spec or a list of the others'."""
    others = [p for p in range(players) if p != seat]
    if isinstance(opponents, str):
        specs = [opponents] * len(others)
    elif isinstance(opponents, (list, tuple)):
        specs = list(opponents)
        if len(specs) != len(others):
            raise ValueError(f"opponents: one agent spec for every other seat, or a list of {len(others)} "
                             f"(seats {', '.join(map(str, others)) or 'none'}, in order); got {len(specs)}")
    else:
        raise ValueError(f"opponents must be an agent spec (e.g. 'heuristic') or a list of them; got {opponents!r}")
    for spec in specs:
        if not isinstance(spec, str):
            raise ValueError(f"opponents: an agent spec is a string such as 'random', 'heuristic' or 'trained'; "
                             f"got {spec!r}")
        try:
            resolve_spec(spec)
        except ValueError as e:
            raise ValueError(f"opponents: {e}") from None
    out = [None] * players
    for p, spec in zip(others, specs):
        out[p] = spec
    return out


class SeatTable:
    """A Gymnasium environment of one seat of a sequential pyspiel game.

    The learner plays ``seat``; every other seat is played by a kibitz agent
    made from its spec; chance is played inside. ``reset`` plays up to the
    learner's first decision, ``step`` from one of its decisions to the next
    (or the end). The reward is the learner's return when the game ends, 0
    before. Observations are the dict of the module docstring; the info of
    the last step holds ``returns``, every seat's return.

    A deal in which the learner has no decision (the game ends first) is
    not an episode: ``reset`` deals again, and ``info["skipped_returns"]``
    lists the learner's return in each deal it skipped. Learning loses
    nothing by it (whether the learner gets a decision does not depend on
    its moves); an estimate of the learner's mean return counts those
    returns too. (In the small Pub the third seat never moves: no episode.)

    Seeding: ``reset(seed=s)`` seeds the generator that plays chance
    (``np_random``) and makes the opponents afresh with seeds drawn from it,
    so an episode depends only on ``s`` and the learner's actions; ``seed``
    given to the constructor does the same for the first reset without one.

    Args:
        game: a game string or a loaded ``pyspiel.Game``.
        seat: the learner's player id, ``0 .. num_players - 1``.
        opponents: an agent spec for every other seat (``"heuristic"``), or
            a list of specs, one per other seat in seat order.
        seed: see Seeding.
        encoding: the observation's tensor (as for the AEC environment).
        illegal_action: ``"forfeit"`` (default): an illegal action ends the
            episode with ``forfeit_reward`` and ``info["illegal_action"]``
            (and ``info["legal_actions"]``); ``"raise"``: a ValueError.
        forfeit_reward: the reward of a forfeit; None: the game's minimum
            utility.
        render_mode: None, ``"human"`` or ``"ansi"``.
    """

    def __init__(self, game, seat: int = 0, opponents="heuristic", seed: int | None = None,
                 encoding: str = "observation_tensor", illegal_action: str = "forfeit",
                 forfeit_reward: float | None = None, render_mode: str | None = None):
        super().__init__()
        self.game = _load(game)
        players = self.game.num_players()
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < players:
            raise ValueError(f"seat={seat!r} must be one of {', '.join(map(str, range(players)))} "
                             f"(the players of {self.game})")
        self.seat = int(seat)
        _check_choice("illegal_action", illegal_action, ILLEGAL_ACTIONS)
        self.illegal_action = illegal_action
        self.forfeit_reward = float(self.game.min_utility() if forfeit_reward is None else forfeit_reward)
        if render_mode is not None:
            _check_choice("render_mode", render_mode, RENDER_MODES)
        self.render_mode = render_mode
        self.encoding = encoding
        self.observation_space, self.action_space = _spaces(self.game, encoding)
        self.metadata = {"render_modes": list(RENDER_MODES)}
        self.opponent_specs = _opponent_specs(opponents, self.seat, players)
        if seed is not None:
            self.np_random = np.random.default_rng(seed)
        self.opponents = self._make_opponents()
        self.state = None
        self.over = True

    def _make_opponents(self) -> list:
        """The opponents' agents (None at the learner's seat), seeded from ``np_random``."""
        agents = []
        for player, spec in enumerate(self.opponent_specs):
            if spec is None:
                agents.append(None)
                continue
            try:
                agents.append(make_agent(spec, self.game, player, seed=int(self.np_random.integers(2**63))))
            except (ValueError, OSError) as e:
                raise ValueError(f"opponents: {spec!r} cannot play seat {player} of {self.game}: {e}") from None
        return agents

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self.opponents = self._make_opponents()
        skipped = []
        while len(skipped) < MAX_DEALS:
            self.state = self.game.new_initial_state()
            for agent in self.opponents:
                if agent is not None:
                    agent.restart_at(self.state)
            self._play_others()
            if not self.state.is_terminal():
                self.over = False
                if self.render_mode == "human":
                    self.render()
                return self._observation(), ({"skipped_returns": skipped} if skipped else {})
            skipped.append(float(self.state.returns()[self.seat]))
        raise RuntimeError(f"seat {self.seat} of {self.game} had no decision in {MAX_DEALS} deals in a row: "
                           "choose a seat that has decisions")

    def step(self, action):
        if self.over:
            raise RuntimeError("step() after the episode ended: call reset()")
        try:
            action = _checked_action(self.state, self.seat, action, f"seat {self.seat}")
        except ValueError:
            if self.illegal_action == "raise":
                raise
            self.over = True
            legal = self.state.legal_actions(self.seat)
            observation = self._observation()
            info = {"illegal_action": action, "legal_actions": legal}
            return observation, self.forfeit_reward, True, False, info
        self._apply(self.seat, action)
        self._play_others()
        reward, info = 0.0, {}
        if self.state.is_terminal():
            self.over = True
            returns = [float(r) for r in self.state.returns()]
            reward, info = returns[self.seat], {"returns": returns}
        if self.render_mode == "human":
            self.render()
        return self._observation(), reward, self.over, False, info

    def action_masks(self) -> np.ndarray:
        """bool: the learner's legal actions now (sb3-contrib's MaskablePPO reads this)."""
        return _mask(self.state, self.seat).astype(bool)

    def _apply(self, player: int, action: int) -> None:
        for other, agent in enumerate(self.opponents):
            if agent is not None and other != player:
                agent.inform_action(self.state, player, action)
        self.state.apply_action(action)

    def _play_others(self) -> None:
        """Chance and the opponents, up to the learner's turn or the end."""
        while not self.state.is_terminal():
            if self.state.is_chance_node():
                self._apply(pyspiel.PlayerId.CHANCE, sample_chance(self.state, self.np_random.random))
                continue
            player = self.state.current_player()
            if player == self.seat:
                return
            self._apply(player, int(self.opponents[player].step(self.state)))

    def _observation(self) -> dict:
        return _observe(self.state, self.seat, self.encoding)

    def render(self) -> str | None:
        return _render(self.state, self.render_mode)

    def close(self) -> None:
        pass


@functools.cache
def _classes() -> dict:
    """``raw_env`` and ``SingleAgentEnv``: the tables on the libraries' base classes."""
    try:
        import gymnasium
        from pettingzoo import AECEnv
    except ImportError as e:
        raise ImportError(f"the environments need pettingzoo and gymnasium ({e}): "
                          "pip install 'kibitz[rl]'") from None
    made = {"raw_env": type("raw_env", (AECTable, AECEnv), {"__doc__": AECTable.__doc__}),
            "SingleAgentEnv": type("SingleAgentEnv", (SeatTable, gymnasium.Env), {"__doc__": SeatTable.__doc__})}
    for cls in made.values():
        cls.__module__ = __name__  # pickle finds them here, through __getattr__
    return made


def __getattr__(name: str):
    if name in ("raw_env", "SingleAgentEnv"):
        return _classes()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def env(game, **kwargs):
    """The PettingZoo AEC environment of ``game`` (keyword arguments: see
    ``raw_env``), wrapped in PettingZoo's OrderEnforcingWrapper as PettingZoo's
    own environments are (it refuses a step or observation before reset)."""
    from pettingzoo.utils import wrappers

    return wrappers.OrderEnforcingWrapper(_classes()["raw_env"](game, **kwargs))
