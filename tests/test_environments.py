"""The PettingZoo and Gymnasium environments (agents/environments.py, kibitz.pettingzoo).

PettingZoo's own API and seed tests and Gymnasium's env checker on every
kibitz game, small and default size; then our checks: a seed gives the same
episode, the action mask is the pyspiel state's legal actions at every step,
the rewards are the returns of the game replayed through pyspiel, an
illegal action is refused in one line naming it and the legal ones, and bad
arguments are refused naming the parameter and what it allows.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test

from kibitz.agents.heuristics import HEURISTICS
from kibitz.games import REGISTRY, load_game
from kibitz.pettingzoo import SingleAgentEnv, env, raw_env

ROOT = Path(__file__).resolve().parent.parent
GAMES = sorted(REGISTRY)
#: every kibitz game at its small configuration and its default size
SIZES = [REGISTRY[g].small for g in GAMES] + GAMES
#: the games with a heuristic agent (not showdown, the fifth game: it has
#: none), for the checks with heuristic opponents
HEURISTIC_GAMES = [g for g in GAMES if g in HEURISTICS]


def short_name(game_string: str) -> str:
    return game_string.split("(")[0]


@pytest.fixture(autouse=True)
def _quiet():
    # PettingZoo's and Gymnasium's checkers warn about what these
    # environments are by design: dict observations, unbounded tensors
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _masked(rng, mask) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


def _replayed(game, history):
    state = game.new_initial_state()
    for action in history:
        state.apply_action(action)
    return state


@pytest.mark.parametrize("game", SIZES)
def test_pettingzoo_api_and_seed_tests(game):
    api_test(env(game), num_cycles=1000)
    seed_test(lambda: env(game), num_cycles=1000)


@pytest.mark.parametrize("game,opponents", [(g, o) for g in SIZES for o in ("random", "heuristic")
                                              if o == "random" or short_name(g) in HEURISTICS])
def test_gymnasium_env_checker(game, opponents):
    check_env(SingleAgentEnv(game, seat=0, opponents=opponents, seed=0))


def test_gymnasium_env_checker_trained_opponents_and_rendering():
    check_env(SingleAgentEnv("pub", seat=2, opponents="trained", seed=0, render_mode="ansi"))


@pytest.mark.parametrize("game", ["kuhn_poker", "leduc_poker", "tic_tac_toe"])
def test_any_sequential_openspiel_game(game):
    api_test(env(game), num_cycles=100)
    check_env(SingleAgentEnv(game, opponents="random", seed=0))


def _aec_episode(game, seed, choose_seed):
    """Plays one AEC episode with masked random actions; checks the mask and
    the observation against the pyspiel state at every step; returns the
    trace, the rewards at the end and the state's full history."""
    e = env(game)
    e.reset(seed=seed)
    raw = e.unwrapped
    rng, trace, rewards = np.random.default_rng(choose_seed), [], {}
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, _ = e.last()
        player = raw.possible_agents.index(agent)
        assert not truncated
        if terminated:
            rewards[agent] = reward
            e.step(None)
            continue
        state = raw.state
        assert state.current_player() == player
        assert np.flatnonzero(obs["action_mask"]).tolist() == state.legal_actions()
        assert obs["observation"].tolist() == list(state.observation_tensor(player))
        for other in raw.possible_agents:
            if other != agent:
                assert not e.observe(other)["action_mask"].any()
        action = _masked(rng, obs["action_mask"])
        trace.append((agent, obs["observation"].tobytes(), action))
        e.step(action)
    return trace, rewards, raw.state.history()


@pytest.mark.parametrize("game", SIZES)
def test_aec_masks_are_the_legal_actions_and_rewards_the_returns(game):
    for seed in range(3):
        _, rewards, history = _aec_episode(game, seed, seed)
        returns = _replayed(load_game(game), history).returns()
        assert rewards == {f"player_{p}": r for p, r in enumerate(returns)}


def test_aec_seeded_episode_is_reproducible():
    for game in SIZES:
        first = _aec_episode(game, 11, 5)
        assert _aec_episode(game, 11, 5) == first
    e = env("underdog")
    e.reset(seed=3)
    again = e.observe(e.agent_selection)["observation"]
    e.reset(seed=4)
    e.reset(seed=3)
    assert np.array_equal(e.observe(e.agent_selection)["observation"], again)


