"""The CFR solver's memory layouts and threads give the same numbers.

``layout="fast"`` (a value row and an edge map per player, float64) and
``layout="compact"`` (one value row; the current policy, reaches and
values in float32) run the same arithmetic: given float64 working arrays
the compact kernels give bit-for-bit the fast layout's regrets and
cumulative policy, and in their float32 they agree with it to rounding.
``threads=2`` (each thread walks its own subtrees below a split level)
groups each regret's terms by thread, so it must agree with one thread of
the same layout to 1e-12 in NashConv and repeat itself bit for bit.
"""

import numpy as np
import pytest

from kibitz import games
from kibitz.solvers.cfr import ALGORITHMS, CFRSolver
from kibitz.solvers.evaluate import nash_conv
from kibitz.solvers.tree import compile_tree

GAMES = ["kuhn_poker(players=3)", "leduc_poker", games.REGISTRY["pub"].small,
         games.REGISTRY["underdog"].small]


def _run(tree, algorithm="cfr+", iterations=25, **kwargs):
    solver = CFRSolver(tree, ALGORITHMS[algorithm], **kwargs)
    solver.run(iterations)
    return solver


@pytest.mark.parametrize("game_string", GAMES)
@pytest.mark.parametrize("algorithm", ["cfr+", "dcfr"])
def test_compact_kernels_in_float64_give_the_fast_layouts_bits(game_string, algorithm):
    tree = compile_tree(game_string, use_cache=False)
    fast = _run(tree, algorithm, layout="fast")
    compact = _run(tree, algorithm, layout="compact", working_dtype=np.float64)
    assert compact.prob.dtype == compact._opp.dtype == compact._val.dtype == np.float64
    assert (fast.layout, compact.layout) == ("fast", "compact")
    assert np.array_equal(fast.regret, compact.regret)
    assert np.array_equal(fast.cumulative, compact.cumulative)
    assert np.array_equal(fast.current_policy(), compact.current_policy())


@pytest.mark.parametrize("game_string", GAMES)
@pytest.mark.parametrize("algorithm", ["cfr+", "dcfr"])
def test_compact_layout_in_float32_agrees_with_the_fast_layout(game_string, algorithm):
    tree = compile_tree(game_string, use_cache=False)
    fast = _run(tree, algorithm, layout="fast")
    compact = _run(tree, algorithm, layout="compact")
    assert compact.prob.dtype == compact._opp.dtype == compact._val.dtype == np.float32
    assert compact.regret.dtype == compact.cumulative.dtype == np.float64  # the accumulators
    assert compact.current_policy().dtype == np.float64
    a, b = nash_conv(tree, fast.average_policy()), nash_conv(tree, compact.average_policy())
    # measured after 25 iterations: at most 4.6e-5 of the NashConv (leduc_poker, dcfr)
    assert abs(a - b) <= 1e-4 * a
    scale = np.abs(fast.regret).max()
    np.testing.assert_allclose(compact.regret, fast.regret, rtol=0, atol=1e-3 * scale)


@pytest.mark.parametrize("game_string", GAMES)
def test_two_threads_agree_with_one_and_repeat_themselves(game_string):
    tree = compile_tree(game_string, use_cache=False)
    one = _run(tree, layout="compact")
    two, again = _run(tree, threads=2), _run(tree, threads=2)
    # the levels from the split down run on both threads, each on a share
    # of the subtrees
    cuts, split = two._threads["cuts"], two._threads["split"]
    assert split < len(cuts) - 1
    below = (cuts[split:-1, 1:] - cuts[split:-1, :-1]).sum(axis=0)
    assert below.min() > 0.3 * below.sum()
    assert np.array_equal(two.regret, again.regret)
    assert np.array_equal(two.cumulative, again.cumulative)
    a, b = nash_conv(tree, one.average_policy()), nash_conv(tree, two.average_policy())
    assert abs(a - b) <= 1e-12
    np.testing.assert_allclose(two.regret, one.regret, rtol=1e-12, atol=1e-12)


def test_the_layout_follows_the_tree_size_and_threads():
    tree = compile_tree("kuhn_poker", use_cache=False)
    assert CFRSolver(tree).layout == "fast"
    assert CFRSolver(tree, threads=2).layout == "compact"
    # the compact layout holds fewer bytes
    assert CFRSolver(tree, layout="compact").nbytes() < CFRSolver(tree, layout="fast").nbytes()


@pytest.mark.parametrize("kwargs, match", [
    (dict(threads=0), "threads=0"), (dict(threads=99), "threads=99"),
    (dict(layout="small"), "layout='small'"), (dict(threads=2, layout="fast"), "one thread"),
    (dict(layout="fast", working_dtype=np.float32), "float64 otherwise"),
    (dict(layout="compact", working_dtype="int8"), "working_dtype='int8'"),
    (dict(layout="compact", working_dtype="bogus"), "working_dtype='bogus'"),
])
def test_bad_threads_or_layout_are_refused(kwargs, match):
    tree = compile_tree("kuhn_poker", use_cache=False)
    with pytest.raises(ValueError, match=match):
        CFRSolver(tree, **kwargs)


def test_the_thread_pool_starts_with_passive_waits():
    """The kernels' warm-up with threads runs the threads' kernel, which
    starts numba's thread pool: it sets OMP_WAIT_POLICY=PASSIVE first, as a
    solver with threads=2 does (spinning waits stall when the other core is
    busy), and keeps a policy set by the user; without threads it leaves
    the environment alone."""
    import os
    import subprocess
    import sys

    code = ("import os; from kibitz.solvers import _kernels; _kernels.warmup(threads=True); "
            "print(os.environ['OMP_WAIT_POLICY'])")
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "PASSIVE"
    out = subprocess.run([sys.executable, "-c", code], env={**env, "OMP_WAIT_POLICY": "ACTIVE"},
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ACTIVE"
    code = ("import os; from kibitz.solvers import _kernels; _kernels.warmup(); "
            "print(os.environ.get('OMP_WAIT_POLICY', 'unset'))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "unset"


@pytest.mark.parametrize("game_string", ["kuhn_poker(players=3)", "leduc_poker", games.REGISTRY["doubt_and_bet"].small])
@pytest.mark.parametrize("min_split", [1, 8])
def test_two_threads_split_at_any_level(game_string, min_split):
    """A split level near the root (level 1 where min_split allows it) or
    deeper: the serial parts above it and the threads below add every
    value and regret term once, in float64 to one thread's numbers up to
    rounding."""
    from kibitz.solvers.cfr import _threads_layout

    tree = compile_tree(game_string, use_cache=False)
    one = _run(tree, iterations=20, layout="compact", working_dtype=np.float64)
    two = CFRSolver(tree, ALGORITHMS["cfr+"], threads=2, working_dtype=np.float64)
    two._threads = _threads_layout(tree, two._infosets_flat, two._infosets_start, 2, min_split=min_split)
    assert two._threads["split"] <= 3
    two.run(20)
    np.testing.assert_allclose(two.regret, one.regret, rtol=1e-12, atol=1e-12 * np.abs(one.regret).max())
    np.testing.assert_allclose(two.cumulative, one.cumulative, rtol=1e-12, atol=0)
