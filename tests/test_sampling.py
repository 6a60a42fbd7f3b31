"""The one inverse-CDF draw every sampler uses."""

import numpy as np
import pyspiel

from kibitz.games.chance import draw, sample_chance


def test_each_item_is_drawn_on_its_own_interval_of_u():
    weights = [0.2, 0.0, 0.5, -1.0, 0.3]
    assert [draw(enumerate(weights), u) for u in (0.0, 0.1999, 0.2, 0.6999, 0.7, 0.9999)] == [0, 0, 2, 2, 4, 4]


def test_rounding_past_the_total_gives_the_last_positive_weight_and_none_gives_none():
    assert draw([("a", 0.5), ("b", 0.5), ("c", 0.0)], 1.0) == "b"
    assert draw(enumerate([0.0, -2.0]), 0.0) is None


def test_frequencies_follow_the_weights():
    rng = np.random.default_rng(0)
    weights = [1.0, 3.0, 0.0, 6.0]
    counts = np.bincount([draw(enumerate(weights), rng.random() * 10.0) for _ in range(20_000)], minlength=4)
    assert counts[2] == 0
    assert np.allclose(counts / counts.sum(), [0.1, 0.3, 0.0, 0.6], atol=0.015)


def test_sample_chance_draws_the_outcome_at_u():
    state = pyspiel.load_game("kuhn_poker").new_initial_state()  # three cards, 1/3 each
    assert [sample_chance(state, lambda u=u: u) for u in (0.0, 0.34, 0.99)] == [0, 1, 2]
