// The browser app: one page, its views chosen by the path (deep links work: the server answers
// this page for every path of the app). Everything is read from the JSON API (docs/web.md).
import { suitLegend } from "./cards.js";
import {
  actionText,
  backText,
  cardName,
  dealSummary,
  decisionTiming,
  eventText,
  gameName,
  handSummaryLines,
  meanText,
  reasonText,
  resultText,
  signed,
  suitWord,
  tableVoice,
  turnWords,
} from "./format.js";
import { language, t } from "./i18n.js";
import { TableModel, oneof } from "./model.js";
import { DEFAULT_SPEED, SPEEDS, pacer, personDeadline, waits } from "./pacer.js";
import { cardKey, drawTable, keepButtons } from "./table.js";
import { relativePath, tarGz } from "./tar.js";

// Every render of a page is a generation.  A page still waiting for its data when another
// render starts (a person followed a link meanwhile) must not write over the newer page, so
// a page takes its view before its first await and writes through it only.
let generation = 0;
// The view's element for the render running now, whose replaceChildren drops the parts a page
// leaves out (null), and does nothing once a newer render has started; onLeave keeps what the
// page must stop when another one opens (a timer), or stops it at once if one already has.
const view = () => {
  const root = document.getElementById("view");
  const mine = generation;
  return {
    current: () => mine === generation,
    replaceChildren: (...children) => {
      if (mine === generation)
        root.replaceChildren(...children.filter((c) => c !== null && c !== undefined));
    },
    onLeave: (stop) => (mine === generation ? leaving.push(stop) : stop()),
  };
};
let leaving = []; // what the current view must stop when another one opens (timers, sockets)

function el(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (name === "class") element.className = value;
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  element.append(
    ...children
      .flat()
      .filter((c) => c !== null && c !== undefined)
      .map((c) => (c instanceof Node ? c : String(c))),
  );
  return element;
}

async function api(path, init) {
  const response = await fetch(path, init);
  const body = await response.json().catch(() => ({ error: response.statusText }));
  if (!response.ok)
    throw Object.assign(new Error(body.error || response.statusText), { status: response.status });
  return body;
}

function socketUrl(path) {
  return `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${path}`;
}

function go(path) {
  history.pushState(null, "", path);
  render();
}

function link(path, ...children) {
  return el(
    "a",
    {
      href: path,
      onclick: (ev) => {
        if (ev.button === 0 && !ev.ctrlKey && !ev.metaKey) {
          ev.preventDefault();
          go(path);
        }
      },
    },
    ...children,
  );
}

function problem(error) {
  return el("p", { class: "error", role: "alert" }, t("error", { message: error.message }));
}

function gameWord(game) {
  return t(`game.${game}`);
}
function statusWord(enumName) {
  return t(`status.${(enumName || "").replace("MATCH_STATUS_", "").toLowerCase()}`);
}

// ---- display settings and language -------------------------------------------------------

// Each slider is 0..100 (50: as drawn). Contrast filters the page; grain and colour
// temperature are overlays that never take a click.
const SLIDERS = ["contrast", "grain", "temperature"];

function display() {
  const settings = Object.fromEntries(SLIDERS.map((name) => [name, 50]));
  try {
    const stored = JSON.parse(localStorage.getItem("bisca.display") || "{}");
    for (const name of SLIDERS) {
      const value = Number(stored[name]);
      if (Number.isFinite(value)) settings[name] = Math.min(100, Math.max(0, Math.round(value)));
    }
  } catch {
    /* a damaged setting is the default */
  }
  return settings;
}

function applyDisplay() {
  const { contrast, grain, temperature } = display();
  const root = document.documentElement;
  root.style.setProperty("--contrast", String(0.5 + contrast / 100));
  root.style.setProperty("--grain", String((grain / 100) * 0.3));
  const warm = temperature >= 50;
  root.style.setProperty("--temperature-colour", warm ? "#ff9a3c" : "#4f8cff");
  root.style.setProperty("--temperature", String((Math.abs(temperature - 50) / 50) * 0.22));
  root.lang = language();
}

function sliders() {
  const settings = display();
  return el(
    "div",
    { class: "sliders", role: "group", "aria-label": t("nav.display") },
    ...SLIDERS.map((name) => {
      const output = el("output", { class: "value" }, `${settings[name]}%`);
      const input = el("input", {
        type: "range",
        min: 0,
        max: 100,
        step: 1,
        value: settings[name],
        name,
        "aria-valuetext": `${settings[name]}%`,
        oninput: (ev) => {
          const value = Number(ev.target.value);
          localStorage.setItem("bisca.display", JSON.stringify({ ...display(), [name]: value }));
          output.textContent = `${value}%`;
          ev.target.setAttribute("aria-valuetext", `${value}%`);
          applyDisplay();
        },
      });
      return el(
        "label",
        { class: `slider slider-${name}` },
        el("span", {}, t(`s.${name}`)),
        input,
        output,
      );
    }),
  );
}

// What the server is (GET /api/info), asked once.
let serverInfoAnswer = null;
function serverInfo() {
  serverInfoAnswer ??= api("/api/info").catch(() => ({}));
  return serverInfoAnswer;
}

function header() {
  const nav = document.getElementById("nav");
  const languageSelect = el(
    "select",
    {
      class: "languages",
      "aria-label": t("nav.language"),
      onchange: (ev) => {
        localStorage.setItem("bisca.language", ev.target.value);
        render();
      },
    },
    ...["it", "en"].map((code) =>
      el("option", { value: code, selected: code === language(), lang: code }, t(`lang.${code}`)),
    ),
  );
  nav.replaceChildren(
    link("/leaderboard/belote", t("nav.leaderboard")),
    link("/matches", t("nav.matches")),
    link("/live", t("nav.live")),
    link("/play", t("nav.play")),
    link("/rules/belote", t("nav.rules")),
  );
  // The account pages exist on a league open to strangers only.
  serverInfo().then((info) => {
    if (info.accounts && !nav.querySelector("a.account"))
      nav.append(Object.assign(link("/account", t("nav.account")), { className: "account" }));
  });
  nav.setAttribute("aria-label", t("nav.main"));
  const tools = document.getElementById("tools");
  // The sliders fold away on a narrow screen (its summary opens them).
  const wasOpen = tools.querySelector("details");
  const open = wasOpen ? wasOpen.open : window.innerWidth > 720;
  tools.replaceChildren(
    el("label", { class: "language" }, el("span", {}, `${t("nav.language")}:`), languageSelect),
    el("details", { class: "display", open }, el("summary", {}, t("nav.display")), sliders()),
  );
}

// ---- leaderboards ------------------------------------------------------------------------

/** A bot's crashes/timeouts/illegal moves/defaults played, as `bisca leaderboard` prints them. */
function incidentsText(incidents) {
  const counts = incidents || {};
  return ["crashes", "timeouts", "illegal_moves", "defaults_played"]
    .map((kind) => counts[kind] || 0)
    .join("/");
}

async function leaderboardPage(game) {
  const pageView = view();
  const [board, history] = await Promise.all([
    api(`/api/leaderboard/${game}`),
    api(`/api/leaderboard/${game}/history`),
  ]);
  const rows = board.leaderboard.rows || [];
  const standings = board.standings || null;
  const unit = t(`unit.${board.unit}`);
  const tabs = el(
    "p",
    { class: "tabs" },
    ...["belote", "bestia"].map((g) => link(`/leaderboard/${g}`, gameWord(g))),
  );
  const margins = standings && standings.margins;
  const head = el(
    "tr",
    {},
    ...[
      "lb.rank",
      "lb.bot",
      "lb.cons",
      "lb.mu",
      "lb.sigma",
      "lb.matches",
      "lb.w",
      "lb.d",
      "lb.l",
    ].map((k) => el("th", {}, t(k))),
    margins ? el("th", {}, t("lb.margin")) : null,
    el("th", {}, t("lb.mean", { unit })),
    el("th", { title: t("lb.incidents.note") }, t("lb.incidents")),
  );
  const body = rows.map((row) => {
    const wdl = standings && standings.bots ? standings.bots[row.botName] : null;
    const mean = meanText(row.meanResult, row.ciHalfWidth);
    const tally = wdl || { wins: 0, draws: 0, losses: 0, meanMargin: null };
    return el(
      "tr",
      { "data-bot": row.botName },
      el("td", { class: "num" }, row.rank),
      el(
        "td",
        {},
        link(`/matches?game=${game}&bot=${encodeURIComponent(row.botName)}`, row.botName),
      ),
      el("td", { class: "num cons" }, row.conservative.toFixed(2)),
      el("td", { class: "num" }, row.mu.toFixed(2)),
      el("td", { class: "num" }, row.sigma.toFixed(2)),
      el("td", { class: "num" }, row.matches),
      el("td", { class: "num wins" }, tally.wins),
      el("td", { class: "num draws" }, tally.draws),
      el("td", { class: "num losses" }, tally.losses),
      margins
        ? el(
            "td",
            { class: "num margin" },
            tally.meanMargin === null || tally.meanMargin === undefined
              ? ""
              : signed(tally.meanMargin, 1),
          )
        : null,
      el("td", { class: "mean" }, mean),
      el("td", { class: "num incidents" }, incidentsText(tally.incidents)),
    );
  });
  const table = el(
    "table",
    { class: "leaderboard" },
    el("thead", {}, head),
    el(
      "tbody",
      {},
      body.length
        ? body
        : el("tr", {}, el("td", { colspan: 12 }, t("lb.empty", { game: gameWord(game) }))),
    ),
  );
  pageView.replaceChildren(
    el("h1", {}, t("lb.title", { game: gameWord(game) })),
    tabs,
    el("div", { class: "scroll" }, table),
    el("p", { class: "note" }, t("lb.incidents.note")),
    el("h2", {}, t("lb.history")),
    historyChart(
      history.history,
      rows.map((r) => r.botName),
    ),
    headToHead(standings),
  );
}

const PALETTE = [
  "#1f77b4",
  "#d62728",
  "#2ca02c",
  "#9467bd",
  "#ff7f0e",
  "#8c564b",
  "#e377c2",
  "#17becf",
];

