"""One ``kibitz value-net`` run: play the games, fit the value network, write it.

    from kibitz.agents.training.value_run import ValueNetConfig, run
    result = run(ValueNetConfig("underdog", games=4000, out="underdog.value.npz"))
    print("\\n".join(result.lines()))

A run is one :class:`ValueNetConfig`: frozen, and checked when it is made
(:class:`kibitz.solvers.solve.ConfigError` names the option at fault).
Its ``objective`` chooses what is fitted (docs/solvers/value_net.md):

- ``variance`` (the default): the afterstate network of
  :mod:`kibitz.solvers.value_net` fitted for the least variance of the
  AIVAT estimate over the games, on the nodes AIVAT corrects
  (:func:`kibitz.agents.training.value_data.collect_nodes`, deals from the
  seed words ``10**6 + seed``);
- ``mse``: the same network fitted to the games' final returns, every node
  (or a share ``keep``) an example (:func:`.value_data.collect`);
- ``state``: a state-value network on the compiled rules
  (:mod:`kibitz.solvers.state_value`) fitted to the returns of games
  streamed from the batched environment (:func:`.value_data.position_chunks`),
  for ``time_limit`` seconds or ``games`` games.

``games`` games are played with the agent specs ``agents`` rotated over the
seats; the network is written to ``out`` when given. Nothing here prints:
``progress(stage, record)`` hears of the work, ``record`` None when a
stage starts, then after each step of it: ``"play"`` after each game
(``{"game": index, "count": nodes or examples}``), ``"fit"`` after each
check of the fit (the record of ``train_for_variance``'s or
``train_value_net``'s ``on_epoch``; for ``state``, ``state_value.train``'s
``on_check`` record with ``"games"``, the games streamed so far).
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Callable

from kibitz.solvers.solve import ConfigError

#: what :class:`ValueNetConfig` can fit
OBJECTIVES = ("variance", "mse", "state")
#: the agents whose games are the data, when none are given
DEFAULT_AGENTS = {"variance": "trained,heuristic", "mse": "trained,heuristic", "state": "trained"}
#: games played for ``variance`` and ``mse`` when none are given (``state`` streams until its time is up)
DEFAULT_GAMES = 2000
#: the fewest games of a run (every tenth is held out to measure the fit)
MIN_GAMES = 10
#: the fewest games of a ``variance`` run: its fit needs two held-out games (games 8 and 21)
MIN_VARIANCE_GAMES = 22
#: ``state``'s seconds of fitting when no ``time_limit`` is given
STATE_TIME_LIMIT = 600.0
#: ``state``: games a chunk of the stream, positions kept a game, games held out to measure the fit
STATE_CHUNK, STATE_PER_GAME, STATE_HELD_OUT = 8192, 6, 4096


@dataclasses.dataclass(frozen=True)
class ValueNetConfig:
    """One ``kibitz value-net`` run; every field is an option of the command
    (``agents`` a sequence of specs or their comma-separated text,
    ``time_limit`` in seconds, ``out`` None: nothing written). None takes the
    objective's default: ``agents`` trained,heuristic (``state``: trained),
    ``games`` 2000 (``state``: as many as ``time_limit`` allows), ``hidden``
    64 (``state``: 256,256), ``time_limit`` none (``state``: 600 s); the
    made config holds the values the run uses. Checked when made: the game
    loads and has the encoding, the numbers are in range, ``keep`` below 1
    only for ``mse``, each agent can be made (``state``: has a batched form)."""

    game: str
    objective: str = "variance"
    agents: tuple | str | None = None
    games: int | None = None
    keep: float = 1.0
    seed: int = 0
    time_limit: float | None = None
    epochs: int = 20
    hidden: tuple | None = None
    encoding: str = "observation_tensor"
    out: str | None = None

    def __post_init__(self):
        from kibitz.games import check_encoding, load_game

        if self.objective not in OBJECTIVES:
            raise ConfigError(f"{self.objective!r}: allowed: {', '.join(OBJECTIVES)}", "--objective")
        try:
            game = load_game(self.game)
        except ValueError as e:  # GameStringError is one
            raise ConfigError(str(e), "GAME") from None
        try:
            check_encoding(game, self.encoding)
        except ValueError as e:
            raise ConfigError(str(e), "--encoding") from None
        self._check_numbers()
        state = self.objective == "state"
        if self.keep != 1.0 and self.objective != "mse":
            why = "--objective state streams a fixed number of positions a game" if state else \
                "the variance objective needs every corrected node of a game"
            raise ConfigError(f"{self.keep:g}: {why}; --keep is for --objective mse", "--keep")
        if state and self.encoding != "observation_tensor":
            raise ConfigError(f"{self.encoding}: --objective state reads every player's observation tensor "
                              "(allowed: observation_tensor)", "--encoding")
        self._fill_defaults()
        if state:
            self._check_batched_agents(game)
        else:
            self._check_agents(game)

    def _check_numbers(self) -> None:
        for name, value, low in (("--games", self.games, MIN_GAMES), ("--seed", self.seed, 0),
                                 ("--epochs", self.epochs, 1)):
            if value is not None and value < low:
                raise ConfigError(f"{value}: at least {low}", name)
        if self.objective == "variance" and self.games is not None and self.games < MIN_VARIANCE_GAMES:
            raise ConfigError(f"{self.games}: at least {MIN_VARIANCE_GAMES} for the variance objective (its fit "
                              "holds out two games or more: games 8, 21, ...)", "--games")
        if not 0 < self.keep <= 1:  # nan too
            raise ConfigError(f"{self.keep!r}: allowed a share in (0, 1]", "--keep")
        if self.time_limit is not None and not self.time_limit > 0:
            raise ConfigError(f"{self.time_limit}: a duration must be more than 0", "--time")
        if self.hidden is not None and (not self.hidden or not all(
                isinstance(w, int) and w >= 1 for w in self.hidden)):
            raise ConfigError(f"{self.hidden!r}: allowed: one or more layer widths of at least 1", "--hidden")

    def _fill_defaults(self) -> None:
        from kibitz.agents.registry import split_specs
        from kibitz.solvers import state_value, value_net

        state = self.objective == "state"
        agents = self.agents or DEFAULT_AGENTS[self.objective]
        try:
            specs = split_specs(agents) if isinstance(agents, str) else list(agents)
        except ValueError as e:
            raise ConfigError(_batched_error(e) if state else str(e), "--agents") from None
        fill = {"agents": tuple(specs),
                "hidden": tuple(self.hidden or (state_value.HIDDEN if state else value_net.HIDDEN))}
        if not state:
            fill["games"] = self.games or DEFAULT_GAMES
        elif self.time_limit is None:
            fill["time_limit"] = STATE_TIME_LIMIT
        for name, value in fill.items():
            object.__setattr__(self, name, value)

    def _check_agents(self, game) -> None:
        from kibitz.agents.registry import check_automatic_agent

        for spec in self.agents:
            check_automatic_agent(spec, game, "--agents", "play the games")

    def _check_batched_agents(self, game) -> None:
        from kibitz.agents.matches.batched_match import batched_agents
        from kibitz.solvers.state_value import compiled_features

        try:
            compiled_features(game)
            batched_agents(list(self.agents), game)
        except ValueError as e:
            raise ConfigError(_batched_error(e), "--agents") from None


def _batched_error(error: ValueError) -> str:
    from kibitz.agents.matches.batched_match import BATCHED_KINDS

    return f"{error} (--objective state plays {', '.join(BATCHED_KINDS)})"


@dataclasses.dataclass
class ValueNetResult:
    """What a run made: ``net`` (a :class:`kibitz.solvers.value_net.ValueNet`,
    or for ``state`` a :class:`kibitz.solvers.state_value.StateValueNet`;
    ``net.meta`` holds its settings, data and fit), the seconds of playing
    the games (``play_seconds``; None for ``state``, which plays as it fits)
    and of fitting; :meth:`lines` is the command's summary."""

    config: ValueNetConfig
    game: object
    net: object
    play_seconds: float | None
    fit_seconds: float

    def lines(self) -> list[str]:
        """The summary ``kibitz value-net`` prints (``written:`` when the config has ``out``)."""
        c, net = self.config, self.net
        lines = [f"game:      {self.game}"]
        if c.objective == "state":
            lines += self._state_lines()
        else:
            spec, fit, data = net.spec, net.meta["fit"], net.meta["data"]
            lines += [f"agents:    {', '.join(c.agents)} (rotated over the seats), seed {c.seed}",
                      f"features:  {c.encoding} of each of {self.game.num_players()} players "
                      f"({spec.input_size:,} floats)",
                      f"network:   hidden {','.join(map(str, spec.hidden))}, actions "
                      + (f"factored ({spec.action_rows - 1} factors)" if spec.factored else f"{spec.num_actions:,}")
                      + f", chance outcomes {spec.chance_outcomes}"]
            if c.objective == "variance":
                lines += [f"data:      {c.games:,} games, {data['nodes']:,} corrected nodes ({data['chance_nodes']:,} "
                          f"chance nodes), {data['candidates']:,} children, {self.play_seconds:.1f} s",
                          f"fit:       held-out variance of the estimate {fit['variance']:.5f} against "
                          f"{fit['variance_plain']:.5f} plain (ratio per player "
                          f"{', '.join(f'{r:.3f}' for r in fit['ratio'])}), {data['held_out_games']:,} held-out "
                          f"games, epoch {fit['epoch']} of {fit['epochs']}, {self.fit_seconds:.1f} s"]
            else:
                lines += [f"data:      {c.games:,} games, {data['examples']:,} examples ({data['chance_examples']:,} "
                          f"at chance nodes; keep {c.keep:g}), {self.play_seconds:.1f} s",
                          f"fit:       held-out MSE {fit['mse']:.5f} against {fit['mse_mean']:.5f} for the mean "
                          f"returns (R^2 {fit['r2']:.4f}), epoch {fit['epoch']} of {fit['epochs']}, "
                          f"{self.fit_seconds:.1f} s"]
        return lines + ([f"written:   {c.out}"] if c.out else [])

    def _state_lines(self) -> list[str]:
        from kibitz.solvers.state_value import feature_size

        c, fit = self.config, self.net.meta["fit"]
        return [f"agents:    {', '.join(c.agents)} (seated as batched_match seats them), seed {c.seed}",
                f"features:  every player's observation tensor and who moves "
                f"({feature_size(self.game):,} floats), on the compiled rules",
                f"network:   state values, hidden {','.join(map(str, c.hidden))}",
                f"data:      {fit['chunks'] * STATE_CHUNK:,} games streamed, {fit['positions']:,} positions "
                f"({STATE_PER_GAME} a game), each used once",
                f"fit:       held-out MSE {fit['mse']:.5f} against {fit['mse_mean']:.5f} for the mean returns "
                f"(R^2 {fit['r2']:.4f}) on {fit['held_out_positions']:,} positions of {STATE_HELD_OUT:,} other "
                f"games, best at chunk {fit['check']} of {fit['chunks']}, {fit['seconds']:.1f} s"]


