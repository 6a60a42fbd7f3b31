// kibitz web table: plain JavaScript, no build step, nothing fetched but this server's API.
// The server holds the game; this page asks for its seat's view and sends moves by action id.
"use strict";

const POLL_MS = 250;
const BUTTONS_AT_MOST = 60;   // more legal moves than this: a list and one button
const SUITS = { S: "\u2660", H: "\u2665", D: "\u2666", C: "\u2663" };

let options = null;           // GET /tables/options
let table = null;             // the last view
let viewSeat = null;          // watch and replay: the seat looked from
let pollTimer = null;
let lastSettings = null;      // the body the table was made with
let replayRecords = [];

const $ = (id) => document.getElementById(id);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("data-")) node.setAttribute(k, v);
    else node[k] = v;
  }
  for (const c of children) if (c !== null && c !== undefined) node.append(c);
  return node;
}

async function api(method, path, body) {
  const init = { method, headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (e) {
    throw new Error("the server does not answer (is kibitz serve still running?)");
  }
  let data;
  try { data = await response.json(); } catch (e) { data = { error: `HTTP ${response.status}` }; }
  if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
  return data;
}

// ------------------------------------------------------------ set-up
function gameOptions(name) { return options.games.find((g) => g.name === name); }

function playersOf(gameString) {
  const name = gameString.split("(")[0];
  const game = gameOptions(name);
  const m = /[(,]players=(\d+)/.exec(gameString);
  if (m) return parseInt(m[1], 10);
  if (!game) return 2;
  const p = game.params.find((q) => q.name === "players");
  return p ? p.default : 2;
}

function fillSeats() {
  const n = Math.max(1, Math.min(8, playersOf($("game-string").value.trim())));
  const human = $("human-seat");
  const keep = human.value;
  human.replaceChildren(el("option", { value: "none", text: "none: watch the bots" }));
  for (let s = 0; s < n; s++) human.append(el("option", { value: String(s), text: `seat ${s}` }));
  human.value = [...human.options].some((o) => o.value === keep) ? keep : (n > 0 ? "0" : "none");
  const box = $("seat-agents");
  const old = {};
  for (const input of box.querySelectorAll("input")) old[input.dataset.seat] = input.value;
  box.replaceChildren();
  for (let s = 0; s < n; s++) {
    const input = el("input", { type: "text", id: `agent-${s}`, "data-seat": String(s), spellcheck: false });
    input.setAttribute("list", "agent-specs");
    input.value = old[s] || "heuristic";
    const label = el("label", { id: `agent-label-${s}` }, `seat ${s} agent`, input);
    box.append(label);
  }
  markHuman();
}

function markHuman() {
  const human = $("human-seat").value;
  for (const input of $("seat-agents").querySelectorAll("input")) {
    const mine = input.dataset.seat === human;
    input.disabled = mine;
    input.parentElement.hidden = mine;
  }
  $("start").textContent = human === "none" ? "Watch" : "Sit down";
}

function showGameHelp() {
  const game = gameOptions($("game-name").value);
  if (!game) return;
  $("game-help").textContent = `${game.long_name}: ${game.summary} Parameters: ` +
    game.params.map((p) => `${p.name} (${p.default}; ${p.allowed})`).join(", ") + ".";
  drawRules($("setup-rules"), game.name);
}

// the rules in short (rules.js, from docs/rules); `code` in them is a move's name
function drawRules(box, gameName) {
  const items = (window.KIBITZ_RULES || {})[gameName] || [];
  box.hidden = items.length === 0;
  box.querySelector("ul").replaceChildren(...items.map((text) =>
    el("li", {}, ...text.split("`").map((part, i) => (i % 2 ? el("code", { text: part }) : part)))));
}

// ------------------------------------------------------------ records
async function loadRecords() {
  let data;
  try { data = await api("GET", "/records"); } catch (e) { $("records").textContent = e.message; return; }
  const box = $("records");
  if (!data.games.length) {
    box.replaceChildren(el("p", { class: "help", text: "No game with a person has finished here yet." }));
    return;
  }
  const interval = (a) => (a.ci95_low === null ? "-" : `[${fmt2(a.ci95_low)}, ${fmt2(a.ci95_high)}]`);
  box.replaceChildren(...data.games.map((g) => el("div", { class: "record-game" },
    el("h3", {}, gameTitle(g.game), el("span", { class: "help", text: ` — ${g.games} game${g.games === 1 ? "" : "s"}` })),
    el("table", { class: "records" },
      el("thead", {}, el("tr", {}, ...["player", "games", "mean payoff", "95% interval", "rating"].map((h) => el("th", { text: h })))),
      el("tbody", {}, ...g.agents.map((a) => el("tr", { "data-agent": a.name, "data-games": String(a.games) },
        el("td", { text: a.name }), el("td", { text: String(a.games) }), el("td", { text: fmt2(a.mean_payoff) }),
        el("td", { text: interval(a) }), el("td", { text: `${fmt2(a.rating)} ± ${fmt2(a.rating_sigma)}` }))))))));
}

function fmt2(x) { return x === null || x === undefined ? "-" : (Math.round(x * 100) / 100).toFixed(2); }

// a game string that wraps after its commas (and its parenthesis), never inside a parameter
function gameTitle(text) {
  const span = el("span", { class: "game-string" });
  for (const part of text.split(/(?<=[,(])/)) span.append(part, el("wbr"));
  return span;
}

async function setup() {
  options = await api("GET", "/tables/options");
  const select = $("game-name");
  for (const g of options.games) select.append(el("option", { value: g.name, text: g.long_name }));
  for (const spec of options.suggested) $("agent-specs").append(el("option", { value: spec }));
  select.addEventListener("change", () => {
    $("game-string").value = gameOptions(select.value).small;
    showGameHelp();
    fillSeats();
  });
  $("game-string").value = options.games[0].small;
  showGameHelp();
  fillSeats();
  $("game-string").addEventListener("input", fillSeats);
  $("human-seat").addEventListener("change", markHuman);
  $("new-table").addEventListener("submit", (e) => { e.preventDefault(); startTable(); });
  $("replay-file").addEventListener("change", readReplayFile);
  $("replay-start").addEventListener("click", startReplay);
  $("new-game").addEventListener("click", newGame);
  $("change").addEventListener("click", leave);
  $("leave").addEventListener("click", leave);
  $("view-seat").addEventListener("change", () => { viewSeat = parseInt($("view-seat").value, 10); refresh(); });
  $("skip").addEventListener("click", skip);
  loadRecords();
}

async function skip() {
  $("skip").disabled = true;
  try { show(await api("POST", `/tables/${table.table}/skip`, {})); }
  catch (e) { $("table-error").textContent = e.message; }
}

function settingsBody() {
  const gameString = $("game-string").value.trim();
  const human = $("human-seat").value;
  const seats = [];
  for (const input of $("seat-agents").querySelectorAll("input")) {
    seats.push(input.dataset.seat === human ? "human" : input.value.trim());
  }
  return { game: gameString, seats, seed: parseInt($("seed").value || "0", 10) };
}

async function startTable() {
  $("setup-error").textContent = "";
  await open(settingsBody());
}

async function open(body) {
  try {
    const view = await api("POST", "/tables", body);
    lastSettings = body;
    viewSeat = view.seat;
    show(view);
  } catch (e) {
    $("setup-error").textContent = e.message;
  }
}

function readReplayFile() {
  const file = $("replay-file").files[0];
  if (!file) return;
  file.text().then((text) => {
    replayRecords = [];
    for (const line of text.split("\n")) {
      if (!line.trim()) continue;
      try {
        const rec = JSON.parse(line);
        if (rec && Array.isArray(rec.moves) && Array.isArray(rec.seats)) replayRecords.push(rec);
      } catch (e) { /* a torn last line */ }
    }
    const select = $("replay-game");
    select.replaceChildren();
    for (const [i, rec] of replayRecords.entries()) {
      const returns = rec.returns.map((r) => fmt(r)).join(" ");
      select.append(el("option", { value: String(i),
        text: `game ${rec.index}: ${rec.seats.join(", ")} \u2192 ${returns}` }));
    }
    select.disabled = $("replay-start").disabled = replayRecords.length === 0;
    $("setup-error").textContent = replayRecords.length ? "" : "no game records in that file";
  });
}

async function startReplay() {
  const rec = replayRecords[parseInt($("replay-game").value, 10)];
  if (rec) await open({ replay: rec });
}

async function newGame() {
  try { show(await api("POST", `/tables/${table.table}/new`, {})); }
  catch (e) { $("table-error").textContent = e.message; }
}

function leave() {
  stopPolling();
  if (table) api("DELETE", `/tables/${table.table}`).catch(() => {});
  table = null;
  $("table").hidden = true;
  $("setup").hidden = false;
  loadRecords();
}

// ------------------------------------------------------------ the table
function stopPolling() { if (pollTimer) clearTimeout(pollTimer); pollTimer = null; }

async function refresh() {
  stopPolling();
  if (!table) return;
  const seat = table.mode === "play" ? "" : `?seat=${viewSeat}`;
  try { show(await api("GET", `/tables/${table.table}${seat}`)); }
  catch (e) { $("table-error").textContent = e.message; }
}

function schedule() {
  stopPolling();
  const waiting = table && !table.over && !table.error && !(table.mode === "play" && table.to_move === table.human);
  if (waiting) pollTimer = setTimeout(refresh, POLL_MS);
}

async function play(action) {
  for (const b of $("moves").querySelectorAll("button")) b.disabled = true;
  try {
    show(await api("POST", `/tables/${table.table}/move`, { action, seat: table.human, version: table.version }));
  } catch (e) {
    $("table-error").textContent = e.message;
    refresh();
  }
}

function name(view, s) {
  if (s === view.human) return "You";
  return `Seat ${s}`;
}

function show(view) {
  const ended = view.over && !(table && table.table === view.table && table.over && table.version === view.version);
  table = view;
  $("setup").hidden = true;
  $("table").hidden = false;
  const kind = view.mode === "play" ? `you are seat ${view.human}` : view.mode === "watch" ? "watching bots"
    : `replay of game ${view.replay.index}`;
  $("table-title").replaceChildren(gameTitle(view.game), ` \u2014 ${kind}, game ${view.games_played}`);
  $("info-summary").textContent = view.mode === "play" ? "Your information state" : `Seat ${view.seat}'s information state`;
  drawRules($("rules-box"), view.short_name);
  $("table").dataset.mode = view.mode;
  $("table").dataset.table = view.table;
  $("table").dataset.version = String(view.version);
  const seatLabel = $("view-seat-label");
  seatLabel.hidden = view.mode === "play";
  if (view.mode !== "play" && $("view-seat").options.length !== view.players) {
    $("view-seat").replaceChildren(...view.seats.map((s) => el("option", { value: String(s.seat), text: `seat ${s.seat}` })));
  }
  $("view-seat").value = String(view.seat);
  $("table-error").textContent = view.error || "";
  drawBoard(view);
  drawMoves(view);
  drawLog(view);
  drawResult(view);
  $("info").textContent = view.information_state;
  $("status").textContent = status(view);
  if (ended && view.record) loadRecords();
  schedule();
}

function status(view) {
  if (view.error) return "The table stopped: a bot could not move.";
  if (view.over) return "Game over.";
  if (view.to_move === null) return "Dealing\u2026";
  if (view.mode === "play" && view.to_move === view.human) return "Your move.";
  if (view.mode === "play" && view.out) return "You are out.";
  const who = view.seats[view.to_move].agent;
  return view.mode === "replay" ? `Seat ${view.to_move} (${who}) moves\u2026` : `Seat ${view.to_move} (${who}) is thinking\u2026`;
}

function drawMoves(view) {
  const box = $("moves");
  box.replaceChildren();
  showHelp(null);
  const out = view.mode === "play" && view.out;
  $("skip-box").hidden = view.over || Boolean(view.error) || (view.mode === "play" && !out);
  $("out-note").hidden = !out;
  $("skip").disabled = view.skipping;
  $("skip").textContent = view.skipping ? "Skipping to the result\u2026" : "Skip to the result";
  if (view.mode !== "play" || view.over || view.to_move !== view.human) return;
  if (view.board.kind === "doubt_and_bet") {
    drawDoubtAndBet(view, box);
  } else if (view.legal.length <= BUTTONS_AT_MOST) {
    for (const m of view.legal) box.append(moveButton(m));
  } else {
    const select = el("select", { id: "move-select" });
    for (const m of view.legal) select.append(el("option", { value: String(m.action), text: m.move, title: m.help || "" }));
    const b = el("button", { type: "button", id: "play-selected", text: "Play" });
    b.addEventListener("click", () => play(parseInt(select.value, 10)));
    const explain = () => showHelp(view.legal.find((m) => String(m.action) === select.value));
    select.addEventListener("change", explain);
    box.append(el("label", {}, `${view.legal.length} legal moves`, select), b);
    explain();
  }
}

// what a move will do, shown before it is made (hover, focus, or the move a builder has chosen)
function showHelp(m) {
  $("move-help").textContent = m && m.help ? `${m.move}: ${m.help}` : "";
}

function moveButton(m, text) {
  const b = el("button", { type: "button", class: "move", text: text || m.move, "data-action": String(m.action),
                           title: m.help || "" });
  b.addEventListener("click", () => play(m.action));
  for (const ev of ["mouseenter", "focus"]) b.addEventListener(ev, () => showHelp(m));
  return b;
}

// ------------------------------------------------------------ Doubt and Bet
// The claim builder and the showdown's "raise to" are built from the legal
// moves the server sends (their names: "claim 3 red stake 2+1", "raise 3+1"):
// each list offers only the values that some legal move has, given the
// choices before it.
const CLAIM = /^claim (\d+) (\w+) stake (\d+)\+(\d+)$/;
const RAISE = /^raise (\d+)\+(\d+)$/;

function drawDoubtAndBet(view, box) {
  const claims = [], raises = [];
  for (const m of view.legal) {
    let g = CLAIM.exec(m.move);
    if (g) {
      const colour = g[2], q = +g[1], c = +g[3], s = +g[4];
      const counts = colour === "rainbow" ? "rainbow cards only" : "rainbows count as every colour";
      claims.push({ ...m, quantity: q, colour, chips: c, slot_chips: s,
        help: `claim that the hands hold at least ${q} ${colour} (${counts}), staking ${c} chips and ${s} slot ` +
              "chips; the next player raises or doubts" });
      continue;
    }
    g = RAISE.exec(m.move);
    if (g) { raises.push({ ...m, value: +g[1] + +g[2], split: `${g[1]}+${g[2]}` }); continue; }
    box.append(moveButton(m, m.move === "fold" ? "Fold" : m.move.startsWith("call") ? `Call ${m.move.slice(5)}` : m.move));
  }
  if (claims.length) {
    box.append(builder("claim", claims, [
      ["quantity", "Quantity", (v) => `at least ${v}`], ["colour", "Colour", String],
      ["chips", "Stake: chips", String], ["slot_chips", "slot chips", String]], "Claim"));
  }
  if (raises.length) {
    box.append(builder("raise", raises, [
      ["value", "Raise to", String], ["split", "paid as (chips + slot chips)", String]], "Raise"));
  }
}

// chained lists over `items`: each offers the values of the items that match the choices before it
function builder(name, items, fields, label) {
  const form = el("fieldset", { class: "builder", id: `${name}-builder` });
  const selects = fields.map(([key, caption]) => {
    const select = el("select", { id: `${name}-${key.replace("_", "-")}` });
    form.append(el("label", {}, caption, select));
    return select;
  });
  const button = el("button", { type: "button", class: "move", id: `${name}-button`, text: label });
  form.append(button);
  let chosen = null;
  const update = (from) => {
    let match = items;
    fields.forEach(([key, , show], i) => {
      const select = selects[i];
      if (i >= from) {
        const keep = select.value;
        const values = [...new Set(match.map((m) => String(m[key])))];
        if (values.every((v) => /^\d+$/.test(v))) values.sort((x, y) => x - y);
        select.replaceChildren(...values.map((v) => el("option", { value: v, text: show(v) })));
        select.value = values.includes(keep) ? keep : values[0];
      }
      match = match.filter((m) => String(m[key]) === select.value);
    });
    chosen = match[0];
    button.dataset.action = String(chosen.action);
    button.title = chosen.help || "";
    showHelp(chosen);
  };
  selects.forEach((select, i) => select.addEventListener("change", () => update(i + 1)));
  button.addEventListener("click", () => play(chosen.action));
  update(0);
  return form;
}

function drawLog(view) {
  const log = $("log");
  const atBottom = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
  log.replaceChildren(...view.log.map((e) => {
    if (e.move !== undefined) {
      const who = e.seat === view.human ? "you" : `p${e.seat}`;
      return el("li", { class: "move" + (e.seat === view.human ? " mine" : ""), text: `${who}: ${e.move}` });
    }
    return el("li", { text: e.text });
  }));
  if (atBottom) log.scrollTop = log.scrollHeight;
}

function fmt(x) {
  return Number.isInteger(x) ? String(x) : String(Math.round(x * 1000) / 1000);
}

function drawResult(view) {
  const box = $("result");
  box.hidden = !view.over;
  if (!view.over) return;
  const best = Math.max(...view.returns);
  let title = "Game over";
  if (view.human !== null) {
    const mine = view.returns[view.human];
    title = mine === best ? (view.returns.filter((r) => r === best).length > 1 ? "You share the win!" : "You win!")
      : "You lose.";
  }
  $("result-title").textContent = title;
  $("result-table").tBodies[0].replaceChildren(...view.returns.map((r, s) =>
    el("tr", { class: s === view.human ? "me" : "", "data-seat": String(s), "data-return": String(r) },
       el("td", { text: name(view, s) }), el("td", { text: view.seats[s].agent }),
       el("td", { class: "return", text: fmt(r) }))));
  $("new-game").textContent = view.mode === "replay" ? "Replay again" : "New game";
}

// ------------------------------------------------------------ cards
function card(face, extra = "") {
  if (face === "back") return el("div", { class: "card back", title: "a hidden card" });
  if (face === null || face === undefined) return el("div", { class: "card empty" });
  return el("div", { class: `card ${extra}`, text: String(face) });
}

function pubCard(c) {
  if (c === "back") return card("back");
  const red = c.suit === "H" || c.suit === "D";
  return el("div", { class: "card" + (red ? " red" : ""), title: c.name, "data-card": c.name },
            el("span", { class: "corner", text: c.rank }), c.rank, el("span", { class: "suit", text: SUITS[c.suit] }));
}

function colourCard(c) {
  if (c === "back") return card("back");
  return el("div", { class: `card colour colour-${c}`, title: c, text: c });
}

function billCard(name) {
  if (name === null) return card(null);
  const joker = !name.startsWith("$") || name.includes("joker");
  return el("div", { class: "card " + (/^\$\d+$/.test(name) ? "bill" : joker ? "joker" : ""), text: name });
}

function pile(caption, ...cards) {
  return el("div", { class: "pile" }, el("div", { class: "cards" }, ...cards), el("span", { text: caption }));
}

function counter(text) { return el("span", { class: "counter", text }); }

function seatBox(view, s, stats, cards, caption) {
  const box = el("div", { class: "seat", "data-seat": String(s) });
  if (s === view.seat) box.classList.add("me");
  if (view.to_move === s && !view.over) box.classList.add("to-move");
  box.append(el("h3", {}, name(view, s), el("span", { class: "agent", text: view.seats[s].agent })));
  box.append(el("div", { class: "stats" }, ...stats.map(counter)));
  const row = el("div", { class: "cards" }, ...cards);
  if (caption) row.append(el("span", { class: "caption", text: caption }));
  box.append(row);
  return box;
}

function drawBoard(view) {
  const b = view.board;
  const center = $("center");
  const seats = $("seats");
  const draw = BOARDS[b.kind];
  center.replaceChildren(...draw.center(b, view));
  seats.replaceChildren(...b.seats.map((seat, s) => draw.seat(view, s, seat, b)));
}

const BOARDS = {
  underdog: {
    center: (b) => [
      pile("underdog", card(b.underdog, "highlight")),
      b.drawn !== null ? pile("you drew", card(b.drawn)) : null,
      pile(b.pile === null ? "" : `pile: ${b.pile}`, b.pile ? card("back") : card(null)),
      counter(`round ${b.round}${b.last_round ? " (last)" : ""}`), counter(`bank ${b.bank}`),
    ].filter(Boolean),
    seat: (view, s, seat) => seatBox(view, s, [`chips ${seat.chips}`, ...(seat.status ? [seat.status] : [])],
      [seat.card !== null ? card(seat.card) : null, seat.face_up !== null ? card(seat.face_up) : null].filter(Boolean),
      seat.face_up !== null ? "hand, face up" : ""),
  },
  pub: {
    center: (b) => [
      pile("face up", b.face_up ? pubCard(b.face_up) : card(null)),
      b.drawn ? pile("drawn", pubCard(b.drawn)) : null,
      pile(`deck: ${b.deck}`, b.deck ? card("back") : card(null)),
    ].filter(Boolean),
    seat: (view, s, seat, b) => {
      const box = seatBox(view, s, b.scores ? [`score ${b.scores[s]}`] : [`${seat.hand.length} in hand`],
        seat.hand.map(pubCard), "hand");
      const coll = el("div", { class: "cards small" }, ...seat.collection.map(pubCard),
                      el("span", { class: "caption", text: `collection (${seat.collection.length})` }));
      box.append(coll);
      return box;
    },
  },
  over_under: {
    center: (b) => [
      ...b.stacks.map((st) => pile(
        `stack ${st.stack}: $${st.money}` + (st.claimed_by !== null ? ` \u2192 p${st.claimed_by}` : ""),
        st.claimed_by !== null ? card(null) : billCard(st.top))),
      pile(`deck: ${b.deck}`, b.deck ? card("back") : card(null)),
      counter(`round ${b.round} of ${b.rounds}`), counter(`dealer p${b.dealer}`),
    ],
    seat: (view, s, seat, b) => seatBox(view, s, [`tally $${seat.tally}`], [],
      b.stacks.filter((st) => st.claimed_by === s).map((st) => `stack ${st.stack} ($${st.money})`).join(", ")),
  },
  doubt_and_bet: {
    center: (b) => [
      counter(`round ${b.round}: ${b.phase}`),
      b.claim ? counter(`claim by p${b.claim.player}: ${b.claim.quantity} ${b.claim.colour}, stake ${b.claim.stake[0]}+${b.claim.stake[1]}`)
        : counter("no claim yet"),
      b.showdown ? counter(`showdown: p${b.showdown.bettor} ${b.showdown.bettor_stake.join("+")} vs p${b.showdown.doubter} ` +
        (b.showdown.doubter_stake ? b.showdown.doubter_stake.join("+") : "-")) : null,
    ].filter(Boolean),
    seat: (view, s, seat) => {
      const box = seatBox(view, s, [`chips ${seat.chips}`, `slots ${seat.slots}`, ...(seat.alive ? [] : ["out"])],
        seat.cards.map(colourCard));
      if (!seat.alive) box.classList.add("out");
      return box;
    },
  },
  // a game without a board of its own: the seat's observation string, and the seats
  generic: {
    center: (b) => [el("pre", { class: "observation", text: b.observation })],
    seat: (view, s) => seatBox(view, s, [], []),
  },
};

document.addEventListener("DOMContentLoaded", () => {
  setup().catch((e) => { $("setup-error").textContent = e.message; });
});
