"""IS-MCTS searches on a fixed set of positions give the recorded visit counts.

The positions are decisions of seeded heuristic games (stored as action
histories) in each kibitz game at its default size and in two OpenSpiel
games; each is searched with the option sets the results use, each search
from a fresh, seeded agent. ``data/ismcts_fixed_positions.json`` holds the
root visit counts those searches gave; a change of the search, of a game's
search hooks or of a heuristic that changes a move shows up here as a
changed count.

Rewrite the file only for a change that is meant to change the searches:
``python tests/test_ismcts_fixed_positions.py --write``.
"""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np
import pyspiel
import pytest

from kibitz.agents import make_agent

DATA = pathlib.Path(__file__).parent / "data" / "ismcts_fixed_positions.json"

COMMON = ["sims=100,final=distribution",  # the simulations in compiled code (engine=compiled)
          "sims=100,final=distribution,engine=python",  # the same search in Python (as before the compiled engine)
          "sims=100,final=distribution,playouts=python",  # in Python, rollouts on the Python rules (as before compiled ones)
          "sims=100,final=distribution,rollout=heuristic",
          "sims=100,final=distribution,expand=heuristic,widen=1.0",
          "sims=100,final=distribution,belief=heuristic,max_world_samples=8",
          "sims=100,final=distribution,belief=heuristic,opponents=heuristic",
          "sims=100,final=distribution,uct_c=0.05,rollout_moves=0"]
ROUNDS = ["sims=100,final=distribution,rollout_rounds=1",
          "sims=100,final=distribution,rollout_rounds=1,rollout=heuristic"]
#: game string -> the option sets searched there
CASES = {
    "underdog": COMMON + ROUNDS,
    "pub": COMMON,
    "over_under": COMMON + ROUNDS,
    "doubt_and_bet": COMMON + ROUNDS + [
        "sims=100,final=distribution,rollout_rounds=1,rollout=heuristic,belief=heuristic,"
        "opponents=heuristic,moves=shortlist"],
    "doubt_and_bet(players=3)": ["sims=100,final=distribution,rollout_rounds=1"],
    "kuhn_poker": ["sims=100,final=distribution"],
    "leduc_poker": ["sims=100,final=distribution"],
}
#: which decisions (counted over the game, those with two or more moves) are kept
PICK = (0, 3, 9, 20)


def _positions(game, seed):
    """Histories of the decisions ``PICK`` of a heuristic game (random seats
    where the game has no heuristic), chance drawn with ``seed``."""
    n = game.num_players()
    kind = "heuristic" if game.get_type().short_name in _heuristic_games() else "random"
    bots = [make_agent(kind, game, p, seed=seed * 10 + p) for p in range(n)]
    rng = np.random.default_rng(seed)
    state, found, k = game.new_initial_state(), [], 0
    while not state.is_terminal() and len(found) < len(PICK):
        if state.is_chance_node():
            actions, probs = zip(*state.chance_outcomes())
            state.apply_action(int(rng.choice(actions, p=probs)))
            continue
        if len(state.legal_actions()) > 1:
            if k in PICK:
                found.append(list(state.history()))
            k += 1
        state.apply_action(bots[state.current_player()].step(state))
    return found


def _heuristic_games():
    from kibitz.agents.heuristics import HEURISTICS
    return HEURISTICS


def _search(game, history, spec, seed):
    state = game.new_initial_state()
    for a in history:
        state.apply_action(a)
    agent = make_agent(f"ismcts({spec})", game, state.current_player(), seed=seed)
    policy = agent.action_probabilities(state)
    return {str(a): round(float(p), 12) for a, p in sorted(policy.items())}


def _record():
    out = []
    for i, (game_string, specs) in enumerate(CASES.items()):
        game = pyspiel.load_game(game_string)
        for j, history in enumerate(_positions(game, seed=100 + i)):
            for spec in specs:
                out.append({"game": game_string, "history": history, "spec": spec, "seed": 7 + j,
                            "policy": _search(game, history, spec, 7 + j)})
    return out


def _cases():
    return json.loads(DATA.read_text()) if DATA.exists() else []


def test_the_record_is_there_and_covers_every_case():
    cases = _cases()
    assert {c["game"] for c in cases} == set(CASES)
    assert {(c["game"], c["spec"]) for c in cases} == {(g, s) for g, specs in CASES.items() for s in specs}


@pytest.mark.parametrize("case", _cases(), ids=lambda c: f"{c['game']}-{len(c['history'])}-{c['spec']}")
def test_search_gives_the_recorded_visits(case):
    game = pyspiel.load_game(case["game"])
    assert _search(game, case["history"], case["spec"], case["seed"]) == case["policy"]


def test_the_recorded_positions_are_still_the_positions_the_games_give():
    recorded = {}
    for c in _cases():
        recorded.setdefault(c["game"], [])
        if c["history"] not in recorded[c["game"]]:
            recorded[c["game"]].append(c["history"])
    for i, game_string in enumerate(CASES):
        assert _positions(pyspiel.load_game(game_string), seed=100 + i) == recorded[game_string]


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/test_ismcts_fixed_positions.py --write")
    DATA.parent.mkdir(exist_ok=True)
    DATA.write_text(json.dumps(_record(), indent=0) + "\n")
    print(f"wrote {DATA}")
