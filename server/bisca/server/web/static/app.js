// The browser app: one page, its views chosen by the path (deep links work: the server answers
// this page for every path of the app). Everything is read from the JSON API (docs/web.md).
import { suitLegend } from "./cards.js";
import {
  actionText,
  dealSummary,
  decisionTiming,
  eventText,
  gameName,
  meanText,
  resultText,
  signed,
  suitWord,
} from "./format.js";
import { language, t } from "./i18n.js";
import { TableModel, oneof, sameCard } from "./model.js";
import { drawTable } from "./table.js";

// The view's element, whose replaceChildren drops the parts a page leaves out (null).
const view = () => {
  const root = document.getElementById("view");
  return {
    replaceChildren: (...children) =>
      root.replaceChildren(...children.filter((c) => c !== null && c !== undefined)),
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

const DISPLAY_DEFAULTS = { contrast: "normal", grain: "off", temperature: "neutral" };

function display() {
  try {
    return { ...DISPLAY_DEFAULTS, ...JSON.parse(localStorage.getItem("bisca.display") || "{}") };
  } catch {
    return { ...DISPLAY_DEFAULTS };
  }
}

function applyDisplay() {
  const settings = display();
  const root = document.documentElement;
  root.dataset.contrast = settings.contrast;
  root.dataset.grain = settings.grain;
  root.dataset.temperature = settings.temperature;
  root.lang = language();
}

function header() {
  const nav = document.getElementById("nav");
  nav.replaceChildren(
    link("/leaderboard/belote", t("nav.leaderboard")),
    link("/matches", t("nav.matches")),
    link("/live", t("nav.live")),
    link("/play", t("nav.play")),
    link("/rules/belote", t("nav.rules")),
    link("/settings", t("nav.settings")),
    el(
      "span",
      { class: "languages" },
      ...["it", "en"].map((code) =>
        el(
          "button",
          {
            type: "button",
            class: code === language() ? "on" : "",
            "data-language": code,
            onclick: () => {
              localStorage.setItem("bisca.language", code);
              render();
            },
          },
          code.toUpperCase(),
        ),
      ),
    ),
  );
}

// ---- leaderboards ------------------------------------------------------------------------

async function leaderboardPage(game) {
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
        : el("tr", {}, el("td", { colspan: 11 }, t("lb.empty", { game: gameWord(game) }))),
    ),
  );
  view().replaceChildren(
    el("h1", {}, t("lb.title", { game: gameWord(game) })),
    tabs,
    el("div", { class: "scroll" }, table),
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
  view().replaceChildren(
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
  let doc;
  try {
    doc = await api(`/api/matches/${encodeURIComponent(matchId)}/replay`);
  } catch (error) {
    if (error.status === 409) {
      view().replaceChildren(
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
    { name: "trick" },
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
    if (state.timer) clearInterval(state.timer);
    state.timer = null;
    playButton.textContent = t("r.play");
  };
  leaving.push(stop);
  const controls = el(
    "div",
    { class: "controls" },
    el("button", { type: "button", class: "first", onclick: () => move(0) }, t("r.first")),
    el(
      "button",
      { type: "button", class: "back", onclick: () => move(state.step - 1) },
      t("r.back"),
    ),
    el(
      "button",
      { type: "button", class: "forward", onclick: () => move(state.step + 1) },
      t("r.forward"),
    ),
    el(
      "button",
      { type: "button", class: "last", onclick: () => move(frames.length - 1) },
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
  const start = () => {
    playButton.textContent = t("r.pause");
    state.timer = setInterval(() => {
      if (state.step >= frames.length - 1) stop();
      else move(state.step + 1);
    }, state.speed);
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
    drawTable(tableRoot, model);
    tableRoot.dataset.step = String(state.step);
    side.replaceChildren(
      decisionPanel(game, decision, state.seat),
      eventsPanel(game, frame.events, state.seat),
    );
  }
  view().replaceChildren(
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

function eventsPanel(game, events, seat) {
  const list = el("ul", { class: "events" });
  for (const watched of events) {
    const audience = watched.audience ?? 0;
    if (seat !== null && !((audience >> seat) & 1)) continue;
    list.append(
      el("li", {}, eventText(game, watched.event), audience === 0 ? ` [${t("r.hidden")}]` : ""),
    );
  }
  return el("section", {}, el("h3", {}, t("r.events")), list);
}

// ---- live --------------------------------------------------------------------------------

async function livePage() {
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
        queue.length
          ? el("p", {}, `${t("live.queue")}: ${queue.map((q) => q.botName).join(", ")}`)
          : null,
      );
    } catch (error) {
      list.replaceChildren(problem(error));
    }
  };
  await refresh();
  const timer = setInterval(refresh, 2000);
  leaving.push(() => clearInterval(timer));
  view().replaceChildren(el("h1", {}, t("live.title")), list);
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
    socket.onmessage = (message) => {
      const frame = JSON.parse(message.data);
      if (frame.error) {
        status.textContent = t("error", { message: frame.error });
        return;
      }
      const update = frame.update;
      updates += 1;
      if (update.start) {
        game = gameName(update.start.game);
        model = new TableModel(
          game,
          (update.start.seats || []).map((s) => s.botName),
          null,
        );
      } else if (update.events && model) {
        for (const watched of update.events.events || []) {
          model.apply(watched);
          events.prepend(el("li", {}, eventText(game, watched.event)));
        }
        tableRoot.dataset.afterStep = String(update.events.afterStep ?? 0);
      } else if (update.end) {
        status.dataset.over = "true";
      }
      if (model) drawTable(tableRoot, model);
      tableRoot.dataset.updates = String(updates);
      const counted = t("live.updates", { n: updates });
      const ended = update.end
        ? ` · ${t("live.over")} ${resultText({ game: `GAME_${game.toUpperCase()}`, results: update.end.seats })}`
        : "";
      status.textContent = `${counted}${ended}`;
    };
  };
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
      el("section", {}, el("h3", {}, t("r.events")), events),
    ),
  );
}

// ---- a seat at the table -----------------------------------------------------------------

async function playPage() {
  const info = await api("/api/info");
  if (!info.arena) {
    view().replaceChildren(el("h1", {}, t("p.title")), el("p", {}, t("p.noarena")));
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
      "rounds ",
      el("input", { type: "number", name: "rounds", min: 1, max: 4, value: 1 }),
    ),
  );
  gameSelect.addEventListener("change", () => {
    belote.hidden = gameSelect.value !== "belote";
    bestia.hidden = gameSelect.value !== "bestia";
  });
  const message = el("p", { class: "message" });
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
          const table = await api("/api/tables", {
            method: "POST",
            headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ request }),
          });
          sessionStorage.setItem(`bisca.table.${table.table}`, table.token);
          go(`/play/${table.table}`);
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
  view().replaceChildren(
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

function tablePage(tableId) {
  const token = sessionStorage.getItem(`bisca.table.${tableId}`);
  if (!token) {
    view().replaceChildren(el("h1", {}, t("p.title")), el("p", {}, t("p.gone")));
    return;
  }
  const tableRoot = el("div", { class: "table" });
  const prompt = el("p", { class: "prompt", "aria-live": "polite" });
  const notice = el("p", { class: "notice", "aria-live": "assertive" });
  const clock = el("span", { class: "clock" });
  const actions = el("div", { class: "actions" });
  const confirm = el(
    "button",
    { type: "button", class: "confirm", disabled: true },
    t("p.confirm"),
  );
  const result = el("section", { class: "result", hidden: true });
  const state = {
    summary: null,
    game: "belote",
    names: [],
    seat: 0,
    model: null,
    request: null,
    illegal: {},
    selected: null,
    deadline: null,
    over: false,
  };
  const socket = new WebSocket(socketUrl(`/api/tables/${encodeURIComponent(tableId)}/play`));
  leaving.push(() => socket.close());
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
  }, 250);
  leaving.push(() => clearInterval(tick));

  const redraw = () => {
    if (!state.model) return;
    const mine = state.request !== null;
    drawTable(tableRoot, state.model, {
      person: true,
      illegal: state.illegal,
      selected: state.selected && state.selected.key,
      onCard: mine ? (card) => choose({ key: `${card.suit}/${card.rank}`, card }) : null,
    });
    tableRoot.dataset.request = mine ? `${state.request.requestId}:${state.request.attempt}` : "";
    actions.replaceChildren();
    if (!mine) return;
    for (const action of state.request.legalActions || []) {
      const [, inner] = oneof(action);
      const [kind] = oneof(inner);
      if (kind === "playCard") continue;
      const key = JSON.stringify(action);
      actions.append(
        el(
          "button",
          {
            type: "button",
            class: `bid${state.selected && state.selected.key === key ? " selected" : ""}`,
            "data-action": kind,
            onclick: () => choose({ key, action }),
          },
          actionText(state.game, action),
        ),
      );
    }
  };
  const choose = (choice) => {
    if (choice.card) {
      const legal = (state.request.legalActions || []).find((a) => {
        const [, inner] = oneof(a);
        const [kind, v] = oneof(inner);
        return kind === "playCard" && sameCard(v.card, choice.card);
      });
      choice.action = legal || { [state.game]: { playCard: { card: choice.card } } };
      notice.textContent =
        choice.key in state.illegal ? t("p.illegal", { why: state.illegal[choice.key] }) : "";
    } else notice.textContent = "";
    state.selected = choice;
    confirm.disabled = false;
    redraw();
  };
  confirm.addEventListener("click", () => {
    if (!state.selected || !state.request) return;
    socket.send(
      JSON.stringify({
        reply: { requestId: state.request.requestId, action: state.selected.action },
      }),
    );
    confirm.disabled = true;
  });
  const finish = (ended) => {
    state.over = true;
    state.request = null;
    state.deadline = null;
    const seats = ended.seats || [];
    const mine = seats.find((s) => (s.seat ?? 0) === state.seat) || { score: 0 };
    result.hidden = false;
    const lines = [];
    if (state.game === "belote") {
      const other = seats.find((s) => (s.seat ?? 0) % 2 !== state.seat % 2) || { score: 0 };
      const a = Number(mine.score),
        b = Number(other.score);
      lines.push(
        el(
          "p",
          { class: "verdict-line" },
          a > b ? t("p.won", { a, b }) : a < b ? t("p.lost", { a, b }) : t("p.drawn", { a, b }),
        ),
      );
      const deal = state.model && state.model.lastDeal;
      if (deal && !deal.void) lines.push(el("p", {}, dealSummary(deal)));
    }
    lines.push(
      el(
        "ul",
        {},
        ...seats.map((s) => el("li", {}, t("p.result", { n: s.seat ?? 0, score: s.score }))),
      ),
    );
    result.replaceChildren(
      el("h2", {}, t("p.over")),
      ...lines,
      el(
        "p",
        {},
        link(`/matches/${state.summary.matchId}`, t("p.replay")),
        " · ",
        link("/play", t("p.again")),
      ),
    );
    prompt.textContent = t("p.over");
    redraw();
  };
  socket.onopen = () => socket.send(JSON.stringify({ token }));
  socket.onmessage = (message) => {
    const frame = JSON.parse(message.data);
    if (frame.error) {
      notice.textContent = t("error", { message: frame.error });
      return;
    }
    if (frame.table) {
      state.summary = frame.table;
      state.game = frame.table.game;
      state.seat = frame.table.seat;
      state.names = frame.table.seats;
      if (!state.model) {
        state.model = new TableModel(state.game, state.names, state.seat);
        prompt.textContent = t("p.waiting");
      }
      tableRoot.dataset.status = frame.table.status;
      tableRoot.dataset.match = frame.table.matchId;
      return;
    }
    if (frame.illegal) {
      if (state.request && frame.illegal.requestId === state.request.requestId) {
        state.illegal = Object.fromEntries(
          (frame.illegal.actions || []).map((x) => {
            const [, inner] = oneof(x.action);
            return [`${inner.playCard.card.suit}/${inner.playCard.card.rank}`, x.reason];
          }),
        );
        redraw();
      }
      return;
    }
    const [kind, body] = oneof(frame.server);
    if (kind === "matchStarted") {
      state.model = new TableModel(state.game, state.names, state.seat);
      prompt.textContent = t("p.wait", { n: "…" });
    } else if (kind === "events") {
      // Events only come once the open request was answered (the match waits for it).
      state.request = null;
      state.selected = null;
      state.illegal = {};
      for (const event of body.events || []) state.model.apply({ event });
      prompt.textContent = state.model.toAct === null ? "" : t("p.wait", { n: state.model.toAct });
    } else if (kind === "actionRequest") {
      const fresh = !state.request || state.request.requestId !== body.requestId;
      state.request = body;
      if (fresh) {
        state.selected = null;
        state.illegal = {};
        notice.textContent = "";
      }
      state.model = new TableModel(state.game, state.names, state.seat).observe(
        body.observation,
        state.seat,
      );
      state.deadline = {
        move: Date.now() + Number(body.clock.moveMs),
        bank: Number(body.clock.bankMs),
      };
      prompt.textContent = `${t("p.yourturn")} — ${t("p.select")}`;
      confirm.disabled = !state.selected;
    } else if (kind === "actionRejected") {
      notice.textContent = t("p.refused", { why: body.message, n: body.attemptsLeft });
      notice.classList.add("refused");
      state.selected = null;
    } else if (kind === "matchEnded") {
      finish(body);
      return;
    } else if (kind === "error") {
      notice.textContent = t("error", { message: body.message });
    }
    redraw();
  };
  socket.onclose = () => {
    if (!state.over) prompt.textContent = t("p.gone");
  };
  view().replaceChildren(
    el("h1", {}, t("p.title")),
    el(
      "div",
      { class: "board" },
      tableRoot,
      el(
        "section",
        { class: "side" },
        prompt,
        clock,
        notice,
        actions,
        confirm,
        result,
        el(
          "p",
          {},
          link(
            `/rules/${location.pathname.includes("bestia") ? "bestia" : "belote"}`,
            t("nav.rules"),
          ),
        ),
      ),
    ),
  );
}

