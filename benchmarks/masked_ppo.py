"""An off-the-shelf learner against the heuristic: sb3-contrib's MaskablePPO.

Trains MaskablePPO (``MultiInputPolicy``, the library's default settings,
one torch thread) for ``--steps`` learner decisions (rounded up to a
whole number of PPO's 2,048-step rollouts) in seat ``--seat`` of
``kibitz.pettingzoo.SingleAgentEnv(GAME, opponents="heuristic")``, then
plays ``--eval-games`` games against the heuristic with the learned policy,
masked to the legal actions (its most probable legal action; ``--sample``
draws from its masked distribution instead), and as many with the uniform
random legal policy and with the heuristic itself in the learner's seat, on
the same deals (seeds drawn from ``--seed``). It prints each one's mean
return with its 95% interval (1.96 standard errors), the learned policy's
paired difference from each and the seconds each part took; with ``--out DIR``
it writes ``DIR/masked_ppo.json`` and the model, ``DIR/model.zip``.

    python benchmarks/masked_ppo.py [--game pub] [--seat 0] [--steps 50000] [--seed 0]
                                    [--eval-games 500] [--sample] [--out DIR]

sb3-contrib and torch are not kibitz's dependencies: install them in a
venv of their own (docs/environments.md, "Training with an off-the-shelf
library"). The script is in benchmarks/, not experiments/ (the installed
``kibitz.experiments``), because it uses ``kibitz.pettingzoo``, a layer
above the experiments.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path

import numpy as np

from kibitz.agents.registry import make_agent
from kibitz.experiments.records import mean_ci95
from kibitz.experiments.speed import write_atomic

INSTALL = ("python3 -m venv VENV && VENV/bin/pip install torch==2.13.0 sb3-contrib "
           "&& VENV/bin/pip install -e '.[rl]'")


def parse(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--game", default="pub", help="game string (default: pub, the default size)")
    p.add_argument("--seat", type=int, default=0, help="the learner's seat (default 0)")
    p.add_argument("--steps", type=int, default=50_000, help="training steps: learner decisions (default 50000)")
    p.add_argument("--seed", type=int, default=0, help="seeds training, the network and the evaluation deals")
    p.add_argument("--eval-games", type=int, default=500, help="games for each policy's evaluation (default 500)")
    p.add_argument("--sample", action="store_true",
                   help="evaluate by sampling the masked policy (default: its most probable legal action)")
    p.add_argument("--out", help="folder for masked_ppo.json, table.md and model.zip")
    p.add_argument("--table-from", metavar="JSON",
                   help="only write table.md beside this masked_ppo.json (needs no sb3-contrib)")
    return p.parse_args(argv)


def play(env, choose, seeds) -> tuple[list[float], float]:
    """The learner's returns in ``len(seeds)`` games, each ``reset(seed=s)``
    and then ``choose(obs, env)`` at every decision, and the seconds taken.
    A deal the environment skips (the learner had no decision) counts as a
    game with its return: the same deals for every policy."""
    returns, t0 = [], time.perf_counter()
    for s in seeds:
        obs, info = env.reset(seed=int(s))
        returns += info.get("skipped_returns", [])
        terminated = False
        while not terminated:
            obs, reward, terminated, _, _ = env.step(choose(obs, env))
        returns.append(float(reward))
    return returns[:len(seeds)], time.perf_counter() - t0


def summary(name: str, returns, seconds: float | None = None) -> dict:
    """Prints one line (mean, 95% interval, games, seconds) and returns it as a dict."""
    mean, half = mean_ci95(returns)
    row = {"mean": mean, "ci95": [mean - half, mean + half], "games": len(returns)}
    took = ""
    if seconds is not None:
        row["seconds"] = round(seconds, 1)
        took = f", {seconds:.0f} s"
    print(f"{name:<40} {mean:+.3f} [{mean - half:+.3f}, {mean + half:+.3f}]  {len(returns)} games{took}")
    return row


def table(record: dict) -> str:
    """The markdown table of a run's masked_ppo.json (docs/environments.md copies it)."""
    games = record["trained"]["games"]
    rows = [(f"MaskablePPO, {record['steps']:,} steps, {record['evaluation']} legal action", record["trained"]),
            ("uniform random legal action", record["random"]), ("the heuristic itself", record["heuristic"]),
            ("MaskablePPO - random, same deals", record["trained_minus_random"]),
            ("MaskablePPO - heuristic, same deals", record["trained_minus_heuristic"])]
    lines = [f"| seat {record['seat']}, against three heuristics, {games:,} games | mean return | 95% interval |",
             "| --- | ---: | --- |"]
    lines += [f"| {name} | {r['mean']:+.3f} | [{r['ci95'][0]:+.3f}, {r['ci95'][1]:+.3f}] |" for name, r in rows]
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    args = parse(argv)
    if args.table_from:
        source = Path(args.table_from)
        write_atomic(source.with_name("table.md"), table(json.loads(source.read_text())))
        print(f"wrote {source.with_name('table.md')}")
        return
    try:
        import sb3_contrib
        import torch
        from sb3_contrib import MaskablePPO

        from kibitz.pettingzoo import SingleAgentEnv
    except ImportError as e:
        sys.exit(f"masked_ppo.py needs sb3-contrib, torch and kibitz[rl] ({e}); in a venv of their own: {INSTALL}")
    torch.set_num_threads(1)
    started = datetime.datetime.now(datetime.timezone.utc)
    env = SingleAgentEnv(args.game, seat=args.seat, opponents="heuristic", seed=args.seed)
    model = MaskablePPO("MultiInputPolicy", env, seed=args.seed, verbose=0)
    t0 = time.perf_counter()
    model.learn(total_timesteps=args.steps)
    train_seconds = time.perf_counter() - t0
    print(f"MaskablePPO (sb3-contrib {sb3_contrib.__version__}, torch {torch.__version__}): "
          f"{model.num_timesteps} steps in seat {args.seat} of {env.game} against the heuristic, "
          f"{train_seconds:.0f} s ({model.num_timesteps / train_seconds:.0f} steps/s)")

    seeds = np.random.default_rng([args.seed, 1]).integers(2**31, size=args.eval_games)
    deterministic = not args.sample
    trained, trained_s = play(env, lambda obs, e: int(model.predict(obs, action_masks=e.action_masks(),
                                                                    deterministic=deterministic)[0]), seeds)
    rng = np.random.default_rng([args.seed, 2])
    uniform, uniform_s = play(env, lambda obs, e: int(rng.choice(np.flatnonzero(e.action_masks()))), seeds)
    heuristic = make_agent("heuristic", env.game, args.seat, seed=args.seed)  # reads the state, keeps none
    itself, itself_s = play(env, lambda obs, e: int(heuristic.step(e.state)), seeds)
    how = "sampled" if args.sample else "most probable"
    print(f"mean return against the heuristic in seat {args.seat}, 95% interval:")
    result = {"trained": summary(f"trained, masked ({how} action)", trained, trained_s),
              "random": summary("random legal action", uniform, uniform_s),
              "heuristic": summary("the heuristic itself", itself, itself_s),
              "trained_minus_random": summary("trained - random, same deals", np.subtract(trained, uniform)),
              "trained_minus_heuristic": summary("trained - heuristic, same deals", np.subtract(trained, itself))}
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        model.save(out / "model.zip")
        record = {"command": " ".join(["python", *sys.argv]), "started": started.isoformat(timespec="seconds"),
                  "game": str(env.game), "seat": args.seat, "opponents": "heuristic", "seed": args.seed,
                  "steps": model.num_timesteps, "train_seconds": round(train_seconds, 1), "evaluation": how,
                  "sb3_contrib": sb3_contrib.__version__, "torch": torch.__version__, **result}
        write_atomic(out / "masked_ppo.json", json.dumps(record, indent=1) + "\n")
        write_atomic(out / "table.md", table(record))
        print(f"wrote {out / 'masked_ppo.json'}, table.md and {out / 'model.zip'}")


if __name__ == "__main__":
    main()
