"""How much of a seat's result its deal fixes: the variance of ``trained``'s
return in seat 0 (the heuristic in the other seats) within a deal, each deal
played with several agent seeds and its chance outcomes the same
(``DealChance``, as a tournament's duplicate deals), against the variance
over all games.

    python -m kibitz.experiments.deal_share [--games underdog,pub] [--deals 30] [--seeds 4]

Where the share within a deal is small, the result is the deal's, and
AIVAT's chance terms need a value function that foresees how the deal
will be played out (docs/tournaments.md, issue 43).
"""

from __future__ import annotations

import argparse

import numpy as np

from kibitz.agents.matches.tournament import DealChance
from kibitz.agents.registry import make_agent
from kibitz.games import REGISTRY, load_game


def returns_by_deal(game_string: str, deals: int, seeds: int) -> np.ndarray:
    """``(deals, seeds)``: seat 0's return, ``trained`` there and the heuristic elsewhere."""
    game = load_game(game_string)
    n = game.num_players()
    specs = ["trained"] + ["heuristic"] * (n - 1)
    out = np.zeros((deals, seeds))
    for d in range(deals):
        for r in range(seeds):
            chance = DealChance((7, d))
            bots = [make_agent(specs[p], game, p, seed=1000 * r + 17 * p + 3) for p in range(n)]
            state = game.new_initial_state()
            while not state.is_terminal():
                if state.is_chance_node():
                    state.apply_action(chance(state.chance_outcomes()))
                else:
                    state.apply_action(bots[state.current_player()].step(state))
            out[d, r] = state.returns()[0]
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", default=",".join(sorted(n for n in REGISTRY if n != "showdown")))
    ap.add_argument("--deals", type=int, default=30)
    ap.add_argument("--seeds", type=int, default=4)
    args = ap.parse_args(argv)
    if args.deals < 2 or args.seeds < 2:
        ap.error("--deals and --seeds must be at least 2")
    print(f"{'game':<16} {'variance':>9} {'within a deal':>14} {'between deals':>14}")
    for name in args.games.split(","):
        r = returns_by_deal(name, args.deals, args.seeds)
        total, within = r.var(ddof=1), r.var(axis=1, ddof=1).mean()
        print(f"{name:<16} {total:>9.4f} {within / total:>13.0%} {1 - within / total:>13.0%}", flush=True)


if __name__ == "__main__":
    main()
