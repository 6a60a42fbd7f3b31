"""IS-MCTS strength matches: the ``ismcts_match`` kind of the experiment runner.

A match is ``games`` games of GAME with kibitz's IS-MCTS in one seat and the
opponent kind in every other seat; IS-MCTS's seat rotates (game ``i`` puts
it in seat ``i mod n``). Chance and every agent are seeded from ``seed`` and
the game index (chance from the deal, ``index // n``: the n seatings of a
deal draw the same random numbers), so a match is reproducible and can be
split across runs (``start``). A run appends to the match's CSV and skips
the game indices the file already holds, so an interrupted match resumes
where it stopped; runs with disjoint ``start`` ranges may append to one file
at the same time (``records.AppendCSV``). Matches are run only through the
runner: ``kibitz experiment run experiments/ismcts_strength_campaign`` (and
``make strength``), one table per match in the spec, ``--set only=NAME`` for
some of them.

Match options (:func:`parser` declares them; a spec writes them with
``_``): ``game``, ``opponent`` (``random``, ``heuristic``, ``trained`` (the
network that ships for the game), or ``openspiel``: OpenSpiel's Python
``ISMCTSBot`` with the same simulations, the same UCT constant and one
random rollout per leaf), ``fill`` (with a kind, the
opponent holds one seat only, its offset from IS-MCTS rotating by deal, and
the kind the others; IS-MCTS is then compared with that seat, which keeps a
match against the slower ``ISMCTSBot`` affordable), ``games``, ``start``,
``seed``, and the IS-MCTS options: ``preset`` and every field of
``ISMCTSConfig``.

The CSV has one row per game (seat of IS-MCTS, every seat's return,
seconds); :func:`table_lines` summarises match files (also of matches
stopped early): for IS-MCTS and for the mean opponent seat, the mean return
with its 95% confidence interval, and the mean of the per-game difference
with its 95% interval (``records.mean_ci95``: normal approximation, 1.96
standard errors, taken over deals: each deal counts as the mean of its
seatings). With ``payoff=win`` an even seat gets ``1/n``.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
import time

import numpy as np
import pyspiel

from kibitz import games  # noqa: F401  (registers the kibitz games)
from kibitz.agents.registry import make_agent
from kibitz.experiments.records import AppendCSV, OtherRunError, mean_ci95, read_csv
from kibitz.solvers._direct import direct_rules
from kibitz.solvers.ismcts import PRESETS, ISMCTSConfig, make_config
from kibitz.games.chance import sample_chance


def openspiel_bot(game, player, seed, sims, uct_c):
    from open_spiel.python.algorithms import ismcts, mcts
    rs = np.random.RandomState(seed % 2**32)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rs)
    bot = ismcts.ISMCTSBot(game, evaluator, uct_c, sims, random_state=rs)
    # Left alone, the bot draws its worlds with an unseeded
    # pyspiel.UniformProbabilitySampler(0, 1), so a game could not be played
    # again; the same uniform draws from a seeded sampler make it repeatable.
    sampler = pyspiel.UniformProbabilitySampler(int(seed % 2**31), 0.0, 1.0)

    def resample(state, player):
        # A kibitz game's internal resample replays only the current round
        # and gives the same world as the full replay from the same draws
        # (tested); the bot never reads the world's pyspiel history, which
        # the internal resample does not keep. So the bot searches exactly
        # as with the full replay, in less time.
        if direct_rules(state):
            return state.resample_from_infostate(player, sampler, internal=True)
        return state.resample_from_infostate(player, sampler)

    bot.set_resampler(resample)
    return bot


def play_game(game, bots, rng: np.random.Generator):
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(sample_chance(state, rng.random))
        else:
            state.apply_action(int(bots[state.current_player()].step(state)))
    return state.returns()


def deal_means(games, n):
    """Per-deal means of (IS-MCTS return, mean opponent return, difference).

    ``games`` holds (index, IS-MCTS seat, returns, opponent seats). The n seatings of a deal share
    its chance numbers, so they are not independent draws: the confidence
    intervals are taken over deals (each the mean of its seatings played).
    """
    by_deal = {}
    for index, seat, ret, opp in games:
        mine = ret[seat]
        theirs = sum(ret[p] for p in opp) / len(opp)
        by_deal.setdefault(index // n, []).append((mine, theirs, mine - theirs))
    return np.array([np.mean(v, axis=0) for v in by_deal.values()]).reshape(-1, 3)


def read_match(path):
    rows = read_csv(path)
    if not rows:
        return None, []
    n = sum(1 for k in rows[0] if k.startswith("return_"))
    games = []
    for r in rows:
        seat = int(r["ismcts_seat"])
        opp = ([int(x) for x in r["opponent_seats"].split()] if r.get("opponent_seats")
               else [p for p in range(n) if p != seat])
        games.append((int(r["index"]), seat, [float(r[f"return_{p}"]) for p in range(n)], opp))
    return rows, games


def table_lines(paths) -> list[str]:
    """A Markdown table, one row per match CSV (files without games are left out)."""
    lines = ["| game | IS-MCTS | opponent | games (deals) | IS-MCTS mean | opponent seat mean | difference | s/game |",
             "| --- | --- | --- | ---: | --- | --- | --- | ---: |"]
    for path in paths:
        rows, games = read_match(path)
        if not rows:
            continue
        n = len(games[0][2])
        per_deal = deal_means(games, n)
        cells = [f"{m:+.3f} ± {h:.3f}" if k == 2 else f"{m:.3f} ± {h:.3f}"
                 for k, (m, h) in enumerate(mean_ci95(per_deal[:, k]) for k in range(3))]
        secs = sum(float(r["seconds"]) for r in rows) / len(rows)
        r0 = rows[0]
        lines.append(f"| {r0['game']} | `{r0['ismcts']}` | {r0['opponent']} | {len(games)} ({len(per_deal)}) | "
                     f"{' | '.join(cells)} | {secs:.1f} |")
    return lines


def report(game, opponent, spec, games, n, note=""):
    per_deal = deal_means(games, n)
    (m1, h1), (m2, h2), (md, hd) = (mean_ci95(per_deal[:, k]) for k in range(3))
    print(f"{game}: {spec} vs {opponent}, {len(games)} games in {len(per_deal)} deals"
          f"{', ' + note if note else ''}:")
    print(f"  ismcts mean return    {m1:.4f} +- {h1:.4f}")
    print(f"  opponent mean return  {m2:.4f} +- {h2:.4f}")
    print(f"  difference            {md:+.4f} +- {hd:.4f}")


def ismcts_config(args) -> ISMCTSConfig:
    """The IS-MCTS seat's configuration: the preset, with the options given."""
    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(ISMCTSConfig)
             if getattr(args, f.name) is not None}
    return make_config(args.preset, **given)


