"""The network policy's shape, forward pass, masking and file."""

import numpy as np
import pyspiel
import pytest

from kibitz.solvers import network as net


def test_spec_from_the_game_and_parameter_shapes():
    game = pyspiel.load_game("kuhn_poker")
    spec = net.NetworkSpec.for_game(game, hidden=(8, 4))
    params = net.init_params(spec, np.random.default_rng(0))
    assert spec.sizes == (11, 8, 4, 2)
    assert [p.shape for p in params] == [(11, 8), (8,), (8, 4), (4,), (4, 2), (2,)]
    assert all(p.dtype == np.float32 for p in params)


def test_masked_policy_is_a_distribution_over_the_legal_actions_only():
    spec = net.NetworkSpec("x", 5, 6, hidden=(7,))
    params = net.init_params(spec, np.random.default_rng(1))
    params[-1][:] = np.arange(6, dtype=np.float32) * 3  # strongly prefers the illegal high actions
    x = np.random.default_rng(2).random(5).astype(np.float32)
    probs = net.probabilities(params, x, [0, 2])
    assert set(probs) == {0, 2} and sum(probs.values()) == pytest.approx(1.0)
    mask = np.array([1, 0, 1, 0, 0, 0], np.float32)
    p = net.masked_softmax(net.forward(params, x[None, :]), mask)[0]
    assert p[[1, 3, 4, 5]].max() < 1e-12 and p[[0, 2]].sum() == pytest.approx(1.0)
    assert p[2] / p[0] == pytest.approx(probs[2] / probs[0], rel=1e-5)


def test_the_first_policy_is_near_uniform():
    game = pyspiel.load_game("kuhn_poker")
    spec = net.NetworkSpec.for_game(game)
    params = net.init_params(spec, np.random.default_rng(0))
    state = game.new_initial_state()
    state.apply_action(0)
    state.apply_action(1)
    probs = net.probabilities(params, state.information_state_tensor(0), state.legal_actions())
    assert max(abs(p - 0.5) for p in probs.values()) < 0.05


def test_save_and_load_round_trip_and_bad_files(tmp_path):
    spec = net.NetworkSpec("kuhn_poker()", 11, 2, hidden=(3,))
    params = net.init_params(spec, np.random.default_rng(3))
    net.save(tmp_path / "n.npz", spec, params)
    spec2, params2 = net.load(tmp_path / "n.npz")
    assert spec2 == spec and all(np.array_equal(a, b) for a, b in zip(params, params2))
    (tmp_path / "bad.npz").write_bytes(b"nonsense")
    with pytest.raises(ValueError, match="not a kibitz network file"):
        net.load(tmp_path / "bad.npz")
    with pytest.raises(ValueError, match="hidden must be"):
        net.NetworkSpec("g", 3, 2, hidden=())
