"""The docs' tables of figures are copies of the files the measuring commands write.

Every marked copy (``<!-- generated: FILE -->`` ... ``<!-- end generated -->``,
see kibitz.experiments.tables) in README.md and docs/ (docs/results/README.md,
the results index, included) equals its file, and
every table of figures outside a marked copy is one of NOT_GENERATED, with
the reason no command writes it. After a run that rewrote a table:
``python -m kibitz.experiments.tables``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kibitz.experiments import speed, tables

ROOT = Path(__file__).resolve().parents[1]

#: (file, the table's header line) -> why no command writes it
NOT_GENERATED = {
}

#: tables with decimals that state facts (formats, rules, defaults), not measurements
NOT_FIGURES = {
    ("docs/formats/agent-file.md", "| game (default size) | inputs | actions | piece: offset, size (shape) |"),
    ("docs/rules/over_under.md", "| donated | rank |"),
    ("docs/serving.md", "| what | limit | beyond it |"),
    ("docs/solvers/cfr.md", "| `--algorithm` | regret matching | regret rule after each update "
                            "| average weight `w_t` | reference |"),
    ("docs/solvers/ismcts.md", "| option | default | meaning |"),
    ("docs/solvers/exploit.md", "| option | default | meaning |"),
    ("docs/solvers/mccfr.md", "| option | default | meaning |"),
}


def test_every_marked_copy_equals_its_source():
    assert tables.stale(ROOT) == [], "run `python -m kibitz.experiments.tables` after the run that wrote the file"


def test_readme_and_docs_tables_of_figures_are_generated():
    found, unmarked = set(), []
    for path in tables.doc_files(ROOT):
        name = str(path.relative_to(ROOT))
        text = path.read_text(encoding="utf-8")
        for line in tables.unmarked_tables(text, name):
            header = text.split("\n")[int(line.split(":")[1]) - 1]
            if (name, header) in NOT_GENERATED or (name, header) in NOT_FIGURES:
                found.add((name, header))
            else:
                unmarked.append(line)
    assert unmarked == [], "a table of figures must be a marked copy of the file its command writes"
    assert found == set(NOT_GENERATED) | NOT_FIGURES, "a table listed here is gone or now generated"


def test_the_results_index_holds_the_generated_tables():
    """The README quotes headline figures; their tables are copied into the
    results index, docs/results/README.md (which the refresh reaches though it
    lies under docs/results/, where the sources are)."""
    index = ROOT / tables.RESULTS_INDEX
    assert index in tables.doc_files(ROOT)
    sources = {source for source, _, _ in tables.copies(index.read_text(encoding="utf-8"))}
    assert {"docs/results/games/table.md", "docs/results/strength/table.md",
            "docs/results/ismcts_strength/table.md", "docs/results/convergence/summary.md",
            "docs/results/trained/table.md", "docs/results/exploit/full.md",
            "docs/results/speed/table.md"} <= sources
    assert not any(p.relative_to(ROOT).as_posix().startswith(tables.RESULTS + "/")
                   for p in tables.doc_files(ROOT) if p != index)


def test_the_speed_table_is_built_from_the_benchmarks_rows():
    """A row file rewritten by a benchmark without ``--speed`` after it is found."""
    built = (ROOT / speed.FOLDER / "table.md").read_text(encoding="utf-8").rstrip("\n").split("\n")
    assert built == speed.table(ROOT / speed.FOLDER), "run `python -m kibitz.experiments.tables --speed`"


def test_a_benchmark_row_is_written_whole_with_its_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run = speed.Run(["bench/x_speed.py", "--games", "a;b"])
    (tmp_path / "out").mkdir()
    out = run.write(tmp_path / "out" / "x_speed.json", "x, steps/s", "a 2.00x | b 3.00x", ">= 1x",
                    data={"a": 2.0}, table=["| a | b |", "| --- | --- |", "| 2.00x | 3.00x |"])
    row = json.loads(out.read_text())
    assert row["command"] == "python bench/x_speed.py --games 'a;b'" and row["data"] == {"a": 2.0}
    assert len(row["load_start"]) == 3 and row["started"] <= row["ended"]
    assert (tmp_path / "out" / "x_speed.md").read_text() == "| a | b |\n| --- | --- |\n| 2.00x | 3.00x |\n"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["x_speed.json", "x_speed.md"]
    row.update(load_start=[5.04, 1, 1], load_end=[5.76, 1, 1], started="2026-12-06T21:00:00+00:00")
    out.write_text(json.dumps(row))
    (tmp_path / "out" / "cfr_speed.json").write_text(json.dumps(dict(row, benchmark="CFR+")))
    lines = speed.table(tmp_path / "out")
    assert lines[:2] == speed.HEADER and lines[2].startswith("| CFR+ | ")
    assert lines[3] == ("| x, steps/s | `bench/x_speed.py --games 'a;b'` | a 2.00x \\| b 3.00x | >= 1x "
                        "| 2026-12-06, load 5.0-5.8 |")


FIGURES = "| game | NashConv |\n| --- | ---: |\n| `kuhn_poker` | {} |\n"


def test_a_stale_copy_is_found_and_refreshed(tmp_path):
    (tmp_path / "docs" / "results").mkdir(parents=True)
    (tmp_path / "docs" / "results" / "t.md").write_text(FIGURES.format("1.2e-3"))
    readme = tmp_path / "README.md"
    readme.write_text("Intro.\n\n<!-- generated: docs/results/t.md -->\n" + FIGURES.format("5.0e-2")
                      + "<!-- end generated -->\n\nMore.\n")
    assert tables.stale(tmp_path) == ["README.md:4: the copy of docs/results/t.md differs from it"]
    assert tables.unmarked_tables(readme.read_text(), "README.md") == []
    assert tables.refresh(tmp_path) == ["README.md"]
    assert tables.stale(tmp_path) == []
    assert readme.read_text() == ("Intro.\n\n<!-- generated: docs/results/t.md -->\n" + FIGURES.format("1.2e-3")
                                  + "<!-- end generated -->\n\nMore.\n")
    assert tables.refresh(tmp_path) == []


def test_tables_of_figures_outside_a_copy_are_found():
    text = ("| game | parameters |\n| --- | --- |\n| `pub` | players (4; 3..8) |\n\n"
            + FIGURES.format("1.2e-3") + "\n```\n" + FIGURES.format("0.5") + "```\n"
            + "| a | b |\n| --- | --- |\n| `x(c=1.5)` | [link](v1.2.md) |\n")
    found = tables.unmarked_tables(text, "X.md")
    assert len(found) == 1 and found[0].startswith("X.md:5: ")


@pytest.mark.parametrize("text, message", [
    ("<!-- generated: a.md -->\n| x |\n", "has no '<!-- end generated -->'"),
    ("| x |\n<!-- end generated -->\n", "without its"),
    ("<!-- generated: a.md -->\n<!-- generated: b.md -->\n<!-- end generated -->\n", "inside the copy"),
])
def test_broken_markers_are_named(text, message):
    with pytest.raises(tables.MarkerError, match=message):
        tables.copies(text, "X.md")


def test_a_copy_of_a_missing_file_is_named(tmp_path):
    (tmp_path / "README.md").write_text("<!-- generated: docs/none.md -->\n<!-- end generated -->\n")
    with pytest.raises(tables.MarkerError, match="docs/none.md does not exist"):
        tables.stale(tmp_path)


def _tournament(folder: Path, game: str, a: tuple, b: tuple):
    folder.mkdir()
    (folder / "tournament.json").write_text(json.dumps({"game": game}))
    agents = [{"name": name, "mean_payoff": m, "ci95_low": lo, "ci95_high": hi}
              for name, (m, lo, hi) in (("trained", a), ("heuristic", b))]
    (folder / "results.json").write_text(json.dumps({"agents": agents}))


def test_pair_table_bolds_an_interval_wholly_above_the_other(tmp_path):
    _tournament(tmp_path / "u", "underdog", (0.3, 0.28, 0.32), (0.2, 0.18, 0.22))
    _tournament(tmp_path / "p", "pub", (0.26, 0.24, 0.28), (0.25, 0.23, 0.27))
    assert tables.pair_table([tmp_path / "u", tmp_path / "p"]) == [
        "| game | trained | heuristic |", "| --- | --- | --- |",
        "| `underdog` | **0.300 [0.280, 0.320]** | 0.200 [0.180, 0.220] |",
        "| `pub` | 0.260 [0.240, 0.280] | 0.250 [0.230, 0.270] |"]


def test_pair_table_adds_the_aivat_estimates_where_there_are_any(tmp_path):
    _tournament(tmp_path / "u", "underdog", (0.3, 0.28, 0.32), (0.2, 0.18, 0.22))
    _tournament(tmp_path / "p", "pub", (0.26, 0.24, 0.28), (0.25, 0.23, 0.27))
    doc = json.loads((tmp_path / "p" / "results.json").read_text())
    for agent, (m, lo, hi) in zip(doc["agents"], ((0.27, 0.26, 0.28), (0.24, 0.23, 0.25))):
        agent.update({"aivat_mean": m, "aivat_ci95_low": lo, "aivat_ci95_high": hi})
    (tmp_path / "p" / "results.json").write_text(json.dumps(doc))
    assert tables.pair_table([tmp_path / "u", tmp_path / "p"]) == [
        "| game | trained | heuristic | trained, AIVAT | heuristic, AIVAT |", "| --- | --- | --- | --- | --- |",
        "| `underdog` | **0.300 [0.280, 0.320]** | 0.200 [0.180, 0.220] | - | - |",
        "| `pub` | 0.260 [0.240, 0.280] | 0.250 [0.230, 0.270] | **0.270 [0.260, 0.280]** | 0.240 [0.230, 0.250] |"]


def test_exploit_tables_read_each_run_and_fall_back_to_the_search(tmp_path):
    from kibitz.experiments import exploit_batched

    def run(folder, gains, agent_value, learned=None):
        folder.mkdir(parents=True)
        seats = [{"seat": s, "gain": g, "agent_value": agent_value, "eval_games": 10} for s, g in enumerate(gains)]
        mean = sum(gains) / len(gains)
        (folder / "exploit.json").write_text(json.dumps({
            "game": "pub", "agent": folder.name.split("-", 1)[1], "seats": seats, "mean_gain": mean,
            "mean_gain_ci95": [mean - 0.01, mean + 0.01], "train_seconds": 120.0}))
        (folder / "settings.json").write_text(json.dumps({"learned": learned or {}, "iterations": 400}))

    batched, search = tmp_path / "exploit/batched/all-seats", tmp_path / "exploit/full"
    run(batched / "pub-random", [0.1, 0.2, 0.3, 0.2], 0.2, {"init": "opponent"})
    run(search / "pub-heuristic", [-0.05] * 4, 0.25)
    run(tmp_path / "exploit/ismcts/pub-ismcts", [0.04] * 4, 0.25)
    (tmp_path / "exploit/ismcts/pub-ismcts").rename(tmp_path / "exploit/ismcts/pub")
    exploit_batched.write_table(batched)
    rows = (tmp_path / "exploit/batched/all_seats.md").read_text().splitlines()
    assert len(rows) == 3  # header, rule, the one batched run
    assert "| init=opponent | 400 | 2 min | 10 | +0.100 / +0.200 / +0.300 / +0.200 | +0.200 |" in rows[2]
    assert rows[2].endswith("| 0.25 |")  # 0.2 of the most a seat can gain, 1 - 0.2
    pub = next(r for r in (tmp_path / "exploit/summary.md").read_text().splitlines() if r.startswith("| `pub`"))
    assert pub == "| `pub` | +0.200 [+0.190, +0.210] b | -0.050 [-0.060, -0.040] s | - | +0.040 [+0.030, +0.050] a |"


def test_ismcts_table_reads_each_run(tmp_path):
    from kibitz.experiments import exploit_ismcts

    root = tmp_path / "exploit/ismcts"
    (root / "pub").mkdir(parents=True)
    seats = [{"seat": s, "gain": 0.01 * s, "agent_value": 0.25, "eval_games": 500} for s in range(4)]
    (root / "pub" / "exploit.json").write_text(json.dumps({
        "game": "pub", "agent": exploit_ismcts.SPEC, "method": "agent", "responder": "trained", "seats": seats,
        "mean_gain": 0.015, "mean_gain_ci95": [0.005, 0.025], "train_seconds": 0.0}))
    (root / "pub" / "wall.json").write_text(json.dumps({"seconds": 600.0, "sittings": 1}))
    rows = exploit_ismcts.write_table(root).read_text().splitlines()
    assert rows[2] == ("| `pub` | ismcts(sims=100) | trained | 500 | 0.250 | +0.000 / +0.010 / +0.020 / +0.030 | "
                       "+0.015 | [+0.005, +0.025] | 0.02 | 10 min |")