#: options written into the agent spec (and so into the CSV's ``ismcts``
#: column, which a resumed match must repeat), in this order, where they
#: differ from the defaults; sims, uct_c and rollout are always written
_SPEC_ORDER = ("rollout_rounds", "rollout_moves", "widen", "expand", "max_world_samples", "belief",
               "opponents", "moves", "seconds", "final", "belief_tries")


def ismcts_spec(config: ISMCTSConfig) -> str:
    """The agent spec of the IS-MCTS seat (options left at their defaults are not written)."""
    default = ISMCTSConfig()
    extra = ""
    for name in _SPEC_ORDER:
        value = getattr(config, name)
        if value == getattr(default, name):
            continue
        extra += f",{name}={value:g}" if isinstance(value, float) else f",{name}={value}"
        # belief_eps is written with the first option that reads it
        if name == "belief" or (name == "opponents" and config.belief == default.belief):
            extra += f",belief_eps={config.belief_eps:g}"
    return f"ismcts(sims={config.sims},uct_c={config.uct_c},rollout={config.rollout}{extra})"


def _add_ismcts_options(ap: argparse.ArgumentParser) -> None:
    """--preset and one flag per ISMCTSConfig field (help and choices from the field)."""
    ap.add_argument("--preset", default=None, choices=sorted(PRESETS),
                    help="IS-MCTS preset (solvers/ismcts.py PRESETS); the options below override it")
    for f in dataclasses.fields(ISMCTSConfig):
        meta = f.metadata
        kind = type(f.default)
        help_text = f"IS-MCTS {f.name} (default {f.default!r}): {meta['help']}"
        if f.name in ("sims", "uct_c"):
            help_text += " (OpenSpiel's ISMCTSBot gets the same)"
        ap.add_argument(f"--{f.name.replace('_', '-')}", type=kind, default=None, choices=meta["choices"],
                        help=help_text)


