"""IS-MCTS with its simulations in compiled code (engine=compiled) is the
Python search with other random draws: the same visit shares in
expectation, whatever the tree's storage grows to."""

import numpy as np
import pyspiel
import pytest
from test_ismcts import first_decision

from kibitz import games
from kibitz.solvers import _ismcts_kernel
from kibitz.solvers.ismcts import ISMCTS, ISMCTSConfig, _Node

#: game string, decisions skipped before the searched one (every kibitz game,
#: small where its default decisions have too many moves to compare shares)
POSITIONS = [("underdog", 3), ("pub", 3), ("over_under", 3), ("showdown", 0),
             ("doubt_and_bet(players=2,chips=2,slots=1,colours=2,copies=2,single_bet=true)", 1)]


def _shares(game, state, engine, seeds, sims):
    me, legal = state.current_player(), state.legal_actions()
    rows = []
    for seed in seeds:
        search = ISMCTS(game, me, np.random.default_rng(seed), sims=sims, engine=engine)
        visits = search.search(state)
        assert sum(visits.values()) == sims and search.last_simulations == sims
        assert (search.root is None) == (engine == "compiled")
        rows.append([visits[a] / sims for a in legal])
    return np.array(rows)


@pytest.mark.parametrize("game_string, skip", POSITIONS)
def test_the_compiled_engine_runs_for_the_default_options_only(game_string, skip):
    game = pyspiel.load_game(game_string)
    assert ISMCTS.compiled_engine(game, ISMCTSConfig())
    assert not ISMCTS.compiled_engine(game, ISMCTSConfig(engine="python"))
    for option in ({"rollout_rounds": 1}, {"widen": 1.0}, {"max_world_samples": 8}, {"playouts": "python"}):
        if option == {"rollout_rounds": 1} and game_string.startswith("pub"):
            continue  # Pub has no rounds to cut at
        assert not ISMCTS.compiled_engine(game, ISMCTSConfig(**option))
    assert not ISMCTS.compiled_engine(pyspiel.load_game("kuhn_poker"), ISMCTSConfig())


@pytest.mark.parametrize("game_string, skip", POSITIONS)
def test_the_compiled_search_gives_the_python_searchs_visit_shares(game_string, skip):
    # 24 seeds of 600 simulations an engine: each move's mean root visit share
    # agrees within 4 standard errors of the difference (plus 0.02 for shares
    # that hardly vary), and the favourite move is the same where it is clear
    game = pyspiel.load_game(game_string)
    state = first_decision(game, seed=11, skip=skip)
    compiled = _shares(game, state, "compiled", range(24), 600)
    python = _shares(game, state, "python", range(100, 124), 600)
    diff = compiled.mean(axis=0) - python.mean(axis=0)
    se = np.sqrt(compiled.var(axis=0, ddof=1) / len(compiled) + python.var(axis=0, ddof=1) / len(python))
    assert np.all(np.abs(diff) <= 4 * se + 0.02), (diff, se)
    top = np.sort(python.mean(axis=0))
    if top[-1] - top[-2] > 0.2:
        assert np.argmax(compiled.mean(axis=0)) == np.argmax(python.mean(axis=0))


@pytest.mark.parametrize("game_string, skip", POSITIONS)
def test_a_seed_gives_one_search_however_small_the_tree_starts(game_string, skip, monkeypatch):
    game = pyspiel.load_game(game_string)
    state = first_decision(game, seed=4, skip=skip)
    me = state.current_player()
    first = ISMCTS(game, me, np.random.default_rng(3), sims=300).search(state)
    assert ISMCTS(game, me, np.random.default_rng(3), sims=300).search(state) == first
    made = []
    new_tree = _ismcts_kernel.new_tree

    def tiny(nodes):  # room for a few simulations only: the search grows its tree many times
        made.append(nodes)
        return new_tree(int(game.max_game_length()) + 8)

    monkeypatch.setattr(_ismcts_kernel, "new_tree", tiny)
    assert ISMCTS(game, me, np.random.default_rng(3), sims=300).search(state) == first
    assert made


def test_a_timed_compiled_search_stops_near_its_time():
    import time
    game = pyspiel.load_game("over_under")
    state = first_decision(game, seed=2, skip=1)
    search = ISMCTS(game, state.current_player(), np.random.default_rng(0), sims=0, seconds=0.2)
    t0 = time.perf_counter()
    visits = search.search(state)
    assert time.perf_counter() - t0 < 1.0
    assert sum(visits.values()) == search.last_simulations > 0


def test_a_known_world_game_is_searched_from_its_root_alone(monkeypatch):
    # Over/Under declares KNOWN_WORLD: the compiled search draws no world
    game = pyspiel.load_game("over_under")
    state = first_decision(game, seed=2, skip=2)
    assert games.search.KNOWN_WORLD in games.search.capabilities(game)

    def refused(*args, **kwargs):
        raise AssertionError("a world was drawn")

    monkeypatch.setattr(type(state), "resample_from_infostate", refused)
    visits = ISMCTS(game, state.current_player(), np.random.default_rng(0), sims=100).search(state)
    assert sum(visits.values()) == 100


