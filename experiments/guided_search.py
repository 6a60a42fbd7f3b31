"""IS-MCTS guided by the trained network (``prior=trained``: PUCT) against
the IS-MCTS shipped today, the network and the heuristic, at each game's
default size (issue 44's first check).

    python -m kibitz.experiments.guided_search [--games-list pub,underdog] [--games 1008]
                                               [--root docs/results/ismcts_guided] [--workers 1]
    python -m kibitz.experiments.guided_search --table-only

For each game, one ``kibitz tournament`` of the four agents of
:data:`MATCHES` (duplicate deals, every seat arrangement, seed 0) into
``ROOT/GAME`` (resumed where it stopped), then the table ``ROOT/table.md``:
each agent's mean win share with its 95% interval, bold where it lies
wholly above every other agent's, and each search's CPU milliseconds a move
on :data:`POSITIONS` positions of random games (the same positions for every
agent, measured in this process one agent after the other). The folders
keep tournament.json, results.json, results.csv and timing.json;
games.jsonl (about 0.5 MB a 1,008-game match) is not committed.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from kibitz.agents.matches.tournament import TournamentConfig
from kibitz.agents.registry import make_agent
from kibitz.games import load_game

#: game -> the agents of its match: the guided search at half the
#: simulations (the network's prior about doubles a simulation's cost),
#: the strongest shipped IS-MCTS configuration for the game, the network
#: and the heuristic
MATCHES = {
    "pub": ("ismcts(prior=trained,sims=500)", "ismcts(sims=1000)", "trained", "heuristic"),
    "underdog": ("ismcts(prior=trained,sims=500)", "ismcts(sims=1000)", "trained", "heuristic"),
    "over_under": ("ismcts(one_step,prior=trained,sims=500)", "ismcts(one_step)", "trained", "heuristic"),
}
POSITIONS = 6


def positions(game, count: int, seed: int = 0) -> list:
    """``count`` decisions of random games (after 2-29 random moves)."""
    rng = np.random.default_rng(seed)
    found = []
    while len(found) < count:
        state, target, moves = game.new_initial_state(), int(rng.integers(2, 30)), 0
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(outcomes[rng.choice(len(outcomes), p=np.asarray(probs) / sum(probs))])
            elif moves >= target:
                found.append(state)
                break
            else:
                legal = state.legal_actions()
                state.apply_action(legal[rng.integers(len(legal))])
                moves += 1
    return found


def ms_per_move(game, spec: str, states) -> float:
    """CPU milliseconds ``spec`` takes for a move, over ``states``."""
    spent = 0.0
    for state in states:
        agent = make_agent(spec, game, state.current_player(), seed=0)
        t0 = time.process_time()
        agent.step(state)
        spent += time.process_time() - t0
    return 1000.0 * spent / len(states)


def table(root: Path) -> str:
    lines = ["| game | agent | games | mean win share | 95% CI | CPU ms a move |", "| --- | --- | ---: | ---: | --- | ---: |"]
    for game in MATCHES:
        try:
            results = json.loads((root / game / "results.json").read_text())
            timing = json.loads((root / game / "timing.json").read_text())
        except (OSError, ValueError):
            continue
        agents = results["agents"]
        for a in agents:
            above = all(a["ci95_low"] > b["ci95_high"] for b in agents if b is not a)
            mean = f"**{a['mean_payoff']:.3f}**" if above else f"{a['mean_payoff']:.3f}"
            ms = f"{timing[a['spec']]:.0f}" if a["spec"] in timing else "-"
            lines.append(f"| `{game}` | `{a['spec']}` | {a['games']} | {mean} | "
                         f"[{a['ci95_low']:.3f}, {a['ci95_high']:.3f}] | {ms} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games-list", default=",".join(MATCHES), help="of " + ", ".join(MATCHES))
    ap.add_argument("--games", type=int, default=1008)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--root", default="docs/results/ismcts_guided")
    ap.add_argument("--table-only", action="store_true")
    args = ap.parse_args(argv)
    root = Path(args.root)
    if not args.table_only:
        names = args.games_list.split(",")
        unknown = [n for n in names if n not in MATCHES]
        if unknown:
            ap.error(f"--games-list: {unknown[0]!r}: allowed: {', '.join(MATCHES)}")
        for name in names:
            out = root / name
            game = load_game(name)
            states = positions(game, POSITIONS)
            timing = {spec: ms_per_move(game, spec, states) for spec in MATCHES[name] if spec.startswith("ismcts")}
            out.mkdir(parents=True, exist_ok=True)
            (out / "timing.json").write_text(json.dumps(timing, indent=1) + "\n")
            TournamentConfig(name, MATCHES[name], args.games, seed=0, workers=args.workers, out=str(out),
                             resume=(out / "results.json").is_file(), progress=True).run(print)
            (root / "table.md").write_text(table(root))
    root.mkdir(parents=True, exist_ok=True)
    (root / "table.md").write_text(table(root))
    print((root / "table.md").read_text(), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