def _seat_episode(e, seed, choose_seed):
    """One single-agent episode with masked random actions, the mask checked
    against the pyspiel state each step: (trace, reward, info, state)."""
    obs, info = e.reset(seed=seed)
    rng, trace, terminated = np.random.default_rng(choose_seed), [], False
    while not terminated:
        legal = e.state.legal_actions(e.seat)
        assert e.state.current_player() == e.seat
        assert np.flatnonzero(obs["action_mask"]).tolist() == legal
        assert np.flatnonzero(e.action_masks()).tolist() == legal
        assert e.observation_space.contains(obs)
        action = _masked(rng, obs["action_mask"])
        trace.append((obs["observation"].tobytes(), action))
        obs, reward, terminated, truncated, info = e.step(action)
        assert not truncated and (terminated or reward == 0.0)
    assert not obs["action_mask"].any()
    return trace, reward, info, e.state


@pytest.mark.parametrize("game", SIZES)
def test_single_agent_masks_are_the_legal_actions_and_reward_the_return(game):
    # heuristic opponents where the game has a heuristic (showdown has none)
    e = SingleAgentEnv(game, seat=0, opponents="heuristic" if short_name(game) in HEURISTICS else "random")
    for seed in range(3):
        _, reward, info, state = _seat_episode(e, seed, seed)
        returns = _replayed(load_game(game), state.history()).returns()
        assert reward == returns[0] and info["returns"] == returns


def test_single_agent_seeded_episode_is_reproducible():
    for game in HEURISTIC_GAMES:  # four seats with heuristic opponents: the games that have a heuristic
        e = SingleAgentEnv(game, seat=1, opponents=["heuristic", "random", "heuristic"])
        first = _seat_episode(e, 7, 1)
        assert _seat_episode(e, 8, 1)[3].history() != first[3].history()
        again = _seat_episode(e, 7, 1)
        assert again[:3] == first[:3] and again[3].history() == first[3].history()
        other = SingleAgentEnv(game, seat=1, opponents=["heuristic", "random", "heuristic"])
        assert _seat_episode(other, 7, 1)[3].history() == first[3].history()
    # the constructor's seed serves the first reset without one
    histories = []
    for _ in range(2):
        e = SingleAgentEnv("pub", opponents="random", seed=5)
        e.reset()
        e.step(_masked(np.random.default_rng(0), e.action_masks()))
        histories.append(e.state.history())
    assert histories[0] == histories[1]


def test_a_seat_without_a_decision_is_dealt_again():
    e = SingleAgentEnv(REGISTRY["over_under"].small, seat=1, opponents="random", seed=0)
    skipped = [r for _ in range(30) for r in e.reset()[1].get("skipped_returns", [])]
    assert skipped and all(isinstance(r, float) for r in skipped)
    with pytest.raises(RuntimeError, match="seat 2 .* no decision in 100 deals"):
        SingleAgentEnv(REGISTRY["pub"].small, seat=2, opponents="random", seed=0).reset()


def _illegal_and_legal(state, player):
    legal = state.legal_actions(player)
    return next(a for a in range(state.get_game().num_distinct_actions()) if a not in legal), legal


@pytest.mark.parametrize("make", [env, raw_env])
def test_an_illegal_action_raises_naming_it_and_the_legal_ones(make):
    e = make("underdog")
    e.reset(seed=0)
    state = e.unwrapped.state
    before = state.history()
    player = state.current_player()
    illegal, legal = _illegal_and_legal(state, player)
    with pytest.raises(ValueError) as caught:
        e.step(illegal)
    message = str(caught.value)
    assert "\n" not in message and f"player_{player} cannot play {illegal} (" in message
    assert message.split("legal: ")[1].startswith(f"{legal[0]} (") and f"{legal[-1]} (" in message
    assert state.history() == before and e.agent_selection == f"player_{player}"
    for bad, words in ((10**6, "no action of the game: ids are 0..16"), (1.5, "an integer action id"),
                       (None, "an integer action id")):
        with pytest.raises(ValueError, match=words.replace(".", r"\.")):
            e.step(bad)
    e.step(np.int64(legal[0]))  # numpy integers are actions
    assert len(state.history()) > len(before)


def test_single_agent_illegal_action_forfeits_or_raises():
    game = load_game("underdog")
    e = SingleAgentEnv("underdog", seat=0, opponents="heuristic", seed=0)
    obs, _ = e.reset(seed=0)
    illegal, legal = _illegal_and_legal(e.state, 0)
    obs, reward, terminated, truncated, info = e.step(illegal)
    assert terminated and not truncated and reward == game.min_utility()
    assert info == {"illegal_action": illegal, "legal_actions": legal}
    with pytest.raises(RuntimeError, match=r"call reset\(\)"):
        e.step(legal[0])
    e = SingleAgentEnv("underdog", seed=0, forfeit_reward=-1)
    e.reset()
    assert e.step(illegal)[1] == -1.0
    e = SingleAgentEnv("underdog", seed=0, illegal_action="raise")
    e.reset(seed=0)
    with pytest.raises(ValueError, match=f"seat 0 cannot play {illegal} .*legal: {legal[0]} "):
        e.step(illegal)