class _Parser(argparse.ArgumentParser):
    """The match options' parser: a bad value raises ValueError, naming the
    option as a spec writes it (``sims``, not ``--sims``), instead of
    printing a usage text and exiting."""

    def error(self, message):
        raise ValueError(re.sub(r"argument --([\w-]+)", lambda m: m[1].replace("-", "_"), message))


def parser() -> argparse.ArgumentParser:
    """The options of one match (a spec's match table uses the same names, with ``_``)."""
    ap = _Parser(description=__doc__.splitlines()[0], add_help=False)
    ap.add_argument("--game", required=True, help="game string, e.g. underdog or pub(players=5)")
    ap.add_argument("--opponent", required=True, choices=["random", "heuristic", "openspiel", "trained"])
    ap.add_argument("--fill", default="none", choices=["none", "random", "heuristic"],
                    help="none: the opponent kind in every other seat; random/heuristic: the "
                         "opponent in one other seat (its offset from IS-MCTS rotating by deal) "
                         "and this kind in the rest, and IS-MCTS is compared with that one seat")
    _add_ismcts_options(ap)
    ap.add_argument("--games", type=int, default=1000, help="games in the match")
    ap.add_argument("--start", type=int, default=0, help="index of the first game (to split a match)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True, help="CSV file (rows are appended)")
    return ap


# the options a spec's match table may set (its file is the runner's choice)
OPTIONS = tuple(k for k in vars(parser().parse_args(["--game", "", "--opponent", "random", "--out", ""]))
                if k != "out")


def match_from_options(options: dict, out) -> argparse.Namespace:
    """The match of a spec's table ``options`` (option names with ``_``), written to ``out``."""
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ValueError(f"unknown match option(s) {', '.join(unknown)}; allowed: {', '.join(OPTIONS)}")
    argv = []
    for key, value in options.items():
        argv += [f"--{key.replace('_', '-')}", str(value).lower() if isinstance(value, bool) else str(value)]
    args = parser().parse_args(argv + ["--out", str(out)])
    for key, low in (("games", 1), ("start", 0), ("seed", 0)):
        if getattr(args, key) < low:
            raise ValueError(f"{key} must be an integer >= {low}; got {getattr(args, key)}")
    return args


def seating(index: int, n: int, fill: str) -> tuple[int, list[int]]:
    """(IS-MCTS seat, opponent seats) of game ``index``: the seat rotates by game,
    and with a fill kind the one opponent's offset rotates by deal."""
    seat = index % n
    if fill == "none":
        return seat, [p for p in range(n) if p != seat]
    return seat, [(seat + 1 + (index // n) % (n - 1)) % n]


def game_seeds(seed: int, index: int, n: int) -> tuple[list[int], int]:
    """(every seat's agent seed, the chance seed) of game ``index``: agents'
    seeds differ per game; chance follows the deal (``index // n``), so the n
    seat rotations of a deal meet the same random numbers."""
    seeds = np.random.SeedSequence([seed, index]).generate_state(n)
    deal_seed = np.random.SeedSequence([seed, index // n, 1]).generate_state(1)[0]
    return [int(s) for s in seeds], int(deal_seed)


def seat_bots(game, args, spec: str, seat: int, opp: list[int], seeds: list[int]) -> list:
    bots = []
    for p in range(game.num_players()):
        if p == seat:
            bots.append(make_agent(spec, game, p, seeds[p]))
        elif p not in opp:
            bots.append(make_agent(args.fill, game, p, seeds[p]))
        elif args.opponent == "openspiel":
            config = ismcts_config(args)
            bots.append(openspiel_bot(game, p, seeds[p], config.sims, config.uct_c))
        else:
            bots.append(make_agent(args.opponent, game, p, seeds[p]))
    return bots


def opponent_label(args) -> str:
    return args.opponent if args.fill == "none" else f"{args.opponent} (other seats {args.fill})"


_GAMES: dict = {}


def play_row(args, index: int) -> dict:
    """Game ``index`` of the match ``args``: its CSV row (a function of the
    options and the index, the seconds aside)."""
    game = _GAMES.get(args.game) or _GAMES.setdefault(args.game, pyspiel.load_game(args.game))
    n = game.num_players()
    config = ismcts_config(args)
    spec = ismcts_spec(config)
    seeds, deal_seed = game_seeds(args.seed, index, n)
    seat, opp = seating(index, n, args.fill)
    bots = seat_bots(game, args, spec, seat, opp, seeds)
    g0 = time.perf_counter()
    returns = play_game(game, bots, np.random.default_rng(deal_seed))
    secs = time.perf_counter() - g0
    row = dict(game=args.game, opponent=opponent_label(args), sims=config.sims, ismcts=spec, index=index,
               seed=args.seed, ismcts_seat=seat, opponent_seats=" ".join(map(str, opp)), seconds=f"{secs:.3f}")
    row.update({f"return_{p}": f"{r:.6g}" for p, r in enumerate(returns)})
    return row


def row_game(row: dict, n: int) -> tuple:
    """(index, IS-MCTS seat, returns, opponent seats) of a row from :func:`play_row`."""
    return (row["index"], row["ismcts_seat"], [float(row[f"return_{p}"]) for p in range(n)],
            [int(x) for x in row["opponent_seats"].split()])


def play_rows(matches: dict, items) -> list[dict]:
    """The rows of ``items`` ((match name, game index) pairs) of ``matches``
    (name -> options): one batch of a Ray run."""
    return [play_row(matches[name], index) for name, index in items]


def match_file(args):
    """The match's CSV, opened to append (its header, its identity); ``done`` holds the games in it."""
    n = pyspiel.load_game(args.game).num_players()
    config = ismcts_config(args)
    fields = (["game", "opponent", "sims", "ismcts", "index", "seed", "ismcts_seat", "opponent_seats",
               "seconds"] + [f"return_{p}" for p in range(n)])
    return AppendCSV(args.out, fields, {"game": args.game, "opponent": opponent_label(args),
                                        "ismcts": ismcts_spec(config), "seed": args.seed})


def play_match(args) -> list:
    """Plays (or resumes) the games ``args.start .. args.start + args.games - 1``
    of the match ``args`` into ``args.out``; returns the games this run played
    as (index, IS-MCTS seat, returns, opponent seats)."""
    n = pyspiel.load_game(args.game).num_players()
    spec = ismcts_spec(ismcts_config(args))
    label = opponent_label(args)
    with match_file(args) as out:
        todo = [i for i in range(args.start, args.start + args.games) if i not in out.done]
        if len(todo) < args.games:
            print(f"{args.out}: {args.games - len(todo)} of these games are already played; "
                  f"playing the other {len(todo)}", file=sys.stderr)
        played = []
        tty = sys.stderr.isatty()
        t0 = time.perf_counter()
        for i in todo:
            row = play_row(args, i)
            out.write(row)
            played.append(row_game(row, n))
            if tty or len(played) % 10 == 0 or len(played) == len(todo):
                m, h = mean_ci95(deal_means(played, n)[:, 2])
                # a bar redrawn in place on a terminal; a plain line every 10 games elsewhere (log files)
                print(("\r" if tty else "") + f"{len(played)}/{len(todo)} games  "
                      f"{len(played) / (time.perf_counter() - t0):.3f} games/s  "
                      f"ismcts-minus-opponent {m:+.3f} +- {h:.3f}", end="" if tty else "\n",
                      file=sys.stderr, flush=True)
        if tty and played:
            print(file=sys.stderr)
    if played:
        report(args.game, label, spec, played, n, f"this run, seed {args.seed}")
    _, games_all = read_match(args.out)
    if len(games_all) > len(played):
        report(args.game, label, spec, games_all, n, f"all of {args.out}")
    return played
