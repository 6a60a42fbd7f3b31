"""Agent specs, the registry and the built-in agents."""

import numpy as np
import pyspiel
import pytest
from click.testing import CliRunner

from kibitz import games  # noqa: F401
from kibitz.agents import make_agent, parse_spec, split_specs
from kibitz.agents.base import Agent
from kibitz.cli import main


def test_parse_and_split_specs():
    assert parse_spec("random") == ("random", {})
    assert parse_spec("ismcts(sims=10, uct_c=1.5, rollout=heuristic)") == (
        "ismcts", {"sims": 10, "uct_c": 1.5, "rollout": "heuristic"})
    assert parse_spec("policy(runs/a.json.gz)") == ("policy", {None: "runs/a.json.gz"})
    assert split_specs("a,ismcts(sims=5,uct_c=2),b") == ["a", "ismcts(sims=5,uct_c=2)", "b"]
    with pytest.raises(ValueError, match="empty agent spec"):
        split_specs("a,,b")
    with pytest.raises(ValueError, match="bad agent spec"):
        parse_spec("9lives")


def test_agents_are_pyspiel_bots_and_seeded():
    game = pyspiel.load_game("underdog(players=3)")
    state = game.new_initial_state()
    for a in [6, 1, 11, 3]:
        state.apply_action(a)
    for spec in ("random", "heuristic"):
        a1, a2 = make_agent(spec, game, 0, seed=3), make_agent(spec, game, 0, seed=3)
        assert isinstance(a1, pyspiel.Bot) and isinstance(a1, Agent)
        moves1 = [a1.step(state) for _ in range(10)]
        assert moves1 == [a2.step(state) for _ in range(10)]
        policy, action = a1.step_with_policy(state)
        assert sum(p for _, p in policy) == pytest.approx(1.0)
        assert action in state.legal_actions()


def test_random_agent_is_uniform():
    game = pyspiel.load_game("underdog(players=3)")
    state = game.new_initial_state()
    for a in [6, 1, 11, 3]:
        state.apply_action(a)
    agent = make_agent("random", game, 0, seed=1)
    counts = np.bincount([agent.step(state) for _ in range(2000)], minlength=2)
    assert abs(counts[0] - counts[1]) < 200


def test_unknown_agents_and_options_are_clear_errors():
    game = pyspiel.load_game("underdog(players=3)")
    with pytest.raises(ValueError, match="unknown agent 'wizard'; agents are: .*random"):
        make_agent("wizard", game, 0)
    with pytest.raises(ValueError, match="takes no options"):
        make_agent("random(depth=2)", game, 0)
    with pytest.raises(ValueError, match="only key=value"):
        make_agent("heuristic(7)", game, 0)
    with pytest.raises(ValueError, match="no heuristic agent for game 'kuhn_poker'"):
        make_agent("heuristic", pyspiel.load_game("kuhn_poker"), 0)


def test_agents_command_lists_kinds():
    out = CliRunner().invoke(main, ["agents"]).output
    for name in ("random", "heuristic", "human"):
        assert f"{name}:" in out


def test_underdog_heuristic_win_chance_matches_an_exact_count(monkeypatch):
    """The heuristic's sampled chance to win a showdown (vectorized) agrees
    with counting every deal: seat 2 (turn order 0) holds 4 with underdog 6;
    seat 0 has fought, seat 1 is undecided (fights with chance FIGHT_RATE)."""
    import itertools
    import types

    from kibitz.agents.heuristics import underdog as uh

    game = pyspiel.load_game("underdog(players=3)")
    view = types.SimpleNamespace(me=2, underdog=6, fought=[0], undecided=[1],
                                 order_index={2: 0, 0: 1, 1: 2})
    unseen = np.array([1, 2, 3, 5, 7, 8, 9, 10, 11, 12, 13])
    card = 4

    def wins(fighters):  # [(turn order, card)]
        low = min(v for _, v in fighters)
        best = max((v + view.underdog if v == low else v, -pos) for pos, v in fighters)
        return best[1] == 0

    exact = 0.0
    pairs = list(itertools.permutations(unseen.tolist(), 2))
    for a, b in pairs:
        both = wins([(0, card), (1, a), (2, b)])
        alone = wins([(0, card), (1, a)])
        exact += (uh.FIGHT_RATE * both + (1 - uh.FIGHT_RATE) * alone) / len(pairs)
    monkeypatch.setattr(uh, "SAMPLES", 40_000)
    agent = uh.UnderdogHeuristic(game, 2, seed=0)
    assert abs(agent._win_probability(view, card, unseen) - exact) < 0.01
    # nobody else in the round: a sure win
    alone = types.SimpleNamespace(**{**vars(view), "fought": [], "undecided": []})
    assert agent._win_probability(alone, card, unseen) == 1.0


def test_a_random_agent_imports_neither_onnx_nor_onnxruntime():
    # each kind's module is imported only when a spec names it (the registry's KIND_MODULES)
    import subprocess
    import sys
    code = ("import sys, pyspiel; from kibitz.agents import make_agent; "
            "a = make_agent('random', pyspiel.load_game('pub'), 0, seed=1); "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'onnx', 'onnxruntime', 'jax'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out


def test_every_listed_kind_registers_itself_in_its_module():
    from kibitz.agents.registry import KIND_MODULES, agent_kinds
    kinds = agent_kinds()
    assert set(KIND_MODULES) <= set(kinds)
    for name, module in KIND_MODULES.items():
        assert kinds[name].factory.__module__ == f"kibitz.agents.{module}", name