// ---- rules and display ---------------------------------------------------------------------

async function rulesPage(game) {
  const response = await fetch(`/static/rules/${game}.${language()}.html`);
  if (!response.ok) throw new Error(`${game}: ${response.statusText}`);
  const article = el("article", { class: "rules" });
  article.innerHTML = await response.text();
  view().replaceChildren(
    el(
      "p",
      { class: "tabs" },
      link("/rules/belote", gameWord("belote")),
      link("/rules/bestia", gameWord("bestia")),
    ),
    article,
    el(
      "section",
      { class: "legend-box" },
      el("h3", {}, t("legend")),
      suitLegend(game, (s) => suitWord(game, s)),
    ),
  );
}

function settingsPage() {
  const settings = display();
  const choice = (name, options) =>
    el(
      "fieldset",
      {},
      el("legend", {}, t(`s.${name}`)),
      ...options.map((value) =>
        el(
          "label",
          {},
          el("input", {
            type: "radio",
            name,
            value,
            checked: settings[name] === value,
            onchange: () => {
              localStorage.setItem(
                "bisca.display",
                JSON.stringify({ ...display(), [name]: value }),
              );
              applyDisplay();
            },
          }),
          ` ${t(`s.${value}`)}`,
        ),
      ),
    );
  view().replaceChildren(
    el("h1", {}, t("s.title")),
    choice("contrast", ["normal", "high"]),
    choice("grain", ["off", "low", "high"]),
    choice("temperature", ["cool", "neutral", "warm"]),
  );
}

// ---- the router --------------------------------------------------------------------------

async function render() {
  for (const stop of leaving) stop();
  leaving = [];
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
    else if (page === "rules") await rulesPage(id === "bestia" ? "bestia" : "belote");
    else if (page === "settings") settingsPage();
    document.body.dataset.page = page || "leaderboard";
  } catch (error) {
    view().replaceChildren(problem(error));
  }
  document.body.dataset.ready = "true";
}

window.addEventListener("popstate", render);
render();