function historyChart(points, bots) {
  const byBot = new Map(bots.map((bot) => [bot, []]));
  for (const point of points) {
    if (!byBot.has(point.bot)) byBot.set(point.bot, []);
    byBot.get(point.bot).push(point.conservative);
  }
  const all = [...byBot.values()].flat();
  if (!all.length) return el("p", {}, "–");
  const low = Math.min(...all, 0),
    high = Math.max(...all, 1),
    longest = Math.max(...[...byBot.values()].map((v) => v.length), 2);
  const w = 600,
    h = 220,
    x = (i) => 40 + (i * (w - 50)) / (longest - 1),
    y = (v) => h - 20 - ((v - low) * (h - 40)) / (high - low || 1);
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  svg.setAttribute("class", "chart");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", t("lb.history"));
  const axis = document.createElementNS(ns, "path");
  axis.setAttribute("d", `M40 10 V${h - 20} H${w - 5}`);
  axis.setAttribute("stroke", "currentColor");
  axis.setAttribute("fill", "none");
  svg.append(axis);
  for (const [value, label] of [
    [low, low.toFixed(1)],
    [high, high.toFixed(1)],
  ]) {
    const text = document.createElementNS(ns, "text");
    text.setAttribute("x", "2");
    text.setAttribute("y", String(y(value) + 4));
    text.setAttribute("font-size", "11");
    text.setAttribute("fill", "currentColor");
    text.textContent = label;
    svg.append(text);
  }
  const legend = el("ul", { class: "chart-legend" });
  [...byBot.entries()].forEach(([bot, values], i) => {
    const line = document.createElementNS(ns, "polyline");
    line.setAttribute("points", values.map((v, k) => `${x(k)},${y(v)}`).join(" "));
    line.setAttribute("fill", "none");
    line.setAttribute("stroke", PALETTE[i % PALETTE.length]);
    line.setAttribute("stroke-width", "2");
    line.dataset.bot = bot;
    svg.append(line);
    legend.append(
      el(
        "li",
        {},
        el("span", { class: "swatch", style: `background:${PALETTE[i % PALETTE.length]}` }),
        ` ${bot}`,
      ),
    );
  });
  return el("figure", {}, svg, legend);
}

function headToHead(standings) {
  if (!standings || !standings.order || standings.order.length < 2) return null;
  const bots = standings.order || Object.keys(standings.headToHead);
  const cell = (a, b) => {
    const record = (standings.headToHead[a] || {})[b];
    return record ? `${record.wins}-${record.draws}-${record.losses}` : a === b ? "—" : "";
  };
  return el(
    "section",
    {},
    el("h2", {}, t("lb.h2h")),
    el("p", { class: "note" }, t("lb.h2h.note")),
    el(
      "div",
      { class: "scroll" },
      el(
        "table",
        { class: "h2h" },
        el("thead", {}, el("tr", {}, el("th", {}, ""), ...bots.map((b) => el("th", {}, b)))),
        el(
          "tbody",
          {},
          ...bots.map((a) =>
            el(
              "tr",
              {},
              el("th", {}, a),
              ...bots.map((b) => el("td", { class: "num" }, cell(a, b))),
            ),
          ),
        ),
      ),
    ),
  );
}

// ---- the match list ----------------------------------------------------------------------

async function matchesPage() {
  const pageView = view();
  const query = new URLSearchParams(location.search);
  const data = await api(`/api/matches?${query}`);
  const field = (name, control) => el("label", {}, `${t(`m.${name}`)} `, control);
  const select = (name, options) =>
    el(
      "select",
      { name },
      ...options.map(([value, label]) =>
        el("option", { value, selected: query.get(name) === value }, label),
      ),
    );
  const form = el(
    "form",
    {
      class: "filters",
      onsubmit: (ev) => {
        ev.preventDefault();
        const next = new URLSearchParams([...new FormData(ev.target)].filter(([, v]) => v));
        go(`/matches?${next}`);
      },
    },
    field(
      "game",
      select("game", [
        ["", t("m.any")],
        ["belote", gameWord("belote")],
        ["bestia", gameWord("bestia")],
      ]),
    ),
    field("bot", el("input", { name: "bot", value: query.get("bot") || "", size: 12 })),
    field(
      "status",
      select("status", [
        ["", t("m.any")],
        ...["waiting", "running", "finished", "failed"].map((s) => [s, t(`status.${s}`)]),
      ]),
    ),
    field(
      "tournament",
      el("input", { name: "tournament", value: query.get("tournament") || "", size: 12 }),
    ),
    el("button", { type: "submit" }, t("m.filter")),
  );
  const matches = data.list.matches || [];
  const rows = matches.map((info) =>
    el(
      "tr",
      { "data-match": info.matchId },
      el("td", {}, link(`/matches/${info.matchId}`, info.matchId)),
      el("td", {}, gameWord(gameName(info.game))),
      el("td", {}, statusWord(info.status)),
      el("td", { class: "bots" }, (info.bots || []).join(", ")),
      el("td", { class: "result" }, resultText(info)),
      el("td", { class: "num" }, info.steps),
      el("td", {}, (info.finishedAt || "").replace("T", " ").slice(0, 19)),
    ),
  );
  const pages = Math.max(1, Math.ceil(data.total / data.pageSize));
  const pageLink = (page, label) => {
    const q = new URLSearchParams(query);
    q.set("page", page);
    return link(`/matches?${q}`, label);
  };
  pageView.replaceChildren(
    el("h1", {}, t("m.title")),
    form,
    matches.length
      ? el(
          "div",
          { class: "scroll" },
          el(
            "table",
            { class: "matches" },
            el(
              "thead",
              {},
              el(
                "tr",
                {},
                ...["id", "game", "status", "bots", "result", "steps", "when"].map((k) =>
                  el("th", {}, t(`m.${k}`)),
                ),
              ),
            ),
            el("tbody", {}, rows),
          ),
        )
      : el("p", {}, t("m.none")),
    el(
      "p",
      { class: "pager" },
      data.page > 1 ? pageLink(data.page - 1, t("m.prev")) : null,
      " ",
      t("m.page", { page: data.page, pages, total: data.total }),
      " ",
      data.page < pages ? pageLink(data.page + 1, t("m.next")) : null,
    ),
  );
}

// ---- the replay viewer -------------------------------------------------------------------

async function replayPage(matchId) {
  const pageView = view();
  let doc;
  try {
    doc = await api(`/api/matches/${encodeURIComponent(matchId)}/replay`);
  } catch (error) {
    if (error.status === 409) {
      pageView.replaceChildren(
        el("h1", {}, t("r.title", { id: matchId })),
        el("p", {}, error.message),
        el("p", {}, link(`/live/${matchId}`, t("r.live"))),
      );
      return;
    }
    throw error;
  }
  const game = gameName(doc.header.game);
  const names = (doc.header.seats || []).map((s) => s.botName);
  const frames = doc.frames;
  const query = new URLSearchParams(location.search);
  const state = {
    step: Math.min(Math.max(Number(query.get("step") || 0), 0), frames.length - 1),
    seat: query.has("seat") && query.get("seat") !== "" ? Number(query.get("seat")) : null,
    timer: null,
    speed: 1000,
  };
  const verdict = doc.verdict;
  const badge = el(
    "p",
    { class: `verdict ${verdict.trusted ? "ok" : "bad"}`, "data-trusted": String(verdict.trusted) },
    verdict.trusted
      ? `✔ ${t("r.verified", { key: verdict.signedBy })}`
      : verdict.ok && verdict.complete
        ? `⚠ ${t("r.untrusted", { why: verdict.untrusted })}`
        : verdict.ok
          ? `⚠ ${t("r.incomplete")}`
          : `✘ ${t("r.diverges", { why: verdict.problem })}`,
  );
  const stepInput = el("input", {
    type: "number",
    min: 0,
    max: frames.length - 1,
    name: "step",
    class: "step-input",
  });
  const seatSelect = el(
    "select",
    { name: "seat" },
    el("option", { value: "" }, t("r.omniscient")),
    ...names.map((bot, n) => el("option", { value: n }, t("r.seat", { n, bot }))),
  );
  const tricks = [];
  frames.forEach((frame, i) =>
    frame.events.forEach((w) => {
      const [, inner] = oneof(w.event);
      const [kind, e] = oneof(inner);
      if (kind === "trickWon")
        tricks.push([i, `${t("r.trick")} ${(e.trickNumber ?? 0) + 1} → ${e.winner ?? 0}`]);
    }),
  );
  const trickSelect = el(
    "select",
    { name: "trick", "aria-label": t("r.trick") },
    el("option", { value: "" }, `${t("r.trick")}…`),
    ...tricks.map(([i, label]) => el("option", { value: i }, label)),
  );
  const playButton = el("button", { type: "button", class: "play" }, t("r.play"));
  const speedSelect = el(
    "select",
    { name: "speed" },
    ...[
      [2000, "½×"],
      [1000, "1×"],
      [500, "2×"],
      [200, "5×"],
    ].map(([ms, label]) => el("option", { value: ms, selected: ms === 1000 }, label)),
  );
  const tableRoot = el("div", { class: "table" });
  const side = el("div", { class: "side" });
  const counter = el("span", { class: "counter" });
  const move = (to) => {
    state.step = Math.min(Math.max(to, 0), frames.length - 1);
    show();
  };
  const stop = () => {
    if (state.timer) clearTimeout(state.timer);
    state.timer = null;
    playButton.textContent = t("r.play");
  };
  pageView.onLeave(stop);
  const controls = el(
    "div",
    { class: "controls" },
    el(
      "button",
      {
        type: "button",
        class: "first",
        "aria-label": t("r.firstl"),
        title: t("r.firstl"),
        onclick: () => move(0),
      },
      t("r.first"),
    ),
    el(
      "button",
      {
        type: "button",
        class: "back",
        "aria-label": t("r.backl"),
        title: t("r.backl"),
        onclick: () => move(state.step - 1),
      },
      t("r.back"),
    ),
    el(
      "button",
      {
        type: "button",
        class: "forward",
        "aria-label": t("r.forwardl"),
        title: t("r.forwardl"),
        onclick: () => move(state.step + 1),
      },
      t("r.forward"),
    ),
    el(
      "button",
      {
        type: "button",
        class: "last",
        "aria-label": t("r.lastl"),
        title: t("r.lastl"),
        onclick: () => move(frames.length - 1),
      },
      t("r.last"),
    ),
    el("label", {}, `${t("r.step")} `, stepInput),
    counter,
    el(
      "button",
      { type: "button", class: "jump", onclick: () => move(Number(stepInput.value)) },
      t("r.jump"),
    ),
    trickSelect,
    playButton,
    el("label", {}, `${t("r.speed")} `, speedSelect),
    el("label", {}, `${t("r.view")} `, seatSelect),
  );
  stepInput.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter") move(Number(stepInput.value));
  });
  trickSelect.addEventListener("change", () => {
    if (trickSelect.value !== "") move(Number(trickSelect.value));
  });
  seatSelect.addEventListener("change", () => {
    state.seat = seatSelect.value === "" ? null : Number(seatSelect.value);
    show();
  });
  speedSelect.addEventListener("change", () => {
    state.speed = Number(speedSelect.value);
    if (state.timer) {
      stop();
      start();
    }
  });
  // Played on: one step at a time, a step that completes a trick held twice as long.
  const start = () => {
    playButton.textContent = t("r.pause");
    const next = () => {
      if (state.step >= frames.length - 1) {
        stop();
        return;
      }
      move(state.step + 1);
      state.timer = setTimeout(next, state.speed * (completesTrick(frames[state.step]) ? 2 : 1));
    };
    state.timer = setTimeout(next, state.speed);
  };
  playButton.addEventListener("click", () => (state.timer ? stop() : start()));

  function show() {
    const frame = frames[state.step];
    stepInput.value = String(state.step);
    seatSelect.value = state.seat === null ? "" : String(state.seat);
    counter.textContent = ` ${t("r.of", { n: frames.length - 1 })} `;
    const q = new URLSearchParams({ step: state.step });
    if (state.seat !== null) q.set("seat", state.seat);
    history.replaceState(null, "", `/matches/${matchId}?${q}`);
    const decision = frame.decision;
    const acting = decision ? (decision.seat ?? 0) : 0;
    const model = new TableModel(game, names, state.seat);
    if (state.seat === null) {
      model.observe(frame.observations[acting], acting);
      frame.observations.forEach((o, s) => {
        model.hands[s] = oneof(o)[1].hand || [];
      });
    } else {
      model.observe(frame.observations[state.seat], state.seat);
    }
    if (completesTrick(frame)) model.holdLastTrick();
    drawTable(tableRoot, model);
    tableRoot.dataset.step = String(state.step);
    side.replaceChildren(
      decisionPanel(game, decision, state.seat),
      eventsPanel(game, frame.events, state.seat, names),
    );
  }
  pageView.replaceChildren(
    el("h1", {}, t("r.title", { id: matchId })),
    badge,
    el(
      "p",
      { class: "note" },
      `${gameWord(game)} · ${names.join(", ")}`,
      doc.match ? ` · ${resultText(doc.match)}` : "",
    ),
    controls,
    el("div", { class: "board" }, tableRoot, side),
    game === "bestia"
      ? el(
          "section",
          { class: "legend-box" },
          el("h3", {}, t("legend")),
          suitLegend(game, (s) => suitWord(game, s)),
        )
      : null,
  );
  show();
}

