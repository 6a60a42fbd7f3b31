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

from kibitz.agents.serving.web_app import Server, make_app
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
    # a game without a view of its own: the table's generic view (agents/serving/table_views.GENERIC)
    "showdown": (REGISTRY["showdown"].small, ["human", "random"]),
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
    from kibitz.agents.matches.tournament import run_tournament

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


# ------------------------------------------------------------------ Doubt and Bet's claim builder
DB_GAME = "doubt_and_bet(players=2,chips=3,slots=3,colours=2,single_bet=true)"
CLAIM_SCREENSHOT = ROOT / "docs" / "images" / "web-table-claim.png"
RECORDS_SCREENSHOT = ROOT / "docs" / "images" / "web-table-records.png"


def screenshot(page_or_element, target, **kw):
    """Writes a docs picture when it is missing or KIBITZ_SCREENSHOT=1, else to test-artifacts/."""
    if os.environ.get("KIBITZ_SCREENSHOT") != "1" and target.exists():
        ARTIFACTS.mkdir(exist_ok=True)
        target = ARTIFACTS / target.name
    page_or_element.screenshot(path=str(target), **kw)
    assert target.stat().st_size > 10_000


def builder_choices(page, name, fields):
    """Every combination the builder's lists offer, walked by selecting: (values..., the action it plays)."""
    out = []

    def walk(i, chosen):
        if i == len(fields):
            out.append((*chosen, int(page.get_attribute(f"#{name}-button", "data-action"))))
            return
        values = page.eval_on_selector_all(f"#{name}-{fields[i]} option", "os => os.map(o => o.value)")
        for v in values:
            page.select_option(f"#{name}-{fields[i]}", v)
            walk(i + 1, [*chosen, v])
    walk(0, [])
    return out


def test_doubt_and_bet_claims_are_built_from_the_legal_moves_only(page, server):
    new_table(page, DB_GAME, ["human", "random"], seed=4)
    page.wait_for_selector("#moves button:text-is('keep')")
    page.click("#moves button:text-is('keep')")  # the exchange comes first
    page.wait_for_selector("#claim-button")
    table = table_of(server, page)
    state = table.state
    legal = {a: state.action_to_string(0, a) for a in state.legal_actions()}
    assert page.locator("#move-select").count() == 0  # no list of every move
    fields = ["quantity", "colour", "chips", "slot-chips"]
    combos = builder_choices(page, "claim", fields)
    assert sorted(c[-1] for c in combos) == sorted(a for a, n in legal.items() if n.startswith("claim"))
    for q, colour, chips, slots, action in combos:
        assert legal[action] == f"claim {q} {colour} stake {chips}+{slots}"
    # the builder says what the claim will do before it is made
    page.select_option("#claim-quantity", "2")
    page.select_option("#claim-colour", "red")
    page.select_option("#claim-chips", "1")
    page.select_option("#claim-slot-chips", "1")
    assert page.text_content("#move-help").startswith(
        "claim 2 red stake 1+1: claim that the hands hold at least 2 red (rainbows count as every colour), "
        "staking 1 chips and 1 slot chips")
    screenshot(page, CLAIM_SCREENSHOT, full_page=True)
    version = page.get_attribute("#table", "data-version")
    page.click("#claim-button")
    page.wait_for_selector(f"#table:not([data-version='{version}'])", state="attached")
    assert "you: claim 2 red stake 1+1" in page.text_content("#log")


def test_the_showdown_is_call_raise_to_and_fold(page, server):
    # the bot claims first; doubting it starts the showdown, where the bot moves and then the person
    for seed in range(30):
        new_table(page, DB_GAME, ["random", "human"], seed=seed)
        page.wait_for_selector("#moves button:text-is('keep')")
        page.click("#moves button:text-is('keep')")  # the exchange comes first
        page.wait_for_selector("#moves button:text-is('doubt'), #result:not([hidden])")
        if page.locator("#moves button:has-text('doubt')").count():
            break
        page.click("#leave")
    page.click("#moves button:has-text('doubt')")
    # the doubter moves first (and may not fold yet)
    page.wait_for_selector("#moves button:has-text('Call'), #moves button:text-is('all in'), "
                           "#result:not([hidden])")
    assert not page.is_visible("#result"), "the bot folded or called at once: pick another seed range"
    table = table_of(server, page)
    names = [table.state.action_to_string(1, a) for a in table.state.legal_actions()]
    calls = [n for n in names if n.startswith("call")]
    raises = sorted({int(n[6:].split("+")[0]) + int(n.split("+")[1]) for n in names if n.startswith("raise")})
    shown = page.eval_on_selector_all("#moves > button.move", "bs => bs.map(b => b.textContent)")
    assert sorted(shown) == sorted([f"Call {n[5:]}" for n in calls] + (["Fold"] if "fold" in names else [])
                                   + (["all in"] if "all in" in names else []))
    if raises:
        values = page.eval_on_selector_all("#raise-value option", "os => os.map(o => +o.value)")
        assert values == raises
        page.select_option("#raise-value", str(raises[-1]))
        assert page.text_content("#move-help").startswith("raise ")
    page.hover("#moves > button.move >> nth=0")
    assert ": " in page.text_content("#move-help")


