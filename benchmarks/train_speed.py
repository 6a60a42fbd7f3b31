"""Training steps per second at the default sizes: docs/solvers/training.md's table.

For each game at its default size, an MMD trainer with the default settings
(solvers/train.py: ``TrainConfig()``, 32 episodes a step, network (128,
128), seed 0) takes one step (which compiles the update), then steps for
``--seconds`` (at least ``--min-steps`` steps); printed are the network's
inputs and actions, the decisions of each timed step (a step's batch) and
the steps per second over the timed steps. Doubt and Bet runs a second
time on its compact encoding with a factored output (``kibitz train
doubt_and_bet --encoding compact``'s network). The update is compiled once
per padded batch size, so a step at a new size compiles too: the timed
steps include that, as a training run does.

    python benchmarks/train_speed.py [--games underdog,pub] [--seconds 60] [--min-steps 2] [--out FILE]

The table goes to ``--out`` (markdown, default
docs/results/training/speed.md) and the run's command, date and load
average to the same name with ``.json`` (kibitz.experiments.speed).
Single runs on a shared machine: rerun before comparing two of them.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from kibitz import games
from kibitz.experiments import speed
from kibitz.solvers.train import MMDTrainer, TrainConfig

#: (game, encoding, output) in the table's order
RUNS = (("underdog", games.INFORMATION_STATE_TENSOR, "dense"), ("pub", games.INFORMATION_STATE_TENSOR, "dense"),
        ("over_under", games.INFORMATION_STATE_TENSOR, "dense"),
        ("doubt_and_bet", games.INFORMATION_STATE_TENSOR, "dense"), ("doubt_and_bet", "compact", "factored"))


def measure(name: str, encoding: str, output: str, seconds: float, min_steps: int) -> dict:
    """One step untimed, then steps for ``seconds`` (at least ``min_steps``)."""
    game = games.load_game(name)
    trainer = MMDTrainer(game, TrainConfig(encoding=encoding, output=output), seed=0)
    trainer.iterate()
    decisions, t0 = [], time.perf_counter()
    while len(decisions) < min_steps or time.perf_counter() - t0 < seconds:
        trainer.iterate()
        decisions.append(trainer.last["decisions"])
    elapsed = time.perf_counter() - t0
    return {"game": name, "encoding": encoding, "output": output, "inputs": trainer.spec.input_size,
            "actions": game.num_distinct_actions(), "factors": trainer.spec.factors, "decisions": decisions,
            "seconds": elapsed, "steps_per_s": len(decisions) / elapsed}


def table(results: list[dict]) -> list[str]:
    lines = ["| game (default) | inputs | actions | decisions per step | steps timed | steps/s |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in results:
        label = f"`{r['game']}`"
        if r["encoding"] != games.INFORMATION_STATE_TENSOR:
            label += f", `--encoding {r['encoding']}` ({r['output']}" + (
                f", {r['factors']:,} factor logits)" if "factors" in r else ")")
        if "failed" in r:
            lines.append(f"| {label} | | | | | failed: {r['failed']} |")
            continue
        low, high = min(r["decisions"]), max(r["decisions"])
        spread = f"{low:,}" if low == high else f"{low:,}-{high:,}"
        lines.append(f"| {label} | {r['inputs']:,} | {r['actions']:,} | {spread} | {len(r['decisions'])} | "
                     f"{r['steps_per_s']:.3g} |")
    return lines


def main(argv=None) -> None:
    run = speed.Run()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", default=",".join(dict.fromkeys(name for name, _, _ in RUNS)),
                    help="comma-separated game names (default: %(default)s)")
    ap.add_argument("--seconds", type=float, default=60.0, help="timed seconds per run (after the first step)")
    ap.add_argument("--min-steps", type=int, default=2, help="timed steps per run at least")
    ap.add_argument("--out", default="docs/results/training/speed.md", help="the table (default: %(default)s)")
    args = ap.parse_args(argv)
    wanted = args.games.split(",")
    results = []
    for name, encoding, output in RUNS:
        if name not in wanted:
            continue
        try:
            r = measure(name, encoding, output, args.seconds, args.min_steps)
        except (MemoryError, RuntimeError) as e:  # one run that does not fit must not lose the others
            print(f"{name} ({encoding}, {output}) failed: {type(e).__name__}: {str(e)[:300]}", flush=True)
            results.append({"game": name, "encoding": encoding, "output": output, "failed": type(e).__name__})
            continue
        results.append(r)
        print(f"{name} ({encoding}, {output}): {r['inputs']:,} inputs, {r['actions']:,} actions, "
              f"decisions {r['decisions']}, {r['steps_per_s']:.3g} steps/s", flush=True)
    if all("failed" in r for r in results):
        raise SystemExit("no run ended: nothing written")
    run.write(Path(args.out).with_suffix(".json"), "training steps/s at the default sizes",
              ", ".join(f"{r['game']} ({r['encoding']}) {r.get('steps_per_s', r.get('failed'))}" for r in results), "",
              data=results, table=table(results))


if __name__ == "__main__":
    main()