@pytest.mark.parametrize("game_string, skip, seed", [("underdog", 3, 11), ("underdog", 3, 13), ("over_under", 3, 11),
                                                     ("over_under", 3, 13)])
def test_chance_below_the_root_splits_the_compiled_tree_as_the_python_tree(game_string, skip, seed):
    # what the searcher sees of the chance moves after each root move (Underdog:
    # hidden draws and shown cards; Over/Under: the flipped card) makes as many
    # subtrees in both engines, once 3,000 simulations have met every view
    game = pyspiel.load_game(game_string)
    state = first_decision(game, seed=seed, skip=skip)
    me = state.current_player()
    python = ISMCTS(game, me, np.random.default_rng(0), sims=3000, engine="python")
    python.search(state)
    expected = {a: sum(not isinstance(k, int) for k in child.children) for a, child in python.root.children.items()}
    compiled = ISMCTS(game, me, np.random.default_rng(0), sims=3000)
    compiled.search(state)
    tree = compiled.compiled_tree
    got = {a: sum(not isinstance(k, int) for k in _ismcts_kernel.children(tree, c))
           for a, c in _ismcts_kernel.children(tree, 0).items()}
    assert got == expected and min(got.values()) > 1


def test_a_compiled_search_stops_at_its_tree_bound(monkeypatch):
    import kibitz.solvers.ismcts as ismcts
    game = pyspiel.load_game("underdog")
    state = first_decision(game, seed=2, skip=1)
    monkeypatch.setattr(ismcts, "_ENGINE_MAX_NODES", 3000)
    search = ISMCTS(game, state.current_player(), np.random.default_rng(0), sims=5000)
    visits = search.search(state)
    assert 0 < search.last_simulations < 5000
    assert sum(visits.values()) == search.last_simulations
    assert len(search.compiled_tree[4]) == 3000 + game.max_game_length() + 2  # grown to the bound, not past


def test_a_world_longer_than_the_games_length_is_an_error_not_an_overrun(monkeypatch):
    game = pyspiel.load_game("underdog")
    state = first_decision(game, seed=2, skip=1)
    monkeypatch.setattr(type(game), "max_game_length", lambda self: 3)
    with pytest.raises(RuntimeError, match="max_game_length"):
        ISMCTS(game, state.current_player(), np.random.default_rng(0), sims=50).search(state)


def _python_edges(node, depth=0, out=None):
    """Every edge below ``node`` of a Python tree: (depth, move or None for a chance edge, visits, avail, total)."""
    out = [] if out is None else out
    for key, child in node.children.items():
        out.append((depth, key if isinstance(key, int) else None, child.visits, child.avail, round(child.total, 9)))
        _python_edges(child, depth + 1, out)
    return out


def _compiled_edges(tree, node=0, depth=0, out=None):
    out = [] if out is None else out
    for key, c in _ismcts_kernel.children(tree, node).items():
        out.append((depth, key if isinstance(key, int) else None, int(tree[3][c, _ismcts_kernel.VISITS]),
                    int(tree[3][c, _ismcts_kernel.AVAIL]), round(float(tree[4][c]), 9)))
        _compiled_edges(tree, c, depth + 1, out)
    return out


@pytest.mark.parametrize("game_string, skip", POSITIONS + [("doubt_and_bet(players=3)", 2)])
def test_on_the_same_worlds_and_draws_both_engines_build_the_same_tree(game_string, skip):
    # the Python engine's simulation (rollouts on the Python rules) and the kernel's, given the same
    # worlds and the same xoshiro256** numbers: every edge with the same visits, availability and total
    import random

    from kibitz.games import search as game_search
    from kibitz.games.compiled_random import seeded_rng, uniform

    game = pyspiel.load_game(game_string)
    state = first_decision(game, seed=1, skip=skip)
    me, rules, sims = state.current_player(), game.compiled_rules(), 300
    caps = game_search.capabilities(game)
    draw = random.Random(5).random
    memo = {"memo": {}} if game_search.RESAMPLE_MEMO in caps else {}
    mark = state.log_mark() if game_search.VIEWS in caps else None
    worlds = [state.resample_from_infostate(me, draw, internal=True, **memo) for _ in range(sims)]
    positions = np.stack([rules.position_of(w) for w in worlds])
    python = ISMCTS(game, me, np.random.default_rng(0), sims=sims, engine="python")
    python._compiled_playouts, python._mark = None, mark
    python._memo, python._memo_root = python._memo_for(), state
    numbers = seeded_rng(9)
    root = _Node()
    for world in worlds:
        if mark is not None:
            world.anchor_view(mark)
        python._simulate(root, world, lambda: float(uniform(numbers)))
    length = int(game.max_game_length())
    tree = _ismcts_kernel.new_tree(sims * (length + 2) + length + 2)
    kernel_numbers = seeded_rng(9)
    ran = _ismcts_kernel.simulator(rules)(rules.params, game.num_players(), rules.max_branch, length, me,
                                          python.config.uct_c, positions, 0, sims, kernel_numbers, *tree)
    assert ran == sims
    assert sorted(_python_edges(root), key=repr) == sorted(_compiled_edges(tree), key=repr)
    assert np.array_equal(numbers, kernel_numbers)  # as many numbers drawn