def _no_progress(stage: str, record: dict | None) -> None:
    """The default ``progress``: hears nothing."""


def run(config: ValueNetConfig, progress: Callable[[str, dict | None], None] | None = None) -> ValueNetResult:
    """Plays the games of ``config``, fits its network and writes it to
    ``config.out`` (when given); ``progress`` as the module docstring
    says. Errors of the fit (too few held-out games: ValueError) pass through."""
    from kibitz.games import load_game

    game = load_game(config.game)
    report = progress or _no_progress
    if config.objective == "state":
        return _run_state(config, game, report)
    return _run_played(config, game, report)


def _run_played(config: ValueNetConfig, game, report) -> ValueNetResult:
    """The ``variance`` and ``mse`` objectives: the games played, then the afterstate network fitted."""
    from kibitz.agents.training import value_data
    from kibitz.solvers import value_net as vn

    specs = list(config.agents)

    def on_game(index: int, count: int) -> None:
        report("play", {"game": index, "count": count})

    report("play", None)
    if config.objective == "variance":
        data, play_seconds = value_data.collect_nodes(game, specs, config.games, seed=config.seed,
                                                      encoding=config.encoding, on_game=on_game)
    else:
        data, play_seconds = value_data.collect(game, specs, config.games, seed=config.seed,
                                                encoding=config.encoding, keep=config.keep, on_game=on_game)
    report("fit", None)
    settings = {"agents": specs, "games": config.games, "data_seconds": round(play_seconds, 1)}
    fit = {"hidden": config.hidden, "encoding": config.encoding, "epochs": config.epochs, "seed": config.seed,
           "time_limit": config.time_limit, "on_epoch": lambda record: report("fit", record), "settings": settings}
    t0 = time.perf_counter()
    if config.objective == "variance":
        settings["deal_seed_words"] = [value_data.SEED_OFFSET + config.seed, 43]
        net = vn.train_for_variance(game, data, **fit)
    else:
        settings["keep"] = config.keep
        net = vn.train_value_net(game, data, **fit)
    fit_seconds = time.perf_counter() - t0
    if config.out is not None:
        vn.save(config.out, net)
    return ValueNetResult(config, game, net, play_seconds, fit_seconds)


