"""Rollout labels for one step of policy improvement of a network agent.

A network agent file (a shipped ``trained`` network, or any ``kibitz
export`` of a network) plays ``k`` seats of a game (``k`` uniform in
``1..n-1``, as in :mod:`agents.distill`) and an *opponent* agent (e.g.
``heuristic``) the others. At every decision of a network seat with more
than one legal move, each legal move ``a`` is *rolled out* once from the
true state (the hands and deck as dealt): ``a`` is played, then every seat
plays to the end as in the game (the network's seats by sampling its
policy, the opponent's seats by their agents, chance by its
probabilities), and the mover's return ``R_a`` is recorded. The rollouts of
one decision share one random stream (common random numbers): its draws,
for chance and for the agents' moves alike, are taken in the same order
for every ``a``, so the moves meet the same luck as long as their
continuations take the same steps (a move that adds a chance draw or a
decision shifts the later draws by one: the labels stay unbiased, with less
of the variance removed). The game
then goes on with the move the network samples.

Because play reaches the true states with their real probabilities given
what the mover sees, the mean of ``R_a`` at a decision is the action value
``Q(I, a)`` of its information set ``I`` under the played policies, and
``sum_a (pi'(a|I) - pi(a|I)) R_a`` estimates, without a belief model, how
much a policy ``pi'`` that moves differently at ``I`` (and as ``pi``
afterwards) gains over the played ``pi`` (:func:`solvers.distill.fit` with
``objective="improve"`` fits such a ``pi'``).

Game ``i`` is a function of ``(seed, i)`` alone, and games are written in
shards beside a ``data.json`` of the settings, as teacher games are
(:func:`agents.distill.collect`): a stopped run keeps its shards and
another run with the same settings plays only the missing games; the data
does not depend on the number of workers.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kibitz.agents.training.distill import check_folder, game_start, missing_runs, run_jobs

#: the settings that make a rollout-data folder
META_KEYS = ("game", "network", "opponent", "rounds", "moves", "seed", "chunk", "kind")


def _sample(probs: dict, rng: np.random.Generator) -> int:
    from kibitz.games.chance import draw

    return draw(probs.items(), rng.random() * sum(probs.values()))


def _rollout(game, state, held, net, opponent, make_agent, stream, stop: int = 0, moves: int = -1) -> list[float]:
    """The returns of playing ``state`` to the end with the random
    ``stream`` (a seed sequence): the network ``net`` in the seats
    ``held``, fresh ``opponent`` agents seeded from the stream in the
    others; with ``stop`` > 0, the game's standing once round ``stop``
    begins (its first chance move) if the game lasts that long; with
    ``moves`` >= 0, the standing before the (moves+1)-th move by a player
    (chance moves are played)."""
    from kibitz.games.chance import draw

    rng = np.random.Generator(np.random.PCG64(stream))
    n = game.num_players()
    seeds = [int(rng.integers(2 ** 63)) for _ in range(n)]
    agents = {}
    while not state.is_terminal():
        if state.is_chance_node():
            if stop and state.round_number() >= stop:
                return list(state.standing())
            state.apply_action(draw(state.chance_outcomes(), rng.random()))
            continue
        if moves == 0:
            return list(state.standing())
        moves -= 1
        p = state.current_player()
        if held[p]:
            probs = net(state, p)
        else:
            if p not in agents:
                agents[p] = make_agent(opponent, game, p, seeds[p])
            probs = agents[p].action_probabilities(state)
        state.apply_action(_sample(probs, rng))
    return list(state.returns())


def network_policy(spec, params, game):
    """``net(state, player) -> {action: probability}``: the network's policy
    over the legal moves (numpy, float64 softmax: :func:`solvers.network.probabilities`)."""
    from kibitz.games import encoding_tensor
    from kibitz.solvers import network

    index = network.action_index(spec, game)

    def net(state, player):
        return network.probabilities(params, encoding_tensor(state, player, spec.encoding),
                                     state.legal_actions(), index)
    return net


def play_game(game, spec, params, opponent: str, seed: int, index: int, make_agent, rounds: int = 0,
              moves: int = -1) -> dict:
    """One game of rollout labels (see the module docstring): its rows
    ``(player, input, legal, probabilities, values, move played)`` and
    returns. ``rounds`` > 0 ends each rollout when the ``rounds``-th round
    after the decision's begins, with the game's standing there as the
    values (as IS-MCTS's ``rollout_rounds``); ``moves`` >= 0 ends it
    before the (moves+1)-th move by a player after the decision's, likewise
    (``rollout_moves``); the first limit reached ends it."""
    from kibitz.games import encoding_tensor
    from kibitz.games.chance import draw

    n = game.num_players()
    rng, held, seeds = game_start(n, seed, index, True)
    agents = [None if held[p] else make_agent(opponent, game, p, seeds[p]) for p in range(n)]
    net = network_policy(spec, params, game)
    rows = []
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            state.apply_action(draw(state.chance_outcomes(), rng.random()))
            continue
        p = state.current_player()
        if not held[p]:
            state.apply_action(agents[p].step(state))
            continue
        legal = state.legal_actions()
        probs = net(state, p)
        if len(legal) > 1:
            stream = [seed, index, len(rows), 3]  # one stream for every move of this decision
            stop = state.round_number() + rounds if rounds else 0
            values = []
            for a in legal:
                after = state.clone()
                after.apply_action(a)
                values.append(_rollout(game, after, held, net, opponent, make_agent, stream, stop, moves)[p])
            move = _sample(probs, rng)
            rows.append((p, encoding_tensor(state, p, spec.encoding), legal, [probs[a] for a in legal], values,
                         legal.index(move)))
        else:
            move = legal[0]
        state.apply_action(move)
    return {"rows": rows, "returns": state.returns()}


def shard_arrays(games: list, size: int) -> dict[str, np.ndarray]:
    """A shard's arrays: ``x`` (rows, size) float32; ``legal`` (flat) with
    ``offset`` (rows + 1); beside ``legal``, ``policy`` (the network's
    probabilities) and ``value`` (the rollout returns ``R_a``); per row
    ``taken`` (the position of the move played), ``ret`` (the mover's
    return) and ``game`` (its index)."""
    rows = [(i, g["returns"], r) for i, g in games for r in g["rows"]]
    offset = np.zeros(len(rows) + 1, np.int64)
    offset[1:] = np.cumsum([len(r[2][2]) for r in rows])
    return {"x": np.array([r[2][1] for r in rows], np.float32).reshape(len(rows), size),
            "legal": np.array([a for r in rows for a in r[2][2]], np.int32),
            "offset": offset,
            "policy": np.array([v for r in rows for v in r[2][3]], np.float32),
            "value": np.array([v for r in rows for v in r[2][4]], np.float32),
            "taken": np.array([r[2][5] for r in rows], np.int32),
            "ret": np.array([r[1][r[2][0]] for r in rows], np.float32),
            "game": np.array([r[0] for r in rows], np.int32)}


def _play_chunk(job):
    from kibitz.agents.formats.export import network_of_agent_file
    from kibitz.agents.registry import make_agent
    from kibitz.games import load_game

    path, opponent, rounds, moves, seed, lo, hi = job
    spec, params = network_of_agent_file(path)
    game = load_game(spec.game)
    return lo, hi, [(i, play_game(game, spec, params, opponent, seed, i, make_agent, rounds, moves))
                    for i in range(lo, hi)]


def check_rounds(game, rounds: int, moves: int = -1) -> None:
    """ValueError unless ``rounds`` is 0 and ``moves`` -1 (rollouts to the
    end), or ``game`` has rounds and a standing; the message names the option."""
    from kibitz.games import search as game_search

    if rounds < 0:
        raise ValueError(f"rounds={rounds}; allowed: 0 (roll out to the end) or k >= 1")
    if moves < -1:
        raise ValueError(f"moves={moves}; allowed: -1 (no limit) or k >= 0")
    limited = "rounds" if rounds else "moves" if moves >= 0 else None
    if limited and not {game_search.DIRECT, game_search.ROUNDS} <= game_search.capabilities(game):
        value = rounds if rounds else moves
        raise ValueError(f"{limited}={value} needs a game with a standing (the kibitz games); "
                         f"{game.get_type().short_name} has none: roll out to the end (rounds=0, moves=-1)")


def collect(path, opponent: str, seed: int, games: int, folder, chunk: int = 20, workers: int = 1,
            rounds: int = 0, moves: int = -1, on_shard=None, should_stop=None) -> int:
    """Plays the games ``0..games-1`` missing from ``folder`` with the
    network agent file ``path`` against ``opponent`` (rollouts of
    ``rounds`` rounds and ``moves`` moves, 0 and -1: to the end;
    :func:`play_game`); ``on_shard(lo,
    hi, decisions)`` after each shard is written, ``should_stop()`` (asked
    after each shard) ends it early. Returns how many of the games the
    folder holds. The folder is tied to the network by its model's sha256
    (not the file's, which records when it was exported)."""
    import hashlib

    from kibitz.agents.formats.export import network_of_agent_file
    from kibitz.agents.formats.kibitz_agent_loader import model_bytes, read_document
    from kibitz.games import load_game
    from kibitz.solvers._io import atomic_write

    folder = Path(folder)
    spec, _ = network_of_agent_file(path)
    game = load_game(spec.game)
    check_rounds(game, rounds, moves)
    meta = {"game": str(game), "network": hashlib.sha256(model_bytes(read_document(path))).hexdigest(),
            "opponent": opponent, "rounds": rounds, "moves": moves, "seed": seed, "chunk": chunk,
            "kind": "rollouts"}
    check_folder(folder, meta, META_KEYS)
    jobs = [(str(path), opponent, rounds, moves, seed, lo, hi) for lo, hi in missing_runs(folder, games, chunk)]

    def write(lo, hi, played):
        arrays = shard_arrays(played, spec.input_size)
        atomic_write(folder / f"games-{lo:06d}-{hi:06d}.npz", lambda f: np.savez(f, **arrays))
        if on_shard is not None:
            on_shard(lo, hi, len(arrays["taken"]))

    run_jobs(_play_chunk, jobs, write, workers, should_stop)
    return games - sum(hi - lo for lo, hi in missing_runs(folder, games, games))
