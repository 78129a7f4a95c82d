// The table's drawing: the model (model.js) into the page's elements.
import { cardBack, cardSvg, suitMark } from "./cards.js";
import { cardLabel } from "./deck.js";
import { suitWord } from "./format.js";
import { t } from "./i18n.js";
import { TRICK_RADIUS, place, seatRadius } from "./layout.js";

// Draw the table into `root`. options.onCard(card, element) makes the viewer's cards
// clickable; options.illegal maps "SUIT/RANK" to a reason; options.selected is "SUIT/RANK".
export function drawTable(root, model, options = {}) {
  root.replaceChildren();
  root.className = `table game-${model.game}`;
  const felt = document.createElement("div");
  felt.className = "felt";
  root.append(felt);
  for (let seat = 0; seat < model.n; seat += 1) {
    const [x, y] = place(model, seat, seatRadius(model.n));
    const box = document.createElement("div");
    box.className = "seat";
    if (seat === model.toAct) box.classList.add("to-act");
    if (seat === (model.me ?? -1)) box.classList.add("mine");
    box.dataset.seat = String(seat);
    box.style.left = `${x}%`;
    box.style.top = `${y}%`;
    const name = document.createElement("div");
    name.className = "seat-name";
    let label = `${seat} · ${model.names[seat]}`;
    if (model.me !== null && seat === model.me && options.person) label = `${seat} · ${t("t.you")}`;
    if (
      model.game === "belote" &&
      model.me !== null &&
      seat === (model.me + 2) % 4 &&
      options.person
    )
      label += ` (${t("t.partner")})`;
    if (seat === model.dealer) label += " · D";
    if (seat === model.taker) label += ` · ${t("t.taker")}`;
    if (model.game === "bestia" && model.balances.length) label += ` · ${model.balances[seat]}`;
    name.textContent = label;
    const hand = document.createElement("div");
    hand.className = "hand";
    hand.dataset.seat = String(seat);
    const cards = model.hands[seat];
    if (cards) {
      for (const card of cards) {
        const element = cardSvg(model.game, card);
        const key = `${card.suit}/${card.rank}`;
        if (options.illegal && seat === model.me && key in options.illegal) {
          element.classList.add("illegal");
          element.title = t("p.illegal", { why: options.illegal[key] });
        }
        if (options.selected === key && seat === model.me) element.classList.add("selected");
        if (options.onCard && seat === model.me) {
          element.classList.add("playable");
          element.tabIndex = 0;
          element.addEventListener("click", () => options.onCard(card, element));
          element.addEventListener("keydown", (ev) => {
            if (ev.key === "Enter") options.onCard(card, element);
          });
        }
        hand.append(element);
      }
    } else {
      for (let i = 0; i < (model.counts[seat] || 0); i += 1) hand.append(cardBack());
    }
    const won = document.createElement("div");
    won.className = "seat-tricks";
    won.textContent = `${t("t.tricks")}: ${model.tricksWon[seat] || 0}`;
    box.append(name, hand, won);
    felt.append(box);
  }
  const centre = document.createElement("div");
  centre.className = "trick";
  for (const play of model.trick) {
    const [x, y] = place(model, play.seat ?? 0, TRICK_RADIUS);
    const element = cardSvg(model.game, play.card);
    element.style.left = `${x}%`;
    element.style.top = `${y}%`;
    element.dataset.seat = String(play.seat ?? 0);
    centre.append(element);
  }
  if (model.turned) {
    const element = cardSvg(model.game, model.turned);
    element.classList.add("turned");
    element.title = t("t.turned");
    centre.append(element);
  }
  felt.append(centre);
  root.append(tableInfo(model));
}

function tableInfo(model) {
  const info = document.createElement("div");
  info.className = "table-info";
  const line = (label, ...value) => {
    const row = document.createElement("div");
    const name = document.createElement("b");
    name.textContent = `${label}: `;
    row.append(name, ...value);
    info.append(row);
    return row;
  };
  if (model.trump)
    line(
      t("t.trump"),
      suitMark(model.game, model.trump, 18),
      " ",
      suitWord(model.game, model.trump),
    ).className = "trump";
  if (model.game === "belote") {
    const bids = model.bids.map(
      (bid) =>
        `${bid.seat ?? 0}: ${bid.suit ? t("t.take", { suit: suitWord("belote", bid.suit) }) : t("t.pass")}`,
    );
    if (bids.length) line(t("t.bids"), bids.join(", ")).className = "bids";
    if (model.announcements.length) {
      line(
        t("t.belote"),
        model.announcements
          .map(
            (a) =>
              `${a.seat ?? 0}: ${a.announcement === "ANNOUNCEMENT_REBELOTE" ? t("t.rebelote") : t("t.belote")}`,
          )
          .join(", "),
      );
    }
    const scores = model.scores.length ? model.scores : [0, 0];
    line(
      t("t.score"),
      `${t("t.team", { n: 0 })} ${scores[0] ?? 0} – ${scores[1] ?? 0} ${t("t.team", { n: 1 })}`,
    ).className = "scores";
    if (model.cardPoints.length)
      line(t("t.points"), `${model.cardPoints[0] ?? 0} – ${model.cardPoints[1] ?? 0}`);
  } else {
    if (model.pot !== null) line(t("t.pot"), String(model.pot));
    if (model.balances.length)
      line(t("t.balance"), model.balances.join(" · ")).className = "scores";
  }
  if (model.lastTrick.length) {
    const cards = document.createElement("span");
    cards.className = "last-trick";
    cards.textContent = model.lastTrick
      .map((p) => `${p.seat ?? 0}:${cardLabel(model.game, p.card)}`)
      .join("  ");
    line(t("t.lasttrick"), cards);
  }
  return info;
}