function decisionPanel(game, decision, seat) {
  const panel = el("section", { class: "decision" }, el("h3", {}, t("r.decision")));
  if (!decision) {
    panel.append(el("p", {}, t("r.end")));
    return panel;
  }
  const acting = decision.seat ?? 0;
  panel.append(el("p", { class: "to-act" }, t("r.toact", { n: acting })));
  if (seat !== null && seat !== acting) return panel;
  panel.append(
    el(
      "p",
      { class: "offered" },
      `${t("r.offered")}: `,
      (decision.legalActions || []).map((a) => actionText(game, a)).join(", "),
    ),
    el(
      "p",
      { class: "answered" },
      `${t("r.answered")}: `,
      el("b", {}, actionText(game, decision.action)),
      decision.requestId ? ` — ${decisionTiming(decision)}` : "",
    ),
  );
  for (const attempt of decision.rejected || []) {
    let tried = "?";
    try {
      tried = actionText(game, attempt.action);
    } catch {
      /* a malformed attempt shows by its message */
    }
    panel.append(
      el("p", { class: "rejected" }, t("r.rejected", { action: tried, why: attempt.message })),
    );
  }
  if (decision.substituted)
    panel.append(
      el("p", { class: "default" }, t("r.default", { why: decision.substitutionReason })),
    );
  return panel;
}

function completesTrick(frame) {
  return (frame.events || []).some((w) => oneof(oneof(w.event)[1])[0] === "trickWon");
}

function eventsPanel(game, events, seat, names) {
  const list = el("ul", { class: "events" });
  for (const watched of events) {
    const audience = watched.audience ?? 0;
    if (seat !== null && !((audience >> seat) & 1)) continue;
    list.append(
      el(
        "li",
        {},
        eventText(game, watched.event, names),
        audience === 0 ? ` [${t("r.hidden")}]` : "",
      ),
    );
  }
  return el("section", {}, el("h3", {}, t("r.events")), list);
}

// ---- live --------------------------------------------------------------------------------

async function livePage() {
  const pageView = view();
  const list = el("div", {});
  const refresh = async () => {
    try {
      const data = await api("/api/matches?status=running&pageSize=100");
      const matches = data.list.matches || [];
      const queue = data.list.queue || [];
      list.replaceChildren(
        matches.length
          ? el(
              "ul",
              { class: "live-list" },
              ...matches.map((info) =>
                el(
                  "li",
                  { "data-match": info.matchId },
                  link(`/live/${info.matchId}`, info.matchId),
                  ` · ${gameWord(gameName(info.game))} · ${(info.bots || []).join(", ")} · ${t("r.step")} ${info.steps}`,
                ),
              ),
            )
          : el("p", {}, t("live.none")),
        // (replaceChildren would write a null as the text "null")
        ...(queue.length
          ? [el("p", {}, `${t("live.queue")}: ${queue.map((q) => q.botName).join(", ")}`)]
          : []),
      );
    } catch (error) {
      list.replaceChildren(problem(error));
    }
  };
  await refresh();
  const timer = setInterval(refresh, 2000);
  pageView.onLeave(() => clearInterval(timer));
  pageView.replaceChildren(el("h1", {}, t("live.title")), list);
}

function liveMatchPage(matchId) {
  const tokenInput = el("input", {
    type: "password",
    name: "token",
    autocomplete: "off",
    value: sessionStorage.getItem("bisca.watch-token") || "",
  });
  const omniscient = el("input", { type: "checkbox", name: "omniscient" });
  const delay = el("input", { type: "number", name: "delay", min: 0, value: 0, size: 4 });
  const status = el("p", { class: "live-status" });
  const tableRoot = el("div", { class: "table" });
  const events = el("ul", { class: "events" });
  let socket = null;
  let skipLive = () => {};
  const close = () => {
    if (socket) socket.close();
    socket = null;
  };
  leaving.push(close);
  const watch = (ev) => {
    ev.preventDefault();
    close();
    // Kept for this tab only, and sent only to this page's socket.
    sessionStorage.setItem("bisca.watch-token", tokenInput.value);
    let model = null;
    let game = "belote";
    let updates = 0;
    socket = new WebSocket(socketUrl(`/api/matches/${encodeURIComponent(matchId)}/watch`));
    socket.onopen = () =>
      socket.send(
        JSON.stringify({
          token: tokenInput.value,
          request: { omniscient: omniscient.checked, delaySteps: Number(delay.value || 0) },
        }),
      );
    const pace = pacer(sleep);
    skipLive = () => pace.skip();
    let names = [];
    const draw = () => {
      if (model) drawTable(tableRoot, model, { onTap: () => pace.skip() });
    };
    socket.onmessage = (message) => {
      const frame = JSON.parse(message.data);
      if (frame.error) {
        status.textContent = t("error", { message: frame.error });
        return;
      }
      const update = frame.update;
      updates += 1;
      tableRoot.dataset.updates = String(updates);
      if (update.start) {
        game = gameName(update.start.game);
        names = (update.start.seats || []).map((s) => s.botName);
        model = new TableModel(game, names, null);
        pace.push(draw);
      } else if (update.events && model) {
        const afterStep = String(update.events.afterStep ?? 0);
        const shown = update.events.events || [];
        pacedEvents(
          pace,
          model,
          -1,
          shown,
          (watched) => {
            if (watched) events.prepend(el("li", {}, eventText(game, watched.event, names)));
            tableRoot.dataset.afterStep = afterStep;
            draw();
          },
          names,
        );
      }
      const counted = t("live.updates", { n: updates });
      const ended = update.end
        ? ` · ${t("live.over")} ${resultText({ game: `GAME_${game.toUpperCase()}`, results: update.end.seats })}`
        : "";
      if (update.end) pace.push(() => (status.dataset.over = "true"));
      status.textContent = `${counted}${ended}`;
    };
  };
  leaving.push(() => close());
  view().replaceChildren(
    el("h1", {}, t("r.title", { id: matchId })),
    el(
      "form",
      { class: "watch", onsubmit: watch },
      el("p", { class: "note" }, t("live.tokenhelp")),
      el("label", {}, `${t("live.token")} `, tokenInput),
      " ",
      el("label", {}, omniscient, ` ${t("live.omniscient")}`),
      " ",
      el("label", {}, `${t("live.delay")} `, delay),
      " ",
      el("button", { type: "submit" }, t("live.watch")),
    ),
    status,
    el(
      "div",
      { class: "board" },
      tableRoot,
      el("section", {}, el("h2", {}, t("r.events")), events),
    ),
    speedChooser(() => skipLive()),
  );
}

// ---- a seat at the table -----------------------------------------------------------------

// The table this page just opened (openTable), until its page shows: a first visit, whose
// deal is paced and said from its start (a page that comes back is not; see `catchingUp`).
let justOpened = null;

/** Opens a person's table for `request`, keeps its seat token for this tab (and the request,
 * for "Deal again"), and goes to it. */
