"""Every kibitz game implements the search capabilities it declares."""

import inspect

import pyspiel
import pytest

from kibitz import games
from kibitz.games import search

PROTOCOLS = {search.DIRECT: search.ResampleState, search.ROUNDS: search.RoundsState,
             search.VIEWS: search.ViewState, search.RANDOM_ACTION: search.RandomActionState,
             search.SNAPSHOT: search.SnapshotState, search.COMPILED: search.CompiledState}


def _methods(protocol):
    return [name for name, _ in inspect.getmembers(protocol, inspect.isfunction) if not name.startswith("_")]


@pytest.mark.parametrize("name", sorted(games.REGISTRY))
def test_declared_capabilities_are_known_and_implemented(name):
    spec = games.REGISTRY[name]
    assert spec.search <= search.CAPABILITIES
    assert search.capabilities(pyspiel.load_game(name)) == spec.search
    state = pyspiel.load_game(name).new_initial_state()
    for capability in spec.search:
        for method in _methods(PROTOCOLS.get(capability, object)):
            assert callable(getattr(state, method, None)), f"{name} declares {capability} but lacks {method}()"
    if spec.search - {search.DIRECT, search.PUBLIC_CHANCE}:
        assert search.DIRECT in spec.search  # the others are used only with DIRECT
    if search.RESAMPLE_MEMO in spec.search:
        params = inspect.signature(type(state).resample_from_infostate).parameters
        assert "memo" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


@pytest.mark.parametrize("name", sorted(n for n, spec in games.REGISTRY.items() if search.KNOWN_WORLD in spec.search))
def test_a_known_world_is_the_state_itself(name):
    # KNOWN_WORLD: every world a resample draws is the state (the compiled search uses the root for all)
    import numpy as np
    game = pyspiel.load_game(name)
    rng = np.random.default_rng(5)
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(actions, p=probs)))
            continue
        me = state.current_player()
        for internal in (False, True):
            world = state.resample_from_infostate(me, rng.random, internal=internal)
            assert np.array_equal(game.compiled_rules().position_of(world), game.compiled_rules().position_of(state))
            assert world.information_state_string(me) == state.information_state_string(me)
            assert str(world) == str(state)
        legal = state.legal_actions()
        state.apply_action(legal[int(rng.integers(len(legal)))])


def test_a_game_that_is_not_kibitzs_declares_nothing():
    assert search.capabilities(pyspiel.load_game("kuhn_poker")) == frozenset()


@pytest.mark.parametrize("name", sorted(games.REGISTRY))
def test_round_numbers_never_decrease_and_views_grow_with_the_log(name):
    import numpy as np
    spec = games.REGISTRY[name]
    game = pyspiel.load_game(name)
    rng = np.random.default_rng(3)
    state = game.new_initial_state()
    last = state.round_number() if search.ROUNDS in spec.search else None
    mark = state.log_mark() if search.VIEWS in spec.search else None
    while not state.is_terminal():
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(actions, p=probs)))
        else:
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.integers(len(legal)))])
        if last is not None:
            assert state.round_number() >= last
            last = state.round_number()
        if mark is not None:
            assert state.log_mark() >= mark
            views = [state.view_since(p, mark) for p in range(game.num_players())]
            assert all(isinstance(v, tuple) for v in views)
    if last is not None:
        assert state.standing() == pytest.approx(state.returns())


@pytest.mark.parametrize("game_string", ["doubt_and_bet", "doubt_and_bet(players=3)",
                                         "doubt_and_bet(players=2,chips=2,slots=1,colours=2,copies=2,single_bet=true)"])
def test_a_compiled_random_action_is_the_listed_move_of_the_same_draw(game_string):
    # CompiledRules.random_action(s, prm, u, out) == legal[int(u * k)] at every decision of random games
    import numpy as np
    game = pyspiel.load_game(game_string)
    rules = game.compiled_rules()
    assert rules.random_action is not None
    rng = np.random.default_rng(8)
    acts = np.empty(rules.max_branch, dtype=np.int64)
    scratch = np.empty(rules.max_branch, dtype=np.int64)
    draws = np.concatenate([[0.0, 1 - 2**-53, 0.5], rng.random(20)])
    checked = 0
    for _ in range(12):
        s = rules.initial.copy()
        while (who := rules.kind(s, rules.params)) != -4:
            if who == -1:
                k = rules.outcomes(s, rules.params, acts, np.empty(rules.max_branch))
                rules.apply(s, rules.params, int(acts[int(rng.integers(k))]))
                continue
            k = rules.legal(s, rules.params, acts)
            for u in draws:
                assert rules.random_action(s, rules.params, float(u), scratch) == acts[int(u * k)]
            checked += 1
            rules.apply(s, rules.params, int(acts[int(rng.integers(k))]))
    assert checked > 40
