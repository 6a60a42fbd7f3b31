"""The batched environment on the compiled rules (games/batched.py)."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest

import kibitz.games  # noqa: F401  (registers the games)
from kibitz.games import REGISTRY
from kibitz.games.batched import BatchedEnv

GAMES = ("pub", "underdog", "over_under", "doubt_and_bet")


def _replayed(game, moves):
    state = game.new_initial_state()
    for a in moves:
        state.apply_action(int(a))
    return state


def _check_rows(env, game, observe):
    for b in range(env.batch):
        state = _replayed(game, env.history[b, :env.history_len[b]])
        assert env.player[b] == state.current_player()
        assert np.flatnonzero(env.mask[b]).tolist() == state.legal_actions()
        assert env.legal_actions[b, :env.num_legal[b]].tolist() == state.legal_actions()
        if observe:
            np.testing.assert_array_equal(env.obs[b], np.asarray(state.observation_tensor(int(env.player[b])),
                                                                 dtype=np.float32))
        if env.ended[b]:
            final = _replayed(game, env.final_history[b, :env.final_len[b]])
            assert final.is_terminal() and env.returns[b].tolist() == final.returns()


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("size", ["small", "default"])
def test_every_row_is_the_pyspiel_game_its_moves_make(name, size):
    """Each row's player to move, legal actions (mask and list), observation
    tensor (where the rules compile it) and, when a game ends, returns are
    those of the pyspiel state that its recorded moves make."""
    game = pyspiel.load_game(REGISTRY[name].small if size == "small" else name)
    observe = game.compiled_rules().observation is not None
    env = BatchedEnv(game, 8, seed=1, observe=observe, record=True)
    env.reset()
    _check_rows(env, game, observe)
    ended = 0
    for _ in range(60 if size == "small" else 25):
        env.step(env.random_actions())
        _check_rows(env, game, observe)
        ended += int(env.ended.sum())
    if size == "small":
        assert ended > 0


@pytest.mark.parametrize("name", ["pub", "over_under", "doubt_and_bet"])
def test_the_compact_encoding_is_the_states(name):
    """encoding="compact" (what the shipped networks of these games read):
    each row's tensor is the pyspiel state's compact_tensor for the mover."""
    game = pyspiel.load_game(name)
    env = BatchedEnv(game, 6, seed=2, encoding="compact", record=True)
    env.reset()
    for _ in range(20):
        for b in range(env.batch):
            state = _replayed(game, env.history[b, :env.history_len[b]])
            np.testing.assert_array_equal(env.obs[b], np.asarray(state.compact_tensor(int(env.player[b])),
                                                                 dtype=np.float32))
        env.step(env.random_actions())


def test_a_seed_gives_the_same_games():
    game = pyspiel.load_game("underdog")
    runs = []
    for seed in (3, 3, 4):
        env = BatchedEnv(game, 16, seed=seed, observe=False)
        env.reset()
        env.play_random(50)
        runs.append(env.pos.copy())
    assert np.array_equal(runs[0], runs[1]) and not np.array_equal(runs[0], runs[2])


def test_bad_input_names_what_is_wrong():
    game = pyspiel.load_game("pub")
    with pytest.raises(ValueError, match="batch=0; allowed: a whole number >= 1"):
        BatchedEnv(game, 0)
    with pytest.raises(ValueError, match="no compiled rules"):
        BatchedEnv(pyspiel.load_game("kuhn_poker"), 4)
    with pytest.raises(ValueError, match="encoding='infostate'; allowed: observation_tensor, compact"):
        BatchedEnv(game, 2, encoding="infostate")
    with pytest.raises(ValueError, match="do not compute the compact encoding"):
        BatchedEnv(pyspiel.load_game("underdog"), 2, encoding="compact")
    env = BatchedEnv(game, 2, observe=False)
    env.reset()
    with pytest.raises(ValueError, match=r"shape \(3,\), expected \(2,\)"):
        env.step([0, 0, 0])
    illegal = [next(a for a in range(env.mask.shape[1]) if not env.mask[0, a]), env.legal_actions[1, 0]]
    with pytest.raises(ValueError, match=r"actions\[0\]=\d+ is not legal in game 0"):
        env.step(illegal)


def test_the_docs_example_runs():
    """docs/batched.md's Python examples, as written (100 steps of 256 Pub
    games; a 2,000-game batched match)."""
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "batched.md").read_text()
    blocks = [part.split("```", 1)[0] for part in text.split("```python\n")[1:]]
    assert len(blocks) == 2
    scope: dict = {}
    exec(compile(blocks[0], "docs/batched.md", "exec"), scope)
    env = scope["env"]
    assert env.steps > 100 * 256 and env.obs.shape == (256, env.game.observation_tensor_size())
    scope = {}
    exec(compile(blocks[1], "docs/batched.md", "exec"), scope)
    assert scope["result"]["games"] == 2000
