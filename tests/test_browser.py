"""The web table in a real browser: Playwright driving Debian's Chromium.

Each test opens the page served by ``kibitz serve`` (in this process, bots
without delay) and plays or watches by clicking, as a person would; the
result screen must show the game's returns. A failing test leaves a
screenshot and the page's HTML in test-artifacts/. These tests are never
skipped: without Chromium they fail and say how to install it (`make test`
does). One browser serves the whole session.
"""

import json
import os
import pathlib
import shutil

import numpy as np
import pyspiel
import pytest

from kibitz.agents.web_app import Server, make_app
from kibitz.games import REGISTRY

ROOT = pathlib.Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
SCREENSHOT = ROOT / "docs" / "images" / "web-table.png"
#: Chromium's flags here: no sandbox (root), and no background connections
#: (the machine has no network but the package registries)
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
#: a quick game of each kibitz game, with fast bots
GAMES = {
    "underdog": (REGISTRY["underdog"].small, ["human", "heuristic", "random"]),
    "pub": (REGISTRY["pub"].small, ["human", "random", "heuristic"]),
    "over_under": (REGISTRY["over_under"].small, ["human", "heuristic"]),
    "doubt_and_bet": (REGISTRY["doubt_and_bet"].small, ["human", "heuristic"]),
}


def chromium() -> str:
    path = os.environ.get("KIBITZ_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not os.path.exists(path):
        pytest.fail("Chromium is not installed, and the browser tests need it: `make test` installs Debian's "
                    "package (apt-get install -y chromium), or set KIBITZ_CHROMIUM to a Chromium binary",
                    pytrace=False)
    return path


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    path = chromium()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def server():
    srv = Server(make_app(["heuristic", "random"], bot_delay=0.0), port=0).start()
    yield srv
    srv.stop()


@pytest.fixture
def page(browser, server, request):
    context = browser.new_context(viewport={"width": 1100, "height": 860})
    pg = context.new_page()
    pg.set_default_timeout(30_000)
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    # an error answer is the page's to show (the tests check what it shows), not a page error
    pg.on("console", lambda m: errors.append(m.text)
          if m.type == "error" and not m.text.startswith("Failed to load resource") else None)
    pg.goto(server.url + "/")
    pg.wait_for_selector("#game-name option", state="attached")
    yield pg
    report = getattr(request.node, "report_call", None)
    if report is not None and report.failed:
        ARTIFACTS.mkdir(exist_ok=True)
        name = request.node.name.replace("/", "_")
        pg.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
        (ARTIFACTS / f"{name}.html").write_text(pg.content())
    context.close()
    assert not errors, f"the page reported errors: {errors}"


def new_table(page, game_string, seats, seed=0):
    """Fills in the set-up form and sits down (or watches: no 'human' seat)."""
    page.select_option("#game-name", game_string.split("(")[0])
    page.fill("#game-string", game_string)
    page.dispatch_event("#game-string", "input")
    page.select_option("#human-seat", str(seats.index("human")) if "human" in seats else "none")
    for s, spec in enumerate(seats):
        if spec != "human":
            page.fill(f"#agent-{s}", spec)
    page.fill("#seed", str(seed))
    page.click("#start")


def play_by_clicking(page, rng, stop=None):
    """Clicks legal moves (drawn by ``rng``) until the result screen shows, or
    until ``stop(page)`` says so; returns the number of clicks."""
    clicks = 0
    while True:
        page.wait_for_selector("#moves button.move, #play-selected, #result:not([hidden]), #table-error:not(:empty)")
        assert not page.text_content("#table-error"), page.text_content("#table-error")
        if page.is_visible("#result") or (stop and stop(page)):
            return clicks
        version = page.get_attribute("#table", "data-version")
        buttons = page.locator("#moves button.move")
        if buttons.count():
            buttons.nth(int(rng.integers(buttons.count()))).click()
        else:
            values = page.eval_on_selector_all("#move-select option", "os => os.map(o => o.value)")
            page.select_option("#move-select", values[int(rng.integers(len(values)))])
            page.click("#play-selected")
        clicks += 1
        page.wait_for_selector(f"#table:not([data-version='{version}'])", state="attached")


def shown_returns(page):
    rows = page.locator("#result-table tbody tr")
    return [float(rows.nth(i).get_attribute("data-return")) for i in range(rows.count())]


def table_of(server, page):
    """The server's table behind the page (the page knows its id)."""
    tables = server.app.state.tables
    (table,) = [t for t in tables._tables.values() if str(t.version) == page.get_attribute("#table", "data-version")
                and t.id == page.get_attribute("#table", "data-table")]
    return table


def replayed_returns(game_string, history):
    state = pyspiel.load_game(game_string).new_initial_state()
    for a in history:
        state.apply_action(a)
    assert state.is_terminal()
    return state.returns()


@pytest.mark.parametrize("name", sorted(GAMES))
def test_play_a_whole_game_by_clicking(page, server, name):
    game_string, seats = GAMES[name]
    human = seats.index("human")
    new_table(page, game_string, seats, seed=11)
    rng = np.random.default_rng(7)
    for game in range(1, 6):  # a deal may end before the person's first turn: then the next one
        clicks = play_by_clicking(page, rng)
        table = table_of(server, page)
        returns = replayed_returns(game_string, table.state.history())
        assert shown_returns(page) == returns
        mine = page.locator(f"#result-table tr[data-seat='{human}']")
        assert "me" in mine.get_attribute("class") and mine.locator("td").first.text_content() == "You"
        title = page.text_content("#result-title")
        assert title == ("You win!" if returns[human] == max(returns) and returns.count(max(returns)) == 1
                         else "You share the win!" if returns[human] == max(returns) else "You lose.")
        page.click("#new-game")  # the same seats, the next seed
        page.wait_for_selector(f"#table-title:has-text('game {game + 1}')")
        if clicks:
            break
    assert clicks >= 1


def test_the_page_sees_only_its_seat(page, server):
    game_string, seats = GAMES["underdog"]
    new_table(page, game_string, seats, seed=3)
    page.wait_for_selector("#moves button.move")
    table = table_of(server, page)
    hands = table.state.hands
    mine = page.text_content(".seat[data-seat='0'] .cards")
    assert str(hands[0]) in mine
    for s in (1, 2):  # the other seats' cards are drawn face down
        assert page.locator(f".seat[data-seat='{s}'] .card.back").count() == 1
        assert page.locator(f".seat[data-seat='{s}'] .card:not(.back)").count() == 0


def test_watch_a_bot_game(page, server):
    game_string = "underdog(players=4,cards=8,bank=3)"
    new_table(page, game_string, ["heuristic", "random", "heuristic", "random"], seed=5)
    page.wait_for_selector("#result:not([hidden])")
    assert page.text_content("#result-title") == "Game over"
    table = table_of(server, page)
    assert shown_returns(page) == replayed_returns(game_string, table.state.history())
    page.select_option("#view-seat", "2")  # look from another seat
    page.wait_for_selector(".seat.me[data-seat='2']")


def test_replay_a_game_from_a_tournament_file(page, server, tmp_path):
    from kibitz.agents.tournament import run_tournament

    game_string = REGISTRY["pub"].small
    run_tournament(game_string, ["heuristic", "random"], games=6, seed=2, out_dir=str(tmp_path), progress=False)
    records = [json.loads(line) for line in (tmp_path / "games.jsonl").read_text().splitlines()]
    page.set_input_files("#replay-file", str(tmp_path / "games.jsonl"))
    page.wait_for_selector("#replay-start:not([disabled])")
    assert page.locator("#replay-game option").count() == len(records)
    page.select_option("#replay-game", "4")
    page.click("#replay-start")
    page.wait_for_selector("#result:not([hidden])")
    assert shown_returns(page) == records[4]["returns"]
    assert "replay of game 4" in page.text_content("#table-title")


def test_an_agent_that_cannot_play_shows_the_servers_reason(page):
    new_table(page, REGISTRY["over_under"].small, ["human", "trained"])
    page.wait_for_selector("#setup-error:not(:empty)")
    text = page.text_content("#setup-error")
    assert text.startswith("seat 1 (trained): the trained network for 'over_under' plays over_under(") \
        and "\n" not in text
    assert page.is_visible("#setup") and not page.is_visible("#table")


def test_readme_screenshot(page, server):
    """The README's picture of the table: a four-player Underdog against the
    heuristic, a few moves in. Written to docs/images/web-table.png when that
    file is missing or KIBITZ_SCREENSHOT=1, else to test-artifacts/."""
    new_table(page, "underdog(players=4)", ["human", "heuristic", "heuristic", "heuristic"], seed=6)
    play_by_clicking(page, np.random.default_rng(2),
                     stop=lambda pg: pg.locator("#log li").count() >= 24 and pg.is_visible("#moves button.move"))
    page.wait_for_selector("#moves button.move")
    assert page.locator(".seat .card.back").count() >= 1 and page.locator("#log li").count() >= 24
    if os.environ.get("KIBITZ_SCREENSHOT") == "1" or not SCREENSHOT.exists():
        target = SCREENSHOT
    else:
        ARTIFACTS.mkdir(exist_ok=True)
        target = ARTIFACTS / "web-table.png"
    page.screenshot(path=str(target), full_page=True)
    assert target.stat().st_size > 10_000