async function openTable(request) {
  const table = await api("/api/tables", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ request }),
  });
  sessionStorage.setItem(`bisca.table.${table.table}`, table.token);
  sessionStorage.setItem(`bisca.table.${table.table}.request`, JSON.stringify(request));
  justOpened = table.table;
  go(`/play/${table.table}`);
}
async function playPage() {
  const pageView = view();
  const info = await api("/api/info");
  if (!info.arena) {
    pageView.replaceChildren(el("h1", {}, t("p.title")), el("p", {}, t("p.noarena")));
    return;
  }
  const bots = await api("/api/tables/bots?game=belote");
  const choices = [...bots.samples, ...bots.online];
  const chooser = (name, chosen) =>
    el(
      "select",
      { name },
      ...choices.map((b) => el("option", { value: b, selected: b === chosen }, b)),
    );
  const gameSelect = el(
    "select",
    { name: "game" },
    el("option", { value: "belote" }, gameWord("belote")),
    el("option", { value: "bestia" }, gameWord("bestia")),
  );
  const belote = el(
    "fieldset",
    { class: "belote-seats" },
    el("label", {}, `${t("p.left")} `, chooser("seat1", "greedy")),
    el("label", {}, `${t("p.partner")} `, chooser("seat2", "greedy")),
    el("label", {}, `${t("p.right")} `, chooser("seat3", "greedy")),
    el(
      "label",
      {},
      `${t("p.deals")} `,
      el("input", { type: "number", name: "deals", min: 1, max: 24, value: 1 }),
    ),
  );
  const seatsInput = el("input", { type: "number", name: "seats", min: 4, max: 7, value: 4 });
  const bestiaBots = el("div", {});
  const drawBestia = () =>
    bestiaBots.replaceChildren(
      ...Array.from({ length: Number(seatsInput.value) - 1 }, (_, i) =>
        el("label", {}, `${t("p.bot", { n: i + 1 })} `, chooser(`b${i + 1}`, "greedy")),
      ),
    );
  seatsInput.addEventListener("change", drawBestia);
  drawBestia();
  const bestia = el(
    "fieldset",
    { class: "bestia-seats", hidden: true },
    el("label", {}, `${t("p.seats")} `, seatsInput),
    bestiaBots,
    el(
      "label",
      {},
      `${t("p.rounds")} `,
      el("input", { type: "number", name: "rounds", min: 1, max: 4, value: 1 }),
    ),
  );
  gameSelect.addEventListener("change", () => {
    belote.hidden = gameSelect.value !== "belote";
    bestia.hidden = gameSelect.value !== "bestia";
  });
  // An alert: a refused sit-down (too many tables open, say) is heard, not only shown.
  const message = el("p", { class: "message", role: "alert" });
  const form = el(
    "form",
    {
      class: "sit",
      onsubmit: async (ev) => {
        ev.preventDefault();
        const data = new FormData(form);
        const game = gameSelect.value;
        const request =
          game === "belote"
            ? {
                game: "GAME_BELOTE",
                settings: { belote: { deals: Number(data.get("deals")) } },
                bots: ["", data.get("seat1"), data.get("seat2"), data.get("seat3")],
              }
            : {
                game: "GAME_BESTIA",
                settings: {
                  bestia: { seats: Number(data.get("seats")), rounds: Number(data.get("rounds")) },
                },
                bots: [
                  "",
                  ...Array.from({ length: Number(data.get("seats")) - 1 }, (_, i) =>
                    data.get(`b${i + 1}`),
                  ),
                ],
              };
        // ?seed=N deals a chosen shuffle (the same game again, a bug report, a test).
        const seed = new URLSearchParams(location.search).get("seed");
        if (seed) request.seed = seed;
        try {
          await openTable(request);
        } catch (error) {
          message.replaceChildren(problem(error));
        }
      },
    },
    el("label", {}, `${t("p.game")} `, gameSelect),
    belote,
    bestia,
    el("button", { type: "submit", class: "sit-down" }, t("p.start")),
  );
  pageView.replaceChildren(
    el("h1", {}, t("p.title")),
    el("p", {}, t("p.intro")),
    form,
    message,
    rulesLink(),
  );
}

function rulesLink() {
  return el(
    "p",
    {},
    link("/rules/belote", `${t("nav.rules")}: ${gameWord("belote")}`),
    " · ",
    link("/rules/bestia", `${t("nav.rules")}: ${gameWord("bestia")}`),
  );
}

// What a screen reader says: each sentence added to the polite live region as its own line,
// so that one said while another is read is queued, not written over (a card played 15 ms
// before the next seat's was never heard); the oldest lines go (removals are not said).
const ANNOUNCED_LINES = 5;
function announce(text) {
  const region = document.getElementById("announce");
  if (!region) return;
  region.append(el("p", {}, text));
  while (region.childElementCount > ANNOUNCED_LINES) region.firstElementChild.remove();
}

function speedChooser(onChange) {
  const chosen = localStorage.getItem("bisca.speed") || DEFAULT_SPEED;
  return el(
    "label",
    { class: "speed" },
    `${t("t.speed")} `,
    el(
      "select",
      {
        name: "speed",
        onchange: (ev) => {
          localStorage.setItem("bisca.speed", ev.target.value);
          if (onChange) onChange(ev.target.value);
        },
      },
      ...Object.keys(SPEEDS).map((name) =>
        el("option", { value: name, selected: name === chosen }, t(`speed.${name}`)),
      ),
    ),
  );
}

const currentWaits = () => waits(localStorage.getItem("bisca.speed") || DEFAULT_SPEED);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Events shown at the table's pace: another seat's card waits its turn, a completed trick
// stays (its winner marked) until the hold is over or the felt is tapped.
// The events a screen reader hears as they are drawn (the others are on the table).
const SPOKEN_EVENTS = new Set([
  "cardTurned",
  "trumpTurned",
  "bidMade",
  "dealVoided",
  "cardPlayed",
  "beloteAnnounced",
  "trickWon",
  "dealScored",
  "declared",
  "folded",
  "blindMove",
  "trumpStolen",
  "stealDeclined",
  "exchanged",
  "discarded",
  "dealerDiscarded",
  "handEnded",
]);
// Said in Bestia only: the cards the person got in the exchange (Belote's deal is seen in the
// hand, eight cards in two lines said while the bidding starts).
const spoken = (game, kind) =>
  SPOKEN_EVENTS.has(kind) || (game === "bestia" && kind === "cardsDealt");

function pacedEvents(pace, model, me, events, redraw, names, voice = null) {
  for (const watched of events) {
    const event = watched.event || watched;
    const [, inner] = oneof(event);
    const [kind, e] = oneof(inner);
    const wait =
      kind === "cardPlayed" && (e.seat ?? 0) !== me
        ? () => currentWaits().card
        : kind === "trickWon"
          ? () => currentWaits().trick
          : 0;
    pace.push(() => {
      model.apply(watched);
      // An empty sentence: said by the event that follows (the person's own cards).
      const words = spoken(model.game, kind) && eventText(model.game, event, names, voice);
      if (words) announce(words);
      redraw(watched);
    }, wait);
    if (kind === "trickWon")
      pace.push(() => {
        if (model.held) {
          model.held = null;
          redraw(null);
        }
      });
  }
}

// Where a bid stands in the row: pass first, then the takes in the deck's suit order, then
// any other bid in the order the request gave it.
function bidOrder(action) {
  const [, inner] = oneof(action);
  const [kind, value] = oneof(inner);
  if (kind === "pass") return 0;
  if (kind === "take") return 1 + SUIT_ORDER.indexOf(value.suit);
  return 10;
}
const SUIT_ORDER = ["SUIT_SPADES", "SUIT_HEARTS", "SUIT_DIAMONDS", "SUIT_CLUBS"];

// When a screen reader is told that the person's time runs short (seconds left of move and bank).
const TIME_LOW_S = 15;
// The events that are a seat's move (a seat 0's event leaves its seat out: 0 is proto3's
// default, so only these kinds say the person moved).
const MOVES = new Set([
  "cardPlayed",
  "bidMade",
  "declared",
  "blindMove",
  "folded",
  "exchanged",
  "discarded",
  "trumpStolen",
  "stealDeclined",
]);

