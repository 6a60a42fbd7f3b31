"""Doubt and Bet's ``CompiledRules.position_of``
(games/_doubt_and_bet_rules.py) against the compiled rules, a differential
test.

``position_of(state)`` must give the compiled position of a Python state,
read from its rules core, so that compiled code plays on from it exactly
that state (IS-MCTS's compiled rollouts). Two checks:

* Lockstep: seeded random games (chance outcomes drawn with their
  probabilities, moves uniformly from the legal ones, one numpy Generator
  per game) step the Python state with ``apply_action`` and a compiled
  position from ``rules.initial`` with ``rules.apply``; at every position,
  chance nodes and the terminal one included, ``position_of(state)`` must
  equal the compiled position, every field (those the compiled rules leave
  behind included: the last claim and stakes after a bet, the seating and
  turn order arrays past the players still in).
* Search worlds: at every ``WORLD_EVERY``-th decision of the first
  ``WORLD_GAMES`` games a world is drawn with
  ``resample_from_infostate(player, sampler, internal=True)`` (no pyspiel
  history: stepped with ``_apply_action``), and from ``position_of(world)``
  a compiled playout and a Python playout of the world are driven by the
  same choices (the k-th legal action or chance outcome, k from one seeded
  generator); kind, legal actions, chance outcomes and probabilities must
  agree at every step, and the returns at the end (playouts cut after
  ``PLAYOUT_CAP`` moves).

Default games (4 players, 100 rounds) are cut after 100 moves (about three
rounds); the small configuration is a single bet. The ``rounds``
configuration, small enough to end, reaches upkeep (players out at it),
seating shuffles, players out after a bet, the end at ``max_rounds``; the
last one is over at round 1's upkeep (every player out at once).
"""

import random
import time

import numpy as np
import pyspiel
import pytest

import kibitz.games

#: (game string, random games, move cap or None)
CONFIGS = {
    "default": ("doubt_and_bet", 500, 100),
    "small": (kibitz.games.REGISTRY["doubt_and_bet"].small, 500, None),
    "rounds": ("doubt_and_bet(players=3,chips=2,slots=2,colours=2,copies=2,upkeep_start=2,"
               "upkeep_every=2,shuffle_every=2,max_rounds=6,payoff=rank)", 300, None),
    "over_at_upkeep": ("doubt_and_bet(players=2,chips=0,slots=2,colours=1,copies=2,"
                       "upkeep_start=1)", 1, None),
}
#: games whose worlds are checked, every how many decisions, and the playouts' cap
WORLD_GAMES = 200
WORLD_EVERY = 7
PLAYOUT_CAP = 200


def _chance_outcome(outcomes, rng):
    """A chance outcome of ``[(outcome, probability)]`` drawn with its probability."""
    cum = np.cumsum([p for _, p in outcomes])
    i = int(np.searchsorted(cum, rng.random() * cum[-1], side="right"))
    return outcomes[min(i, len(outcomes) - 1)][0]


def _same_playout(world, rules, rng, where):
    """Plays ``world`` (no pyspiel history) and its compiled position on by
    the same choices, comparing every step; returns the moves played."""
    prm = rules.params
    s = rules.position_of(world)
    acts = np.empty(rules.max_branch, dtype=np.int64)
    probs = np.empty(rules.max_branch, dtype=np.float64)
    for moves in range(PLAYOUT_CAP + 1):
        kind = rules.kind(s, prm)
        cur = world.current_player()
        assert kind == cur, where
        if cur == pyspiel.PlayerId.TERMINAL:
            out = np.empty(world.num_players(), dtype=np.float64)
            rules.returns(s, prm, out)
            assert out.tolist() == world.returns(), where
            break
        if moves == PLAYOUT_CAP:
            break
        if cur == pyspiel.PlayerId.CHANCE:
            m = rules.outcomes(s, prm, acts, probs)
            expected = world.chance_outcomes()
            assert [(int(a), float(p)) for a, p in zip(acts[:m], probs[:m])] == expected, where
        else:
            m = rules.legal(s, prm, acts)
            assert acts[:m].tolist() == world._legal_actions(cur), where
        a = int(acts[rng.integers(m)])
        world._apply_action(a)
        rules.apply(s, prm, a)
    return moves


def _run(game_string, num_games, cap):
    game = pyspiel.load_game(game_string)
    rules = game.compiled_rules()
    assert rules.position_of is not None
    prm = rules.params
    positions = worlds = world_moves = 0
    for seed in range(num_games):
        rng = np.random.default_rng(seed)
        state = game.new_initial_state()
        s = rules.initial.copy()
        decisions = moves = 0
        while True:
            got = rules.position_of(state)
            assert got.dtype == np.int64 and got.shape == s.shape
            assert np.array_equal(got, s), (game_string, seed, state.history(), got, s)
            positions += 1
            if state.is_terminal() or moves == cap:
                break
            if state.is_chance_node():
                action = _chance_outcome(state.chance_outcomes(), rng)
            else:
                player = state.current_player()
                if seed < WORLD_GAMES and decisions % WORLD_EVERY == 0:
                    world = state.resample_from_infostate(
                        player, random.Random(seed * 1000 + decisions).random, internal=True)
                    where = (game_string, seed, state.history())
                    choices = np.random.default_rng([seed, decisions])
                    world_moves += _same_playout(world, rules, choices, where)
                    worlds += 1
                decisions += 1
                legal = state.legal_actions()
                action = legal[rng.integers(len(legal))]
            state.apply_action(action)
            rules.apply(s, prm, action)
            moves += 1
    return positions, worlds, world_moves


@pytest.mark.parametrize("config", list(CONFIGS))
def test_position_of_is_the_compiled_position_and_plays_on_the_same(config):
    game_string, num_games, cap = CONFIGS[config]
    t0 = time.perf_counter()
    positions, worlds, world_moves = _run(game_string, num_games, cap)
    print(f"{config}: {num_games} games, {positions} positions compared, {worlds} worlds "
          f"checked ({world_moves} playout moves), {time.perf_counter() - t0:.1f} s")
    assert positions >= num_games
    if cap is not None or num_games >= WORLD_GAMES:
        assert worlds >= WORLD_GAMES