# ------------------------------------------------------------------ a phone, the title, the labels
def test_on_a_phone_the_move_controls_stay_in_view(browser, server):
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=1, is_mobile=True,
                                  has_touch=True)
    try:
        pg = context.new_page()
        pg.set_default_timeout(30_000)
        pg.goto(server.url + "/")
        pg.wait_for_selector("#game-name option", state="attached")
        new_table(pg, "doubt_and_bet(players=4,single_bet=true)", ["human", "random", "random", "random"], seed=1)
        pg.wait_for_selector("#moves button:text-is('keep')")
        pg.click("#moves button:text-is('keep')")
        pg.wait_for_selector("#claim-button")
        for y in (0, 400, 10_000):  # scrolled anywhere, the claim button is on the screen
            pg.evaluate(f"window.scrollTo(0, {y})")
            box = pg.locator("#claim-button").bounding_box()
            assert box and 0 <= box["y"] and box["y"] + box["height"] <= 844, (y, box)
        assert pg.evaluate("document.documentElement.scrollWidth") <= 390  # nothing wider than the screen
        # the title wraps only after a comma or a parenthesis, never inside a parameter
        breaks = pg.evaluate("""() => {
            const span = document.querySelector('#table-title .game-string');
            const text = span.textContent, out = [];
            const walker = document.createTreeWalker(span, NodeFilter.SHOW_TEXT);
            let last = null, prev = '';
            for (let node = walker.nextNode(); node; node = walker.nextNode()) {
              for (let i = 0; i < node.length; i++) {
                const r = document.createRange(); r.setStart(node, i); r.setEnd(node, i + 1);
                const top = r.getBoundingClientRect().top;
                if (last !== null && top > last + 2) out.push(prev);
                last = top; prev = node.data[i];
              }
            }
            return out;
        }""")
        assert breaks and set(breaks) <= {",", "("}, breaks
    finally:
        context.close()


def test_watch_and_replay_are_not_labelled_your_information_state(page, server):
    new_table(page, REGISTRY["pub"].small, ["random", "heuristic", "random"], seed=5)
    page.wait_for_selector("#result:not([hidden])")
    assert page.text_content("#info-summary") == "Seat 0's information state"
    page.select_option("#view-seat", "2")
    page.wait_for_selector("#info-summary:text-is(\"Seat 2's information state\")")
    # and the rules in short, from docs/rules
    page.click("#rules-box summary")
    assert "take" in page.text_content("#rules-box li >> nth=1")


def test_a_watcher_skips_to_the_result(page, server):
    store = server.app.state.tables
    store.bot_delay, delay = 30.0, store.bot_delay  # a move every 30 s: only a skip ends the game in time
    try:
        new_table(page, "pub(players=3)", ["random", "heuristic", "random"], seed=6)
        page.wait_for_selector("#skip >> visible=true")
        assert page.is_hidden("#out-note")
        page.click("#skip")
        page.wait_for_selector("#result:not([hidden])", timeout=20_000)
        assert page.is_hidden("#skip-box")
    finally:
        store.bot_delay = delay


# ------------------------------------------------------------------ records, across a restart
def test_the_records_are_shown_after_a_restart(browser, tmp_path):
    db = str(tmp_path / "records.sqlite")
    context = browser.new_context(viewport={"width": 1100, "height": 860})
    try:
        pg = context.new_page()
        pg.set_default_timeout(30_000)
        srv = Server(make_app(["heuristic", "random"], bot_delay=0.0, db=db), port=0).start()
        try:
            pg.goto(srv.url + "/")
            pg.wait_for_selector("#records p.help")  # none yet
            game_string, seats = REGISTRY["over_under"].small, ["human", "heuristic"]
            rng = np.random.default_rng(8)
            for game in range(3):
                if game == 0:
                    new_table(pg, game_string, seats, seed=game)
                else:
                    pg.click("#new-game")
                    pg.wait_for_selector(f"#table-title:has-text('game {game + 1}')")
                play_by_clicking(pg, rng)
            pg.click("#leave")
            pg.wait_for_selector("#records tr[data-agent='heuristic'][data-games='3']")
        finally:
            srv.stop()
        srv = Server(make_app(["heuristic", "random"], bot_delay=0.0, db=db), port=0).start()  # a restart
        try:
            pg.goto(srv.url + "/")
            row = pg.wait_for_selector("#records tr[data-agent='heuristic'][data-games='3']")
            people = pg.wait_for_selector("#records tr[data-agent='people'][data-games='3']")
            cells = [c.text_content() for c in row.query_selector_all("td")]
            assert cells[0] == "heuristic" and cells[1] == "3" and cells[3].startswith("[") and " \u00b1 " in cells[4]
            assert people.query_selector("td").text_content() == "people"
            assert pg.get_attribute("#records-download", "href") == "/records/games.jsonl"
            screenshot(pg.locator("#records-panel"), RECORDS_SCREENSHOT)
        finally:
            srv.stop()
    finally:
        context.close()