function tablePage(tableId) {
  const token = sessionStorage.getItem(`bisca.table.${tableId}`);
  if (!token) {
    view().replaceChildren(el("h1", {}, t("p.title")), el("p", {}, t("p.gone")));
    return;
  }
  const asked = JSON.parse(sessionStorage.getItem(`bisca.table.${tableId}.request`) || "null");
  const firstVisit = justOpened === tableId;
  justOpened = null;
  // The person's choice for its open request (a card, a bid, the exchange's cards): kept for
  // the tab, so a reload shows the same request with the same choice.
  const choiceKey = `bisca.table.${tableId}.choice`;
  const tableRoot = el("div", { class: "table" });
  const tableLine = el("p", { class: "table-line" });
  const prompt = el("p", { class: "prompt" });
  const phaseHelp = el("p", { class: "phase-help" });
  const reason = el("p", { class: "reason", role: "status" });
  const notice = el("p", { class: "notice", role: "alert" });
  const clock = el("span", { class: "clock" });
  const actions = el("div", { class: "actions", role: "group", "aria-label": t("t.bids") });
  const confirm = el(
    "button",
    { type: "button", class: "confirm", disabled: true, "aria-describedby": "turn-reason" },
    t("p.confirm"),
  );
  reason.id = "turn-reason";
  // The turn's status line: why a card or a bid is refused (in the error's colour), or the
  // exchange's choice as it stands ("stand pat" is allowed: a `choice`, in the text's colour).
  const explain = (text, { choice = false } = {}) => {
    const before = text && state.request ? handUnderTurnBar() : null;
    reason.textContent = text;
    reason.classList.toggle("choice", choice);
    // The line makes the sticky turn bar taller, over the hand it had left clear (review 54: a
    // refused take's reason on a 360x640 phone left 22 px of each card and no name showing):
    // the page scrolls by what more of the person's seat the bar covers, the hand and its name
    // shown as they were.
    if (before !== null) {
      unstick();
      const grown = (handUnderTurnBar() ?? before) - before;
      if (grown > 0) {
        handClearOfTurnBar();
        window.scrollBy(0, grown);
      }
    }
  };
  // How the hand is played from the keyboard: the hand's description (a screen reader reads it
  // on entering the hand; the sighted see the cards' focus ring).
  const keysHelp = el("p", { id: "table-keys", hidden: true }, t("t.keys"));
  const handSummary = el("section", { class: "hand-summary", hidden: true });
  const result = el("section", { class: "result", hidden: true, tabindex: -1 });
  const state = {
    summary: null,
    game: "belote",
    names: [],
    seat: 0,
    model: null,
    request: null,
    illegal: {},
    illegalFor: {},
    refusedWhy: {},
    selected: null,
    exchange: new Set(),
    deadline: null,
    over: false,
    voided: false,
    stopped: false,
    crowded: false,
    // A page that comes back to its table (a reload, another tab) is sent every frame so far
    // at once, then `caughtUp`: until then those frames are applied straight to the table,
    // unpaced and unannounced, and only the request still open is shown: the deal is not
    // played again. Decided by the tab's mark, and by the table's status when the page
    // connected (its first frame): a match already started is backlog but on the first visit
    // of the page that opened it, whose deal is paced from its start.
    catchingUp: sessionStorage.getItem(`bisca.table.${tableId}.seen`) !== null,
  };
  const backlog = { started: false, request: null, ended: null };
  const pace = pacer(sleep);
  const socket = new WebSocket(socketUrl(`/api/tables/${encodeURIComponent(tableId)}/play`));
  leaving.push(() => {
    state.stopped = true;
    socket.close();
    document.documentElement.style.removeProperty("--turn-height");
  });
  const tick = setInterval(() => {
    if (!state.deadline || !state.request) {
      clock.textContent = "";
      return;
    }
    const left = Math.max(0, state.deadline.move - Date.now()) / 1000;
    const bank =
      Math.max(
        0,
        Math.min(state.deadline.bank, state.deadline.bank - (Date.now() - state.deadline.move)),
      ) / 1000;
    clock.textContent = `${t("p.clock")}: ${left.toFixed(0)} s + ${bank.toFixed(0)} s`;
    // Said once a request, before the referee plays for the person (the clock is only seen).
    if (left + bank < TIME_LOW_S && state.warned !== state.request.requestId) {
      state.warned = state.request.requestId;
      announce(t("p.timelow", { n: TIME_LOW_S }));
    }
  }, 250);
  leaving.push(() => clearInterval(tick));

  // The request's legal actions, by what the person touches: a card, or a bid's key.
  const legal = () => {
    const cards = new Map();
    const bids = [];
    let exchange = false;
    let discard = false;
    for (const action of (state.request && state.request.legalActions) || []) {
      const [, inner] = oneof(action);
      const [kind, value] = oneof(inner);
      if (kind === "playCard" || kind === "discard") cards.set(cardKey(value.card), action);
      if (kind === "discard") discard = true;
      else if (kind === "exchange") exchange = true;
      else if (kind !== "playCard") bids.push(action);
    }
    return { cards, bids, exchange, discard };
  };
  const exchangeAction = () =>
    ((state.request && state.request.legalActions) || []).find((action) => {
      const [, inner] = oneof(action);
      const [kind, value] = oneof(inner);
      if (kind !== "exchange") return false;
      const discards = (value.discards || []).map(cardKey);
      return (
        discards.length === state.exchange.size && discards.every((k) => state.exchange.has(k))
      );
    });
  const chosen = () => {
    if (!state.request) return null;
    if (legal().exchange) return exchangeAction() || null;
    return state.selected ? state.selected.action : null;
  };

  const keepChoice = () => {
    if (!state.request) return;
    const choice = {
      requestId: state.request.requestId,
      selected: state.selected ? state.selected.key : null,
      exchange: [...state.exchange],
    };
    sessionStorage.setItem(choiceKey, JSON.stringify(choice));
  };
  // The choice kept for the request now open, if any (its cards still in the hand, its bid
  // still offered).
  const restoreChoice = () => {
    const kept = JSON.parse(sessionStorage.getItem(choiceKey) || "null");
    if (!kept || kept.requestId !== state.request.requestId) return;
    const hand = state.model.hands[state.seat] || [];
    const { cards, bids, exchange } = legal();
    if (exchange) {
      const held = new Set(hand.map(cardKey));
      state.exchange = new Set(kept.exchange.filter((key) => held.has(key)));
    } else if (cards.has(kept.selected)) {
      const card = hand.find((c) => cardKey(c) === kept.selected);
      if (card) state.selected = { key: kept.selected, card, action: cards.get(kept.selected) };
    } else {
      const action = bids.find((bid) => JSON.stringify(bid) === kept.selected);
      if (action) state.selected = { key: kept.selected, action };
    }
  };

  const cardOptions = () => {
    const options = {};
    const hand = (state.model && state.model.hands[state.seat]) || [];
    const { cards, exchange } = legal();
    for (const card of hand) {
      const key = cardKey(card);
      if (exchange) options[key] = { legal: true, selected: state.exchange.has(key) };
      else if (cards.has(key))
        options[key] = { legal: true, selected: state.selected && state.selected.key === key };
      else if (!state.request) options[key] = { legal: false, idle: true };
      else {
        let why = t("why.notnow");
        if (state.request && key in state.illegal) why = reasonText(state.game, state.illegal[key]);
        else if (state.request && !cards.size && state.game === "belote") why = t("why.bidding");
        else if (state.request && !cards.size) why = t(`phase.${state.model.phase}`);
        options[key] = { legal: false, reason: why };
      }
    }
    return options;
  };

  const redraw = (focusHand = false) => {
    if (!state.model) return;
    drawTable(tableRoot, state.model, {
      person: true,
      keysHelp: keysHelp.id,
      cards: cardOptions(),
      onCard: (card, info) => pressCard(card, info),
      onTap: () => pace.skip(),
      focusHand,
    });
    const mine = state.request !== null;
    document.title = [mine ? t("p.yourturn") : null, t("p.title"), t(`game.${state.game}`), "Bisca"]
      .filter(Boolean)
      .join(" – ");
    tableRoot.dataset.request = mine ? `${state.request.requestId}:${state.request.attempt}` : "";
    document.body.dataset.myTurn = mine ? "true" : "false";
    const { bids, exchange } = legal();
    // The bids the request offers, and beside them those of the round it does not (greyed,
    // their reason in words, never confirmable), in one order: pass, then takes by suit.
    const refusedBids = state.request
      ? Object.entries(state.illegal)
          .filter(([key]) => key.startsWith("{"))
          .map(([key, why]) => ({ key, action: why.action, why }))
      : [];
    const shownBids = [
      ...bids.map((action) => ({ key: JSON.stringify(action), action, why: null })),
      ...refusedBids,
    ].sort((a, b) => bidOrder(a.action) - bidOrder(b.action));
    // Focus on a bid stays on it (the bids are redrawn).
    const focusedBid = actions.contains(document.activeElement)
      ? document.activeElement.dataset.key
      : null;
    // Drawn afresh, then the bids already shown kept (a focused bid is never replaced, so a
    // screen reader hears no focus move when one is selected).
    const drawnBids = el(
      "div",
      {},
      ...shownBids.map(({ key, action, why }) => {
        const [, inner] = oneof(action);
        const [kind] = oneof(inner);
        const words = actionText(state.game, action);
        if (why) {
          const because = reasonText(state.game, why);
          const refused = el(
            "button",
            {
              type: "button",
              class: "bid illegal",
              "data-action": kind,
              "data-key": key,
              "aria-disabled": "true",
              "aria-label": t("t.notallowed", { card: words, why: because }),
              onclick: (ev) => ev.currentTarget.press(),
            },
            words,
          );
          // Nothing is chosen: the reason is said, in words, beside Confirm (a status region:
          // it is heard once, not announced again).
          refused.press = () => explain(`${words}: ${because}`);
          return refused;
        }
        const on = state.selected && state.selected.key === key;
        const bid = el(
          "button",
          {
            type: "button",
            class: `bid${on ? " selected" : ""}`,
            "data-action": kind,
            "data-key": key,
            "aria-pressed": on ? "true" : "false",
            onclick: (ev) => ev.currentTarget.press(),
          },
          words,
        );
        bid.press = () => (on ? send() : choose({ key, action }));
        return bid;
      }),
    );
    keepButtons(actions, drawnBids, "key");
    if (focusedBid) {
      const again = [...actions.querySelectorAll("button")].find(
        (b) => b.dataset.key === focusedBid,
      );
      // The bid was made: focus goes back to the hand (or the table) rather than the page.
      const hand = tableRoot.querySelector(".seat.mine .hand button[tabindex='0']");
      if (!tableRoot.hasAttribute("tabindex")) tableRoot.tabIndex = -1;
      const target = again || hand || tableRoot;
      if (target !== document.activeElement) target.focus({ preventScroll: true });
    }
    if (exchange && state.request) {
      const action = exchangeAction();
      explain(action ? actionText(state.game, action, { words: true }) : "", { choice: true });
    }
    confirm.disabled = !chosen();
    // The exchange selects several cards: Enter drops a card selected, it does not confirm.
    keysHelp.textContent = t(exchange && state.request ? "t.keys.exchange" : "t.keys");
    // Confirm names what it confirms ("Confirm: seven of spades").
    const choice = chosen();
    const what = state.selected?.card
      ? cardName(state.game, state.selected.card)
      : choice && actionText(state.game, choice, { words: true });
    if (what) confirm.setAttribute("aria-label", `${t("p.confirm")}: ${what}`);
    else confirm.removeAttribute("aria-label");
    const phase = state.model.phase;
    phaseHelp.textContent =
      mine && phase && state.game === "bestia"
        ? `${t(`phase.${phase}`)}: ${t(`help.${phase}`)}`
        : "";
    if (focusHand) {
      // The turn bar has its words only now, and its height with them (Bestia's help makes it
      // taller than the page's scroll padding on a phone): the card focused above is scrolled
      // clear of it, the felt with it (style.css: --turn-height, the cards' scroll margin).
      const card = handClearOfTurnBar();
      if (card === document.activeElement) card.scrollIntoView({ block: "nearest" });
    }
  };
  // The turn bar's height as the page's scroll padding (style.css --turn-height): a card of
  // the hand scrolled into view lies above the bar, not under it. Returns the hand's card in
  // the tab order (null when the hand is empty).
  const handClearOfTurnBar = () => {
    const covers = turn.classList.contains("unstuck") ? 0 : turn.offsetHeight;
    document.documentElement.style.setProperty("--turn-height", `${covers}px`);
    return tableRoot.querySelector(".seat.mine .hand button[tabindex='0']");
  };
  // How many px of the person's seat (its cards, its name and tricks won) the sticky turn bar
  // covers: 0 when none (the seat above the bar, or the bar under the table: unstuck); null
  // when the seat is not on the screen at all (the page scrolled away from it).
  const handUnderTurnBar = () => {
    const seat = tableRoot.querySelector(".seat.mine");
    if (!seat || !turn.isConnected) return null;
    const { top, bottom } = seat.getBoundingClientRect();
    if (bottom <= 0 || top >= window.innerHeight) return null;
    if (turn.classList.contains("unstuck")) return 0;
    return Math.max(0, Math.ceil(bottom - turn.getBoundingClientRect().top));
  };
  const focusFirstBid = () => {
    const first = actions.querySelector("button");
    if (first) first.focus({ preventScroll: true });
  };
  actions.addEventListener("keydown", (ev) => {
    const buttons = [...actions.querySelectorAll("button")];
    const index = buttons.indexOf(document.activeElement);
    const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[ev.key];
    let next = step ? (index + step + buttons.length) % buttons.length : null;
    if (ev.key === "Home") next = 0;
    if (ev.key === "End") next = buttons.length - 1;
    if (index < 0 || next === null) return;
    ev.preventDefault();
    buttons[next].focus();
  });
  const choose = (choice) => {
    state.selected = choice;
    keepChoice();
    explain("");
    notice.textContent = "";
    redraw();
    const button = actions.querySelector(`button[aria-pressed="true"]`);
    if (button && !choice.card) button.focus({ preventScroll: true });
  };
  const pressCard = (card, info) => {
    if (!state.request) {
      explain(info.reason || t("why.notnow"));
      return;
    }
    const key = cardKey(card);
    if (!info.legal) {
      // Nothing is chosen: the reason is said, in words, beside Confirm (a status region:
      // it is heard once, not announced again).
      explain(`${cardName(state.game, card)}: ${info.reason}`);
      return;
    }
    if (legal().exchange) {
      if (state.exchange.has(key)) state.exchange.delete(key);
      else state.exchange.add(key);
      keepChoice();
      redraw();
      return;
    }
    if (state.selected && state.selected.key === key) {
      send(); // pressed again: the play is confirmed
      return;
    }
    state.selected = { key, card, action: legal().cards.get(key) };
    keepChoice();
    explain("");
    redraw();
  };
  const send = () => {
    const action = chosen();
    if (!action || !state.request) return;
    socket.send(JSON.stringify({ reply: { requestId: state.request.requestId, action } }));
    sessionStorage.removeItem(choiceKey);
    state.request = null;
    state.selected = null;
    state.exchange = new Set();
    explain("");
    prompt.textContent = "";
    const fromConfirm = document.activeElement === confirm;
    confirm.disabled = true;
    redraw();
    if (fromConfirm) {
      // A disabled Confirm drops its focus to the page: it goes back to the hand instead.
      const card = tableRoot.querySelector(".seat.mine .hand button[tabindex='0']");
      if (!tableRoot.hasAttribute("tabindex")) tableRoot.tabIndex = -1;
      (card || tableRoot).focus({ preventScroll: true });
    }
  };
  confirm.addEventListener("click", send);
  const dealAgain = async () => {
    try {
      const request = { ...asked };
      delete request.seed; // a new shuffle
      await openTable(request);
    } catch (error) {
      notice.replaceChildren(problem(error));
    }
  };
  const showHand = (handResult) => {
    const lines = handSummaryLines(handResult, tableVoice(state.game, state.seat).who);
    handSummary.hidden = false;
    handSummary.replaceChildren(
      el("h2", {}, t("h.title", { n: (handResult.handNumber ?? 0) + 1 })),
      el("ul", {}, ...lines.map((line) => el("li", {}, line))),
    );
  };
  const finish = (ended) => {
    state.over = true;
    state.request = null;
    state.deadline = null;
    const seats = ended.seats || [];
    const mine = seats.find((s) => (s.seat ?? 0) === state.seat) || { score: 0 };
    // The seats as the person hears them ("your partner", "seat 3"), not the bots' names.
    const { who } = tableVoice(state.game, state.seat);
    result.hidden = false;
    const lines = [];
    if (state.game === "belote") {
      const other = seats.find((s) => (s.seat ?? 0) % 2 !== state.seat % 2) || { score: 0 };
      const a = Number(mine.score),
        b = Number(other.score);
      const deal = state.model && state.model.lastDeal;
      if (state.voided && a === 0 && b === 0)
        lines.push(el("p", { class: "verdict-line" }, t("p.allpass")));
      else
        lines.push(
          el(
            "p",
            { class: "verdict-line" },
            a > b ? t("p.won", { a, b }) : a < b ? t("p.lost", { a, b }) : t("p.drawn", { a, b }),
          ),
        );
      if (deal && !deal.void) lines.push(el("p", {}, dealSummary(deal)));
    } else {
      const scores = seats.map((s) => ({ seat: s.seat ?? 0, score: Number(s.score) }));
      const top = scores.reduce((a, b) => (b.score > a.score ? b : a), scores[0] || mine);
      lines.push(
        el(
          "p",
          { class: "verdict-line" },
          Number(mine.score) >= top.score
            ? t("p.bestia.won", { chips: signed(Number(mine.score), 0) })
            : t("p.bestia.plus", {
                chips: signed(Number(mine.score), 0),
                best: who(top.seat),
                top: signed(top.score, 0),
              }),
        ),
      );
    }
    lines.push(el("ul", {}, ...seats.map((s) => el("li", {}, `${who(s.seat)}: ${s.score ?? 0}`))));
    result.replaceChildren(
      el("h2", {}, t("p.over")),
      ...lines,
      el(
        "p",
        {},
        asked
          ? el(
              "button",
              { type: "button", class: "deal-again", onclick: dealAgain },
              t("p.newdeal"),
            )
          : null,
        " ",
        link(`/matches/${state.summary.matchId}`, t("p.replay")),
        " · ",
        link("/play", t("p.again")),
      ),
    );
    prompt.textContent = t("p.over");
    // Nothing is left to confirm: the turn bar says only that the game is over.
    confirm.hidden = true;
    announce(result.querySelector(".verdict-line").textContent);
    redraw();
    result.focus({ preventScroll: true });
    result.scrollIntoView({ block: "nearest" });
  };
  // The person's request, shown now: `received` is when it reached the page (the referee's
  // clock for it runs from then); `back`: the page came back to it (a reload), which is said
  // first.
  const showRequest = (body, received, { back = false } = {}) => {
    const fresh = !state.request || state.request.requestId !== body.requestId;
    state.request = body;
    if (fresh) {
      state.selected = null;
      state.exchange = new Set();
      state.illegal = state.illegalFor[body.requestId] || {};
      explain("");
      notice.textContent = "";
    }
    state.model = new TableModel(state.game, state.names, state.seat).observe(
      body.observation,
      state.seat,
    );
    if (fresh) restoreChoice();
    if (back) announce(backText(state.model, tableVoice(state.game, state.seat)));
    state.deadline = personDeadline({
      received,
      shown: Date.now(),
      personMoveMs: Number(state.summary?.clock?.moveMs || 0),
      request: body.clock,
    });
    const { cards, exchange, discard } = legal();
    const what = turnWords(state.game, state.model.phase, {
      cards: cards.size > 0,
      discard,
      exchange,
    });
    prompt.textContent = `${t("p.yourturn")} — ${what.shown}`;
    announce(t("t.yourturn", { what: what.said }));
    const hasBids = legal().bids.length > 0;
    redraw(!hasBids);
    if (hasBids) {
      // The bids are in the sticky turn bar: focusing them scrolls nothing, so the table is
      // brought into view first, as a card turn's focus does: the hand clear of the bar (on a
      // small phone the bar is tall, five bids on two rows, and once covered all but 6 px of
      // each card: review 53), the felt above it with its turned card (the cards' scroll
      // margins), so the person sees the hand it bids on.
      const card = handClearOfTurnBar();
      (card || tableRoot.querySelector(".felt"))?.scrollIntoView({ block: "nearest" });
      focusFirstBid();
    }
  };
  // A frame of the backlog a page that comes back is sent (see `catchingUp`).
  const catchUp = (kind, body) => {
    if (kind === "matchStarted") {
      state.model = new TableModel(state.game, state.names, state.seat);
      backlog.started = true;
    } else if (kind === "events")
      for (const watched of body.events || []) {
        state.model.apply(watched);
        state.model.held = null;
        noteEvent(watched);
      }
    else if (kind === "actionRequest") backlog.request = body;
    else if (kind === "matchEnded") backlog.ended = body;
  };
  const caughtUp = ({ openRequest, openForMs }) => {
    sessionStorage.setItem(`bisca.table.${tableId}.seen`, "1");
    if (!state.catchingUp) return;
    state.catchingUp = false;
    // A game under way is summed up in a line (its end says itself).
    const back = backlog.started && !backlog.ended;
    if (backlog.ended) finish(backlog.ended);
    else if (backlog.request && backlog.request.requestId === openRequest)
      showRequest(backlog.request, Date.now() - Number(openForMs || 0), { back });
    else {
      noteEvent(null);
      redraw();
      if (back) announce(backText(state.model, tableVoice(state.game, state.seat)));
    }
  };
  // What an event changes beside the table itself, and the prompt while others play.
  const noteEvent = (watched) => {
    if (watched) {
      const [, inner] = oneof(watched.event || watched);
      const [k, e] = oneof(inner);
      if (k === "dealVoided") state.voided = true;
      if (k === "handEnded" && e.result) showHand(e.result);
      if (state.request && !state.catchingUp && MOVES.has(k) && (e.seat ?? 0) === state.seat) {
        // The person's move, made while this page still asked for it: another page of the
        // table answered, or (once this page's clock has run out) the referee played it.
        const { move, bank } = state.deadline || { move: 0, bank: 0 };
        const timedOut = Date.now() >= move + bank;
        state.request = null;
        state.selected = null;
        state.exchange = new Set();
        prompt.textContent = "";
        if (timedOut) announce(t("p.timeup"));
      }
    }
    // The seat awaited as the table names it ("your partner"), not by its bot's generated
    // name; the person's own seat, before its question is shown (the table's pace), is never
    // one to wait for: its turn is said to be coming.
    const toAct = state.model && state.model.toAct;
    if (toAct === null || toAct === undefined || state.request) return;
    prompt.textContent =
      toAct === state.seat
        ? t("p.wait.you")
        : t("p.wait", { n: tableVoice(state.game, state.seat).who(toAct) });
  };
  socket.onopen = () => socket.send(JSON.stringify({ token }));
  socket.onmessage = (message) => {
    if (state.stopped) return;
    const frame = JSON.parse(message.data);
    if (frame.error) {
      // A reply to a turn already over (answered from another page, or its time ran out).
      const over = frame.status === 409 && state.summary && state.summary.status !== "over";
      // The table's only 429: too many pages of it are open (the table itself is there).
      state.crowded = frame.status === 429;
      notice.textContent = over
        ? t("p.turnover")
        : state.crowded
          ? t("p.toomany")
          : t("error", { message: frame.error });
      return;
    }
    if (frame.table) {
      // The first frame: a match already started when this page connected is backlog until
      // `caughtUp`, but on the first visit of the page that opened the table.
      if (!state.summary && !firstVisit && frame.table.status !== "waiting")
        state.catchingUp = true;
      state.summary = frame.table;
      state.game = frame.table.game;
      state.seat = frame.table.seat;
      state.names = frame.table.seats;
      if (!state.model) {
        state.model = new TableModel(state.game, state.names, state.seat);
        prompt.textContent = t("p.waiting");
      }
      tableLine.textContent = tableLineText(state.game, asked, state.names.length);
      tableRoot.dataset.status = frame.table.status;
      tableRoot.dataset.match = frame.table.matchId;
      tabs.dataset.game = state.game;
      return;
    }
    if (frame.illegal) {
      // Keyed as the page keys what it offers: a card by its card, a bid by its action.
      const reasons = Object.fromEntries(
        (frame.illegal.actions || []).map((x) => {
          const [, inner] = oneof(x.action);
          return [inner.playCard ? cardKey(inner.playCard.card) : JSON.stringify(x.action), x];
        }),
      );
      state.illegalFor[frame.illegal.requestId] = reasons;
      if (state.request && frame.illegal.requestId === state.request.requestId) {
        state.illegal = reasons;
        redraw();
      }
      return;
    }
    if (frame.refused) {
      // The referee's reason for a refusal, as a code the page translates (its text for bots).
      state.refusedWhy[frame.refused.requestId] = frame.refused;
      return;
    }
    if (frame.closed) {
      notice.textContent = t("error", { message: frame.closed });
      return;
    }
    if (frame.caughtUp) {
      caughtUp(frame.caughtUp);
      return;
    }
    const [kind, body] = oneof(frame.server);
    if (state.catchingUp) {
      catchUp(kind, body);
      return;
    }
    const received = Date.now();
    if (kind === "matchStarted") {
      pace.push(() => {
        state.model = new TableModel(state.game, state.names, state.seat);
        prompt.textContent = t("p.wait", { n: "…" });
        redraw();
      });
    } else if (kind === "events") {
      pacedEvents(
        pace,
        state.model,
        state.seat,
        body.events || [],
        (watched) => {
          noteEvent(watched);
          redraw();
        },
        state.names,
        tableVoice(state.game, state.seat),
      );
    } else if (kind === "actionRequest") {
      // Shown after the pace, at most the table's pacing allowance after it arrived (the
      // referee's move time has that allowance added): the countdown starts when shown.
      const allowance = Number((state.summary && state.summary.pacingMs) || 0);
      pace.ask(() => showRequest(body, received), allowance);
    } else if (kind === "actionRejected") {
      pace.push(() => {
        const why = state.refusedWhy[body.requestId] || { reason: body.message };
        notice.textContent = t("p.refused.final", { why: reasonText(state.game, why) });
        notice.classList.add("refused");
      });
    } else if (kind === "matchEnded") {
      // Like a question, the end is never held past the pacing allowance (a trick held until
      // tapped would otherwise hide the result until the felt is clicked).
      pace.ask(() => finish(body), Number((state.summary && state.summary.pacingMs) || 0));
    } else if (kind === "error") {
      // A reply the referee took no more (the turn was settled meanwhile): the page's words.
      notice.textContent =
        body.code === "ERROR_CODE_UNKNOWN_REQUEST"
          ? t("p.turnover")
          : t("error", { message: body.message });
    }
  };
  socket.onclose = () => {
    // A page refused for the tabs already open is told so (the notice), not that the table
    // is gone. Whether the game is over is decided when the step runs, after the frames
    // queued before the close: the server closes the socket after the match's end, which is
    // often still queued at the table's pace then (review 53: "This table is gone" was shown
    // under "Game over").
    if (state.stopped || state.crowded) return;
    pace.push(() => {
      if (!state.over && !state.stopped) prompt.textContent = t("p.gone");
    });
  };
  const board = el(
    "div",
    { class: "board", id: "panel-table", role: "tabpanel", "aria-labelledby": "tab-table" },
    el(
      "div",
      { class: "table-column" },
      keysHelp,
      tableLine,
      tableRoot,
      speedChooser(() => pace.skip()),
    ),
    el("section", { class: "side" }, handSummary, result),
  );
  const turn = el(
    "section",
    { class: "turn", "aria-label": t("p.turnbar") },
    prompt,
    phaseHelp,
    el("div", { class: "turn-row" }, actions, confirm, clock),
    reason,
    notice,
  );
  // A turn bar taller than half the screen (the text enlarged: Bestia's help on a phone at
  // 200 %) would hide the table while it sticks to the screen's bottom: it then stays under
  // the table, where the page scrolls to it (style.css .turn.unstuck).
  const unstick = () =>
    turn.classList.toggle("unstuck", turn.offsetHeight > window.innerHeight / 2);
  const sized = new ResizeObserver(unstick);
  sized.observe(turn);
  window.addEventListener("resize", unstick);
  leaving.push(() => {
    sized.disconnect();
    window.removeEventListener("resize", unstick);
  });
  const rules = el("article", {
    class: "rules",
    id: "panel-rules",
    role: "tabpanel",
    "aria-labelledby": "tab-rules",
    hidden: true,
  });
  const tabs = tabBar(
    [
      ["table", t("nav.table"), [board, turn]],
      ["rules", t("nav.fullrules"), [rules]],
    ],
    async (name) => {
      if (name === "rules" && !rules.childElementCount) {
        const game = tabs.dataset.game || "belote";
        rules.innerHTML = await rulesHtml(game);
      }
    },
  );
  view().replaceChildren(el("h1", {}, t("p.title")), tabs, board, turn, rules);
  // "Sit down" went with its page, and focus with it to the page's body until the first turn
  // (a second or more, nothing said: review 53). Focus goes to the table's panel as soon as it
  // shows (a screen reader says "Table" and reads on into the table; Tab goes on to the hand,
  // then the turn bar); the first turn moves it to its bid or card. Not when the person has
  // focused something meanwhile (only the body, or nothing, is taken over).
  const active = document.activeElement;
  if (!active || active === document.body) {
    board.tabIndex = -1;
    board.focus({ preventScroll: true });
  }
}