def _run_state(config: ValueNetConfig, game, report) -> ValueNetResult:
    """The ``state`` objective: :func:`kibitz.solvers.state_value.train` on
    :func:`.value_data.position_chunks`, for ``time_limit`` seconds or ``games`` games."""
    import numpy as np

    from kibitz.agents.training import value_data
    from kibitz.solvers import state_value

    specs, seed = list(config.agents), config.seed
    held_out = value_data.position_sample(game, specs, STATE_HELD_OUT, STATE_PER_GAME,
                                          np.random.SeedSequence((seed, 46)))
    max_chunks = None if config.games is None else math.ceil(config.games / STATE_CHUNK)
    report("fit", None)
    chunks = value_data.position_chunks(game, specs, seed, chunk=STATE_CHUNK, per_game=STATE_PER_GAME)
    settings = {"objective": "state", "agents": specs, "chunk_games": STATE_CHUNK,
                "positions_per_game": STATE_PER_GAME, "held_out_games": STATE_HELD_OUT,
                "seed_words": {"chunks": [seed, 47], "held_out": [seed, 46]}}
    net = state_value.train(game, chunks, held_out, hidden=config.hidden, seed=seed, time_limit=config.time_limit,
                            max_chunks=max_chunks,
                            on_check=lambda record: report("fit", {**record, "games": record["chunk"] * STATE_CHUNK}),
                            settings=settings)
    if config.out is not None:
        state_value.save(config.out, net)
    return ValueNetResult(config, game, net, None, net.meta["fit"]["seconds"])
