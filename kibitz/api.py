"""kibitz's Python API: what the commands do, as functions.

    import kibitz
    result = kibitz.solve("kuhn_poker", algorithm="cfr+", iterations=1000, out="kuhn.json")
    kibitz.export("kuhn.json", "kuhn-agent.json")
    outcome = kibitz.tournament("kuhn_poker", ["policy(kuhn-agent.json)", "random"], games=100)

Each function takes what its command takes (the names of the command's
options, ``-`` as ``_``) and raises ValueError (or a subclass naming the
option) for bad input instead of printing; nothing here prints.
"""

from __future__ import annotations

from typing import Callable

from kibitz.solvers.solve import ConfigError, SolveConfig, SolveResult, quiet
from kibitz.solvers.train_run import TrainRun

# what each function needs is imported when it is first called, so that
# ``import kibitz.api`` (and the CLI's start) stays light

__all__ = ["load_game", "make_agent", "solve", "SolveConfig", "SolveResult", "train", "TrainRun", "export",
           "tournament", "compare", "exploit"]
# each section below adds its names to __all__ beside its definitions


def load_game(game_string: str):
    """The ``pyspiel.Game`` of ``game_string``, kibitz's games registered
    (GameStringError, a ValueError, names what is wrong)."""
    from kibitz.games import load_game as load
    return load(game_string)


def make_agent(spec: str, game, player: int, seed: int | None = None):
    """The agent (a ``pyspiel.Bot``) that ``spec`` names for seat ``player`` of ``game``."""
    from kibitz.agents.registry import make_agent as make
    return make(spec, game, player, seed)


def _check_fallback(spec: str, game, seed: int) -> None:
    make_agent(spec, game, 0, seed)


def solve(game: str | SolveConfig, *, log: Callable[[str], None] = quiet, **options) -> SolveResult:
    """Solves ``game`` as ``kibitz solve`` does: ``options`` are the fields
    of :class:`kibitz.solvers.solve.SolveConfig` (``algorithm``,
    ``iterations``, ``time_limit`` in seconds, ``out``, ``resume``, ...), or
    pass a whole config. The result has the policy, its NashConv and its
    document (written to ``out`` when given). ``log`` receives the run's
    progress lines (what ``kibitz solve`` writes to stderr)."""
    config = game if isinstance(game, SolveConfig) else SolveConfig(game, **options)
    if options and isinstance(game, SolveConfig):
        raise ValueError("give a SolveConfig or options, not both")
    from kibitz.solvers.solve import solve as run
    return run(config, log=log, check_fallback=_check_fallback)


def train(game: str | TrainRun, *, log: Callable[[str], None] = quiet, **options):
    """Trains a network policy for ``game`` as ``kibitz train`` does:
    ``options`` are the fields of :class:`kibitz.solvers.train_run.TrainRun`
    (``steps``, ``time_limit`` in seconds, ``out``, ``seed``, ``config``: a
    :class:`kibitz.solvers.train.TrainConfig` with the network's and the
    trainer's settings, ...), or pass a whole run. Returns a
    :class:`kibitz.solvers.train_run.TrainResult` (``.trainer.policy_params()``,
    ``.measure``); the network is written to ``out`` when given."""
    from kibitz.solvers.train_run import train as run

    if options and isinstance(game, TrainRun):
        raise ValueError("give a TrainRun or options, not both")
    spec_run = game if isinstance(game, TrainRun) else TrainRun(game, **options)
    opponent = spec_run.config.opponent
    factory = None
    if opponent:
        from kibitz.agents.registry import parse_spec
        from kibitz.games import GameStringError
        try:
            game_object = load_game(spec_run.game)
        except GameStringError as e:
            raise ConfigError(str(e), "GAME") from None
        try:
            if parse_spec(opponent)[0] == "human":
                raise ValueError("a human cannot hold seats in training; allowed: an automatic agent "
                                 "(kibitz agents lists them)")
            make_agent(opponent, game_object, 0, 0)
        except (ValueError, FileNotFoundError) as e:
            raise ConfigError(f"{opponent!r}: {e}", "--opponent") from None

        def factory(g, seat, agent_seed):
            return make_agent(opponent, g, seat, agent_seed)
    return run(spec_run, log=log, opponent=factory)