// Tabs over panels (WAI-ARIA's tabs: arrow keys move between them).
function tabBar(entries, onOpen) {
  const bar = el("div", { class: "tabs", role: "tablist" });
  const buttons = entries.map(([name, label], index) => {
    const open = () => {
      buttons.forEach((b, i) => {
        const on = i === index;
        b.setAttribute("aria-selected", on ? "true" : "false");
        b.tabIndex = on ? 0 : -1;
        for (const panel of entries[i][2]) panel.hidden = !on;
      });
      onOpen(name);
    };
    const button = el(
      "button",
      {
        type: "button",
        role: "tab",
        id: `tab-${name}`,
        "aria-controls": `panel-${name === "table" ? "table" : name}`,
        "aria-selected": index === 0 ? "true" : "false",
        tabindex: index === 0 ? 0 : -1,
        "data-tab": name,
        onclick: open,
        onkeydown: (ev) => {
          const step = { ArrowRight: 1, ArrowLeft: -1 }[ev.key];
          if (!step) return;
          const next = buttons[(index + step + buttons.length) % buttons.length];
          next.focus();
          next.click();
        },
      },
      label,
    );
    return button;
  });
  bar.append(...buttons);
  return bar;
}

// "4 players · you partner the AI opposite · single deal"
function tableLineText(game, asked, players) {
  const settings = (asked && asked.settings && asked.settings[game]) || {};
  if (game === "belote") {
    const deals = Number(settings.deals || 1);
    return t("t.line.belote", { deals: deals === 1 ? t("t.single") : t("t.deals", { n: deals }) });
  }
  return t("t.line.bestia", {
    n: players,
    rounds: t(Number(settings.rounds || 1) === 1 ? "t.round1" : "t.rounds", {
      n: Number(settings.rounds || 1),
    }),
  });
}

