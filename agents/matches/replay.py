"""One recorded game of a tournament's games.jsonl, move by move (``kibitz replay``).

:func:`replay` finds the game by its index, replays its moves (checked
against the rules and the recorded returns, or with ``rerun`` played again
by fresh agents from the recorded seeds and compared move by move:
:func:`kibitz.agents.matches.tournament.replay_record`) and names every
move as the game does.
"""

from __future__ import annotations

import dataclasses

from kibitz.agents.matches.tournament import RecordsError, read_records_and_tail, replay_record
from kibitz.solvers.solve import ConfigError


@dataclasses.dataclass(frozen=True)
class Replay:
    """A recorded game replayed: its ``record`` (as in games.jsonl), its
    ``moves`` as ``(player, move name)`` (player None: chance), its
    ``final`` state (``final.returns()``), and whether it was ``rerun``
    (played again from its seeds, every move equal to the record)."""

    record: dict
    moves: tuple
    final: object
    rerun: bool


def replay(path, index: int, rerun: bool = False) -> Replay:
    """Game ``index`` of the games.jsonl ``path``. A file that is not one
    raises :class:`~kibitz.agents.matches.tournament.RecordsError`; a game
    it does not hold, ConfigError naming ``--game``; a record that does not
    replay (or rerun) as recorded, ValueError saying where."""
    records, torn = read_records_and_tail(str(path))
    matches = [r for r in records if r["index"] == index]
    if not matches and torn:  # perhaps the game asked for
        raise RecordsError(f"{path}, {torn}, as a run killed while writing a game leaves its last "
                           f"line; game {index} is not among the {len(records)} games before it")
    if not matches:
        held = sorted(r["index"] for r in records)
        raise ConfigError(f"no game {index} in {path} ("
                          + (f"it holds {len(held)} games, numbered {held[0]}..{held[-1]})" if held
                             else "it holds no games)"), "--game")
    record = matches[0]
    final = replay_record(record, rerun=rerun)
    state = final.get_game().new_initial_state()
    moves = []
    for action in record["moves"]:
        player = state.current_player()
        moves.append((None if state.is_chance_node() else player, state.action_to_string(player, action)))
        state.apply_action(action)
    return Replay(record, tuple(moves), final, rerun)