def export(source, out, *, unseen: str | None = None, name: str | None = None, temperature: float = 1.0) -> dict:
    """Writes the portable agent file ``out`` from a policy file or a
    network checkpoint ``source`` (``kibitz export``); returns its document."""
    from kibitz.agents.formats.export import export_agent
    return export_agent(source, out, unseen=unseen, name=name, temperature=temperature)


def tournament(game, agents=None, games: int = 100, *, log: Callable[[str], None] = quiet, **options):
    """Plays ``agents`` (agent specs, a list or their comma-separated text)
    against each other as ``kibitz tournament`` does: duplicate deals,
    every seat arrangement, ``games`` rounded up to whole deals; options are
    the fields of :class:`kibitz.agents.matches.tournament.TournamentConfig`
    (``seed``, ``workers``, ``out``: the folder of its files, ``resume``,
    ``aivat``, ``progress``, ``ray``), or pass a whole config. The outcome
    (``kibitz.agents.matches.tournament.Outcome``)'s ``results`` hold each agent's
    mean return with its 95% interval (and AIVAT's, with ``aivat``)."""
    from kibitz.agents.matches.tournament import TournamentConfig

    if isinstance(game, TournamentConfig):
        if agents is not None or options:
            raise ValueError("give a TournamentConfig or options, not both")
        config = game
    else:
        config = TournamentConfig(game, agents if agents is not None else (), games, **options)
    return config.run(log)


def exploit(game: str, agent: str, out, *, method: str = "search", seats=None, games: int = 100,
            sims=(25, 100, 400), iterations: int = 1000, points: int = 4, options: dict | None = None,
            time: float | None = None, seed: int = 0, resume: bool = False, progress: bool = False,
            stop_flag: dict | None = None) -> dict:
    """A lower bound on the exploitability of ``agent`` (an agent spec) in
    ``game``, as ``kibitz exploit`` measures it: a best response by
    ``method`` (``search``: ISMCTS-BR at each of ``sims`` simulations a
    move; ``learned`` or ``batched``: a network trained for ``iterations``
    updates a seat, measured at ``points`` points) in each of ``seats``
    (default all) against ``agent`` in the others, evaluated on ``games``
    fresh deals. ``options``: the method's settings (IS-MCTS's options for
    ``search``, the trained response's otherwise; docs/solvers/exploit.md).
    ``time``: seconds before the run stops (the games so far count;
    ``resume=True`` continues it in ``out``). ``stop_flag["signal"]`` set
    by another thread stops it too. Writes ``out/exploit.json``,
    ``curve.csv``, ``curve.png`` and returns the exploit.json document:
    per seat the gain with its 95% interval, ``mean_gain`` and
    ``mean_gain_ci95``. Bad input raises ValueError (``ExploitError``,
    naming the option)."""
    from kibitz.agents.matches.exploit import TRAINED_METHODS, run_exploit

    which = "learned_options" if method in TRAINED_METHODS else "search_options"
    return run_exploit(str(load_game(game)), agent, out, method=method, seats=seats, games=games, sims=sims,
                       seed=seed, time_limit=time, resume=resume, progress=progress, iterations=iterations,
                       points=points, stop_flag=stop_flag, **{which: options or {}})


def compare(dir_a, dir_b) -> dict:
    """Pairs two tournaments of the same game, seed and agent count game by
    game, as ``kibitz compare`` does: games with the same index share their
    deal, seating and seeds, so each agent slot's difference A - B loses the
    luck they share. Returns ``{"game", "seed", "games", "aivat", "slots"}``,
    per slot both means, ``difference``, ``se`` and its 95% interval
    (deals as clusters), and AIVAT's where both have it. A folder that is
    not such a tournament raises ValueError (``RecordsError``, naming it)."""
    from kibitz.agents.matches.tournament import paired_comparison
    return paired_comparison(str(dir_a), str(dir_b))


# ---------------------------------------------------------------------------
# errors and limits of solve, tournament, train and exploit
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# distill and improve
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# value networks
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# play, replay, serve, the lists of games and agents
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# agent files, experiments, the demo
# ---------------------------------------------------------------------------