// ---- rules and display ---------------------------------------------------------------------

const GAMES = ["belote", "bestia"];

async function rulesHtml(game) {
  const response = await fetch(`/static/rules/${game}.${language()}.html`);
  if (!response.ok) throw new Error(`${game}: ${response.statusText}`);
  return response.text();
}

async function rulesPage(game) {
  const pageView = view();
  const tabs = el("p", { class: "tabs" }, ...GAMES.map((g) => link(`/rules/${g}`, gameWord(g))));
  if (!GAMES.includes(game)) {
    pageView.replaceChildren(
      tabs,
      el("p", { class: "error", role: "alert" }, t("rules.missing", { game: game || "—" })),
    );
    return;
  }
  const article = el("article", { class: "rules" });
  article.innerHTML = await rulesHtml(game);
  pageView.replaceChildren(
    tabs,
    article,
    el(
      "section",
      { class: "legend-box" },
      el("h2", {}, t("legend")),
      suitLegend(game, (s) => suitWord(game, s)),
    ),
  );
}

function settingsPage() {
  view().replaceChildren(el("h1", {}, t("s.title")), sliders());
}

// ---- the league for strangers: accounts, uploads, a bot's versions ------------------------

// A JSON request that changes something (the guard wants JSON from the app's own page).
function post(path, body, method = "POST") {
  return api(path, {
    method,
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
}

// The account signed in (its session cookie), or null; a server with no league answers 404.
async function signedIn() {
  try {
    return (await api("/api/account")).account;
  } catch (error) {
    if (error.status === 401) return null;
    throw error;
  }
}

// A bot's or a version's page follows what is still moving: a version in the gate (every
// 2 s), then an active version until the ladder's first rated match (every 5 s); the timer
// ends with the view.  A folder or archive chosen in the upload form holds the refresh, so
// the page never drops what a person picked.
const IN_GATE = new Set(["building", "checking", "validating"]);
const unrated = (version, ladder) =>
  version.state === "active" && !(ladder && (ladder.ratings || []).length);
function followVersions(pageView, versions, ladders, again) {
  const inGate = versions.some((v) => IN_GATE.has(v.state));
  if (!inGate && !versions.some((v, i) => unrated(v, ladders[i]))) return;
  const picked = () =>
    [...document.querySelectorAll("form.upload input[type=file]")].some((i) => i.files.length);
  let timer;
  const wait = () => {
    timer = setTimeout(() => (picked() ? wait() : again()), inGate ? 2000 : 5000);
  };
  wait();
  pageView.onLeave(() => clearTimeout(timer));
}

function stateBadge(state) {
  return el("span", { class: `state state-${state}`, "data-state": state }, t(`vs.${state}`));
}

function field(name, label, attributes = {}) {
  return el(
    "label",
    { class: "field" },
    el("span", {}, label),
    el("input", { name, required: true, ...attributes }),
  );
}

async function accountPage() {
  const pageView = view();
  let me;
  try {
    me = await signedIn();
  } catch (error) {
    if (error.status !== 404) throw error;
    pageView.replaceChildren(el("h1", {}, t("nav.account")), el("p", {}, t("a.noleague")));
    return;
  }
  if (!me) {
    pageView.replaceChildren(
      el("h1", {}, t("nav.account")),
      el("p", {}, t("a.intro")),
      el(
        "div",
        { class: "account-forms" },
        accountForm("sign-up", t("a.signup"), "/api/accounts", true),
        accountForm("sign-in", t("a.signin"), "/api/session", false),
      ),
    );
    return;
  }
  const { versions } = await api("/api/account/bots");
  const bots = [...new Set(versions.map((v) => v.bot))];
  pageView.replaceChildren(
    el("h1", {}, t("a.title", { name: me.name })),
    el(
      "p",
      {},
      el(
        "button",
        {
          type: "button",
          class: "sign-out",
          onclick: async () => {
            await api("/api/session", { method: "DELETE" });
            render();
          },
        },
        t("a.signout"),
      ),
    ),
    el("h2", {}, t("a.bots")),
    bots.length
      ? el(
          "ul",
          { class: "my-bots" },
          ...bots.map((bot) => {
            const latest = versions.filter((v) => v.bot === bot).at(-1);
            return el("li", {}, link(`/bots/${bot}`, bot), " ", stateBadge(latest.state));
          }),
        )
      : el("p", {}, t("a.nobots")),
    uploadForm(),
  );
}

function accountForm(kind, title, path, withInvite) {
  const notice = el("p", { class: "notice", role: "alert" });
  const form = el(
    "form",
    { class: `account-form ${kind}`, "aria-label": title },
    el("h2", {}, title),
    field("name", t("a.name"), { autocomplete: "username", maxlength: 40 }),
    field("password", t("a.password"), {
      type: "password",
      autocomplete: kind === "sign-up" ? "new-password" : "current-password",
    }),
    withInvite ? field("invite", t("a.invite"), { required: false, autocomplete: "off" }) : null,
    el("button", { type: "submit" }, title),
    notice,
  );
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const data = Object.fromEntries(new FormData(form));
    if (!data.invite) delete data.invite;
    try {
      await post(path, data);
      render();
    } catch (error) {
      notice.textContent = t("error", { message: error.message });
    }
  });
  return form;
}

