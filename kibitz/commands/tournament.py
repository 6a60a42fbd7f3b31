"""``kibitz tournament``: agents against each other, seats rotated, deals duplicated."""

from __future__ import annotations

import os

import click

from kibitz.api import (MAX_GAMES, MAX_WORKERS, GameFailed, RayRunError, RayUnavailable, RecordsError,
                        TournamentConfig, format_table, read_plan)
from kibitz.api import tournament as run_tournament
from kibitz.commands._paths import check_ray, ray_options, refuse_foreign_folder
from kibitz.commands.solve import solve_errors

#: the files of a tournament folder, its plan first
TOURNAMENT_FILES = ("tournament.json", "games.jsonl", "results.json", "results.csv")


def _plan_problem(path) -> str | None:
    """What is wrong with a tournament folder's plan (None: it is kibitz's)."""
    try:
        read_plan(path)
    except RecordsError as e:
        return str(e)
    return None


@click.command("tournament")
@click.argument("game_string", metavar="GAME")
@click.option("--agents", "agent_list", required=True,
              help="Comma-separated agent specs, e.g. random,heuristic,'ismcts(sims=200)'.")
@click.option("--games", type=click.IntRange(1, MAX_GAMES), default=100, show_default=True,
              help="Games to play (rounded up so each deal is played in every seating).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Tournament seed.")
@click.option("--workers", type=click.IntRange(1, MAX_WORKERS), default=1, show_default=True,
              help="Worker processes (results are the same for any number).")
@click.option("--out", "out_dir", default=None, type=click.Path(file_okay=False),
              help="Directory for tournament.json, games.jsonl, results.json, results.csv "
                   "(default: tournament-SEED).")
@click.option("--resume", is_flag=True, help="Continue the tournament in --out from the games it finished.")
@click.option("--aivat", "value", default="none", show_default=True, metavar="VALUE",
              help="AIVAT: correct each game's payoffs by control variates with this value function: none, "
                   "zero, rollout(N), net (the game's shipped value network) or net(FILE) "
                   "(docs/tournaments.md).")
@click.option("--no-progress", is_flag=True, help="No progress bar.")
@ray_options("games as Ray tasks in batches, instead of --workers; the same results")
def tournament(game_string, agent_list, games, seed, workers, out_dir, resume, value, no_progress, ray,
               ray_address):
    """Run a bot tournament on GAME: every agent plays every seat on duplicate deals.

    Prints per agent: games, mean payoff with a 95% confidence interval, win
    rate, OpenSkill rating, and a per-seat table. Ctrl-C stops, keeps the
    finished games and reports them; --resume continues.
    """
    ray = check_ray(ray, ray_address, workers)
    out_dir = out_dir or f"tournament-{seed}"
    with solve_errors():
        config = TournamentConfig(game_string, agent_list, games, seed=seed, workers=workers, out=out_dir,
                                  resume=resume, aivat=value, progress=not no_progress, ray=ray,
                                  ray_address=ray_address)
    if not resume:  # --resume reads the plan, and names what is wrong with it, before it writes
        refuse_foreign_folder(out_dir, marker="tournament.json", outputs=TOURNAMENT_FILES[1:],
                              problem=_plan_problem, what="tournament folder")
    try:
        outcome = run_tournament(config, log=lambda line: click.echo(line, err=True))
    except RayUnavailable as e:
        raise click.UsageError(str(e)) from None
    except (GameFailed, RayRunError) as e:
        raise click.ClickException(f"{e}; the games finished before it are in {out_dir}") from None
    except RecordsError as e:
        raise click.ClickException(f"--resume: {e}") from None
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    except OSError as e:  # the output folder, or an agent's file
        raise click.ClickException(f"{e.filename or out_dir}: {e.strerror or e}") from None
    if outcome.interrupted:
        click.echo(f"\ninterrupted: {outcome.finished} of {outcome.total} games finished "
                   f"(kept; continue with --resume --out {out_dir})")
    click.echo(f"{game_string}: {outcome.finished} of {outcome.total} games, seed {seed}"
               + (f", AIVAT with value function {value}" if value != "none" else "") + "\n")
    click.echo(format_table(outcome.results))
    click.echo(f"\nwrote {os.path.join(out_dir, 'results.json')}, results.csv, games.jsonl")
    if outcome.interrupted:
        raise SystemExit(130)


@click.command("compare")
@click.argument("dir_a", metavar="DIR_A", type=click.Path(exists=True, file_okay=False))
@click.argument("dir_b", metavar="DIR_B", type=click.Path(exists=True, file_okay=False))
def compare(dir_a, dir_b):
    """Compare two tournaments of the same game, seed and agent count game by game.

    Games with the same index share their deal, seating and seeds, so the
    difference of each agent slot's payoff between the two removes the luck
    they share: e.g. a new network against the heuristic in DIR_A, the old
    one against the heuristic in DIR_B. Prints, per slot, both means and the
    paired difference A - B with its 95% CI (deals as clusters).

    \b
    Example:
      kibitz tournament underdog --agents 'net(new.json.gz),heuristic' --games 10000 --seed 11 --out new
      kibitz tournament underdog --agents trained,heuristic --games 10000 --seed 11 --out old
      kibitz compare new old
    """
    from kibitz import api

    try:
        out = api.compare(dir_a, dir_b)
    except RecordsError as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"{out['game']}, seed {out['seed']}: {out['games']:,} games finished in both")
    for s in out["slots"]:
        click.echo(f"  {s['a']} (A) vs {s['b']} (B): {s['mean_a']:.4f} vs {s['mean_b']:.4f} over {s['games']:,} "
                   f"games, difference {s['difference']:+.4f} (se {s['se']:.4f}), 95% CI "
                   f"[{s['ci95_low']:+.4f}, {s['ci95_high']:+.4f}] ({s['deals']:,} deals)")
        if out["aivat"]:
            click.echo(f"    AIVAT: difference {s['aivat_difference']:+.4f} (se {s['aivat_se']:.4f}), 95% CI "
                       f"[{s['aivat_ci95_low']:+.4f}, {s['aivat_ci95_high']:+.4f}]")
