"""The CFR solver's memory layouts and threads give the same numbers.

``layout="fast"`` (a value row and an edge map per player) and
``layout="compact"`` (one value row) must give bit-for-bit the same
regrets and cumulative policy; ``threads=2`` groups each regret's terms by
thread, so it must agree with one thread to 1e-12 in NashConv and repeat
itself bit for bit.
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
def test_fast_and_compact_layouts_give_the_same_bits(game_string, algorithm):
    tree = compile_tree(game_string, use_cache=False)
    fast = _run(tree, algorithm, layout="fast")
    compact = _run(tree, algorithm, layout="compact")
    assert (fast.layout, compact.layout) == ("fast", "compact")
    assert np.array_equal(fast.regret, compact.regret)
    assert np.array_equal(fast.cumulative, compact.cumulative)
    assert np.array_equal(fast.current_policy(), compact.current_policy())


@pytest.mark.parametrize("game_string", GAMES)
def test_two_threads_agree_with_one_and_repeat_themselves(game_string):
    tree = compile_tree(game_string, use_cache=False)
    one = _run(tree)
    two, again = _run(tree, threads=2), _run(tree, threads=2)
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
])
def test_bad_threads_or_layout_are_refused(kwargs, match):
    tree = compile_tree("kuhn_poker", use_cache=False)
    with pytest.raises(ValueError, match=match):
        CFRSolver(tree, **kwargs)
