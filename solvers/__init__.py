"""kibitz solvers: exact CFR on compiled game trees, MCCFR and IS-MCTS.

* :mod:`solvers.tree`: compile a pyspiel game into flat arrays (cached on disk).
* :mod:`solvers.cfr`: CFR, CFR+, Linear CFR and Discounted CFR on a compiled tree.
* :mod:`solvers.evaluate`: expected returns, best response, NashConv, exploitability.
* :mod:`solvers.policy_file`: the versioned policy file; :func:`load_policy`.
* :mod:`solvers.mccfr`: external- and outcome-sampling Monte Carlo CFR over game states.
* :mod:`solvers.driver`: the solve loop of CFR and MCCFR: stop rules, checkpoints, resume.
* :mod:`solvers.solve`: one whole solve run from a ``SolveConfig`` (``kibitz solve``, ``kibitz.solve``).
* :mod:`solvers.ismcts`: single-observer information-set MCTS (the ``ismcts`` agent).

The command line is ``kibitz solve`` (``kibitz/commands/solve.py``, on ``solvers.solve``); the
documentation is ``docs/solvers/cfr.md`` and ``docs/formats/policy-file.md``.
"""

from kibitz.solvers.cfr import ALGORITHMS, CFRConfig, CFRSolver, make_config
from kibitz.solvers.evaluate import (best_response, expected_returns, exploitability, nash_conv,
                              policy_to_slots)
from kibitz.solvers.policy_file import load_policy, read_policy_file
from kibitz.solvers.tree import Tree, TreeTooLarge, compile_tree

__all__ = ["ALGORITHMS", "CFRConfig", "CFRSolver", "make_config", "best_response",
           "expected_returns", "exploitability", "nash_conv", "policy_to_slots", "load_policy",
           "read_policy_file", "Tree", "TreeTooLarge", "compile_tree"]