@pytest.mark.parametrize("kwargs,words", [
    ({"game": "nope"}, ["game='nope': unknown game 'nope'", "underdog"]),
    ({"game": "underdog(players=9)"}, ["game='underdog(players=9)'", "players=9", "allowed"]),
    ({"game": 7}, ["game must be", "game string"]),
    ({"game": "matrix_rps"}, ["game: matrix_rps is not a sequential game"]),
    ({"game": "underdog", "encoding": "pixels"}, ["encoding:", "'pixels'", "observation_tensor"]),
    ({"game": "underdog", "render_mode": "rgb_array"}, ["render_mode='rgb_array'", "'human', 'ansi'"]),
])
@pytest.mark.parametrize("make", [raw_env, SingleAgentEnv])
def test_bad_arguments_of_both(make, kwargs, words):
    with pytest.raises(ValueError) as caught:
        make(**kwargs)
    assert all(w in str(caught.value) for w in words), str(caught.value)


@pytest.mark.parametrize("kwargs,words", [
    ({"seat": 4}, ["seat=4", "0, 1, 2, 3"]),
    ({"seat": -1}, ["seat=-1", "0, 1, 2, 3"]),
    ({"seat": True}, ["seat=True", "0, 1, 2, 3"]),
    ({"seat": "0"}, ["seat='0'", "0, 1, 2, 3"]),
    ({"opponents": "nope"}, ["opponents: unknown agent 'nope'", "heuristic", "random"]),
    ({"opponents": "human"}, ["opponents:", "human"]),
    ({"opponents": "ismcts(sims=x)"}, ["opponents:", "sims"]),
    ({"opponents": ["random", "random"]}, ["opponents:", "a list of 3", "seats 1, 2, 3"]),
    ({"opponents": ["random", 3, "random"]}, ["opponents:", "agent spec is a string", "3"]),
    ({"opponents": 3}, ["opponents must be", "heuristic"]),
    ({"illegal_action": "ignore"}, ["illegal_action='ignore'", "'forfeit', 'raise'"]),
])
def test_bad_arguments_of_the_single_agent_env(kwargs, words):
    with pytest.raises(ValueError) as caught:
        SingleAgentEnv("underdog", **kwargs)
    assert all(w in str(caught.value) for w in words), str(caught.value)


def test_trained_opponents_need_the_size_they_were_trained_for():
    with pytest.raises(ValueError, match=r"opponents: 'trained' cannot play seat 1 .*default size"):
        SingleAgentEnv(REGISTRY["pub"].small, opponents="trained")


def test_render(capsys):
    e = env("pub", render_mode="human")
    e.reset(seed=0)
    shown = capsys.readouterr().out
    assert shown.strip() == str(e.unwrapped.state).strip()
    s = SingleAgentEnv("pub", render_mode="ansi", opponents="random")
    s.reset(seed=0)
    assert s.render() == str(s.state)


def test_vector_env_with_autoreset_runs():
    vec = gymnasium.vector.SyncVectorEnv([lambda: SingleAgentEnv("pub", opponents="heuristic")] * 2)
    obs, _ = vec.reset(seed=0)
    rng, ended = np.random.default_rng(0), 0
    for _ in range(100):
        actions = [_masked(rng, m) if m.any() else 0 for m in obs["action_mask"]]
        obs, _, terminated, _, _ = vec.step(np.array(actions))
        ended += int(terminated.sum())
    assert ended > 0 and obs["observation"].shape == (2, load_game("pub").observation_tensor_size())


def test_importing_kibitz_imports_neither_library():
    code = ("import sys, kibitz, kibitz.games, kibitz.agents, kibitz.cli\n"
            "from kibitz.games import load_game\n"
            "kibitz.agents.make_agent('heuristic', load_game('pub'), 0, seed=0)  # imports every agent module\n"
            "print(sorted(m for m in ('pettingzoo', 'gymnasium') if m in sys.modules))\n"
            "sys.modules['pettingzoo'] = None  # as without the rl extra\n"
            "try:\n"
            "    import kibitz.pettingzoo\n"
            "except ImportError as e:\n"
            "    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lines = out.stdout.splitlines()
    assert lines[0] == "[]" and lines[1].endswith("pip install 'kibitz[rl]'")


def test_the_docs_examples_run(capsys):
    """docs/environments.md's Python examples, as written."""
    text = (ROOT / "docs" / "environments.md").read_text()
    blocks = [part.split("```", 1)[0] for part in text.split("```python\n")[1:]]
    assert len(blocks) == 2
    for i, code in enumerate(blocks):
        scope: dict = {}
        exec(compile(code, f"docs/environments.md, example {i + 1}", "exec"), scope)