// A file input drawn as a button of the app's own words (the browser's own "Choose File" is
// in the browser's language, not the page's), with what was chosen beside it.
function filePicker(input, label) {
  const chosen = el("span", { class: "chosen", "aria-live": "polite" });
  input.classList.add("visually-hidden");
  input.addEventListener("change", () => {
    chosen.textContent = input.files.length ? t("u.chosen", { n: input.files.length }) : "";
  });
  return el(
    "label",
    { class: "field file-picker" },
    el("span", { class: "button" }, label),
    input,
    chosen,
  );
}

// The bot's folder (read and packed here as a .tar.gz) or a ready archive, sent as it is.
function uploadForm() {
  const notice = el("p", { class: "notice", role: "status" });
  const folder = el("input", { type: "file", name: "folder", webkitdirectory: true });
  const archive = el("input", {
    type: "file",
    name: "archive",
    accept: ".tar.gz,.tgz,application/gzip",
  });
  const form = el(
    "form",
    { class: "upload", "aria-labelledby": "upload-title" },
    el("h2", { id: "upload-title" }, t("u.title")),
    el("p", { class: "help" }, t("u.help")),
    filePicker(folder, t("u.folder")),
    filePicker(archive, t("u.archive")),
    el("button", { type: "submit" }, t("u.send")),
    notice,
  );
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    let body;
    if (archive.files.length) body = archive.files[0];
    else if (folder.files.length) {
      notice.textContent = t("u.packing");
      const files = [];
      for (const file of folder.files) {
        const path = relativePath(file.webkitRelativePath || file.name);
        if (path) files.push({ path, bytes: new Uint8Array(await file.arrayBuffer()) });
      }
      body = await tarGz(files);
    } else {
      notice.textContent = t("u.none");
      return;
    }
    try {
      const { version } = await api("/api/submissions", {
        method: "POST",
        headers: { "Content-Type": "application/gzip" },
        body,
      });
      go(`/bots/${encodeURIComponent(version.bot)}`);
    } catch (error) {
      notice.textContent = t("error", { message: error.message });
    }
  });
  return form;
}

// A version's ladder (rating, matches, counts), when the server plays a ladder; else null.
async function ladderOf(version) {
  try {
    return await api(
      `/api/bots/${encodeURIComponent(version.bot)}/versions/${version.version}/ladder`,
    );
  } catch {
    return null;
  }
}

// Why the ladder is not drawing an active version now (the server's `waiting`: its account
// not active, its pace, too few bots active in a game or too few of them free to play now, its
// bot offline), in the page's language.
function waitingLines(ladder) {
  return ((ladder && ladder.waiting) || []).map((entry) =>
    el("p", { class: "waiting", "data-why": entry.why }, waitingText(entry)),
  );
}

function waitingText(entry) {
  const game = gameWord(entry.game);
  switch (entry.why) {
    case "pace": {
      const until = new Date(entry.until);
      const at = until.toLocaleTimeString(language(), { hour: "2-digit", minute: "2-digit" });
      return t("bot.wait.pace", { n: entry.played_last_hour, pace: entry.pace, at });
    }
    case "bots":
      return t("bot.wait.bots", { game, seats: entry.seats, bots: entry.bots });
    case "others": {
      const words = { game, needed: entry.needed, free: entry.free, pace: entry.pace };
      if (!entry.until) return t("bot.wait.others", words);
      const until = new Date(entry.until);
      const at = until.toLocaleTimeString(language(), { hour: "2-digit", minute: "2-digit" });
      return t("bot.wait.othersUntil", { ...words, at });
    }
    case "offline":
      return t("bot.wait.offline", { game });
    case "account":
      return t(`bot.wait.account.${entry.status}`);
    case "failing": {
      const until = new Date(entry.until);
      const at = until.toLocaleTimeString(language(), { hour: "2-digit", minute: "2-digit" });
      return t("bot.wait.failing", { streak: entry.streak, last: entry.last, at });
    }
    default:
      return entry.reason; // a reason this page does not know yet: the server's own words
  }
}

function ratingLines(ladder) {
  if (!ladder) return [];
  const lines = (ladder.ratings || []).map((r) =>
    el(
      "p",
      { class: "rating", "data-game": r.game },
      `${gameWord(r.game)}: `,
      t("bot.rating", { r: Number(r.conservative).toFixed(1), n: r.matches }),
    ),
  );
  if (!lines.length) lines.push(el("p", { class: "rating" }, t("bot.unrated")));
  const c = ladder.counts;
  if (c)
    lines.push(
      el(
        "p",
        { class: "counts" },
        t("bot.counts", {
          timeouts: c.timeouts,
          illegal: c.illegal_moves,
          crashes: c.crashes,
          defaults: c.defaults,
        }),
      ),
    );
  return lines;
}

async function botPage(bot) {
  const pageView = view();
  let answer;
  try {
    answer = await api(`/api/bots/${encodeURIComponent(bot)}`);
  } catch (error) {
    if (error.status !== 404) throw error;
    pageView.replaceChildren(el("h1", {}, bot), el("p", { role: "alert" }, t("bot.missing")));
    return;
  }
  const me = await signedIn().catch(() => null);
  const mine = me && me.name === answer.owner;
  const ladders = await Promise.all(answer.versions.map(ladderOf));
  const cards = answer.versions.map((version, i) =>
    el(
      "section",
      {
        class: "version",
        "data-version": version.version,
        "data-state": version.state,
        "aria-label": version.label,
      },
      el("h3", {}, version.label),
      el("p", {}, stateBadge(version.state)),
      version.state === "failed" && version.reason
        ? el("pre", { class: "reason-text", lang: "en", translate: "no" }, version.reason)
        : null,
      el(
        "p",
        { class: "when" },
        t("bot.submitted", { at: new Date(version.created_at).toLocaleString(language()) }),
      ),
      ...waitingLines(ladders[i]),
      ...ratingLines(ladders[i]),
      mine || version.owner === (me && me.name)
        ? el("p", {}, link(`/bots/${bot}/v${version.version}`, t("bot.steps")))
        : null,
    ),
  );
  pageView.replaceChildren(
    el("h1", {}, bot),
    el("p", {}, t("bot.owner", { owner: answer.owner })),
    el("h2", {}, t("bot.versions")),
    el("div", { class: "versions" }, ...cards),
    answer.versions.some((v) => IN_GATE.has(v.state))
      ? el("p", { class: "help" }, t("bot.watching"))
      : null,
    mine ? uploadForm() : null,
  );
  followVersions(pageView, answer.versions, ladders, () => {
    if (location.pathname === `/bots/${bot}`) botPage(bot);
  });
}

async function versionPage(bot, which) {
  const pageView = view();
  const number = which.replace(/^v/, "");
  let answer;
  try {
    answer = await api(`/api/bots/${encodeURIComponent(bot)}/versions/${number}`);
  } catch (error) {
    if (error.status !== 403 && error.status !== 401) throw error;
    pageView.replaceChildren(
      el("h1", {}, `${bot} v${number}`),
      el("p", { class: "error forbidden", role: "alert" }, t("v.owner")),
      el("p", {}, link(`/bots/${bot}`, t("bot.all", { bot }))),
    );
    return;
  }
  const { version, steps } = answer;
  const ladder = await ladderOf(version);
  const matches = (ladder && ladder.matches) || [];
  pageView.replaceChildren(
    el("h1", {}, version.label),
    el("p", {}, stateBadge(version.state)),
    ...waitingLines(ladder),
    ...ratingLines(ladder),
    steps.length ? null : el("p", {}, t("step.waiting")),
    ...steps.map((step) =>
      el(
        "section",
        { class: "step", "data-step": step.step, "data-passed": String(step.passed) },
        el("h2", {}, `${t(`step.${step.step}`)}: `, t(step.passed ? "step.passed" : "step.failed")),
        // The tools' own output, in English: data, not the app's words (lang, translate).
        step.output
          ? el("pre", { class: "output", tabindex: 0, lang: "en", translate: "no" }, step.output)
          : el("p", {}, t("step.none")),
      ),
    ),
    ladder && (ladder.history || []).length
      ? el(
          "section",
          { class: "rating-history" },
          el("h2", {}, t("lb.history")),
          historyChart(
            ladder.history.map((h) => ({
              bot: gameWord(h.game),
              conservative: h.mu - 3 * h.sigma,
            })),
            [...new Set(ladder.history.map((h) => gameWord(h.game)))],
          ),
        )
      : null,
    matches.length
      ? el(
          "section",
          { class: "ladder-matches" },
          el("h2", {}, t("v.matches")),
          el(
            "ul",
            {},
            ...matches.map((m) =>
              el(
                "li",
                {},
                link(`/matches/${m.match_id}`, m.match_id),
                m.stderr ? [" · ", el("a", { href: m.stderr }, t("v.stderr"))] : null,
                m.stdout ? [" · ", el("a", { href: m.stdout }, t("v.stdout"))] : null,
              ),
            ),
          ),
        )
      : null,
    el("p", {}, link(`/bots/${bot}`, t("bot.all", { bot }))),
  );
  followVersions(pageView, [version], [ladder], () => {
    if (location.pathname === `/bots/${bot}/${which}`) versionPage(bot, which);
  });
}

// ---- the router --------------------------------------------------------------------------

async function render() {
  for (const stop of leaving) stop();
  leaving = [];
  generation += 1;
  const pageView = view();
  applyDisplay();
  header();
  const parts = location.pathname.split("/").filter(Boolean).map(decodeURIComponent);
  const [page, id] = parts;
  try {
    if (!page || page === "leaderboard")
      await leaderboardPage(id === "bestia" ? "bestia" : "belote");
    else if (page === "matches" && id) await replayPage(id);
    else if (page === "matches") await matchesPage();
    else if (page === "live" && id) liveMatchPage(id);
    else if (page === "live") await livePage();
    else if (page === "play" && id) tablePage(id);
    else if (page === "play") await playPage();
    else if (page === "rules") await rulesPage(id || "belote");
    else if (page === "settings") settingsPage();
    else if (page === "account") await accountPage();
    else if (page === "bots" && id && parts[2]) await versionPage(id, parts[2]);
    else if (page === "bots" && id) await botPage(id);
    else
      pageView.replaceChildren(
        el("h1", {}, t("page.missing")),
        el("p", {}, link("/", t("nav.leaderboard"))),
      );
    if (pageView.current()) document.body.dataset.page = page || "leaderboard";
  } catch (error) {
    pageView.replaceChildren(problem(error));
  }
  if (pageView.current()) document.body.dataset.ready = "true";
}

window.addEventListener("popstate", render);
render();
