"""kibitz: AI opponents for small bluffing card games.

The Python API is :mod:`kibitz.api`, whose names are also here
(one function a command: ``kibitz.solve``, ``kibitz.train``, ``kibitz.tournament``,
``kibitz.exploit``, ``kibitz.export``, ``kibitz.distill``, ``kibitz.serve``, ...; and
``kibitz.make_agent``, ``kibitz.load_game``, ``kibitz.SolveConfig``); the configs, errors and
limits are in :mod:`kibitz.api`;
they are imported on first use, so ``import kibitz`` stays light.
"""

_API = ("load_game", "make_agent", "solve", "SolveConfig", "SolveResult", "train", "TrainRun", "export",
        "tournament", "compare", "exploit", "distill", "improve", "value_net", "play", "replay", "serve",
        "experiment", "demo", "iterate")

__all__ = list(_API)


def __getattr__(name):
    if name in _API:
        from kibitz import api
        return getattr(api, name)
    raise AttributeError(f"module 'kibitz' has no attribute {name!r}")
