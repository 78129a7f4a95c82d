// Cards drawn as SVG elements (the decks themselves are in deck.js). No fonts or images are
// needed: every suit is a path drawn there.
import { deckOf } from "./deck.js";
import { cardName } from "./format.js";

const SVG = "http://www.w3.org/2000/svg";

export function suitMark(game, suit, size = 16) {
  const deck = deckOf(game);
  const info = deck.suits[suit];
  const span = document.createElement("span");
  span.className = "suit-mark";
  if (!info) return span;
  span.innerHTML = `<svg xmlns="${SVG}" viewBox="0 0 20 20" width="${size}" height="${size}" aria-hidden="true">${deck.mark(suit)(info.colour)}</svg>`;
  span.title = info.word;
  span.setAttribute("aria-hidden", "true");
  return span;
}

// One card as an SVG element (60 x 90), face up; cardBack() for a hidden one.
// `tag`: "span" (a picture, named in words) or "button" (a card of the person's hand, whose
// name the caller gives).
export function cardSvg(game, card, tag = "span") {
  const deck = deckOf(game);
  const info = deck.suits[card.suit] || { colour: "#555" };
  const rank = deck.ranks[card.rank] || "?";
  const mark = deck.mark(card.suit);
  const m = mark ? mark(info.colour) : "";
  const centre =
    game === "bestia"
      ? `<g transform="translate(14 26) scale(1.6)">${m}</g>`
      : `<g transform="translate(15 27) scale(1.5)">${m}</g>`;
  const face = ["RANK_JACK", "RANK_QUEEN", "RANK_KING"].includes(card.rank)
    ? `<rect x="11" y="20" width="38" height="50" rx="4" fill="none" stroke="${info.colour}" stroke-width="1" opacity="0.5"/>`
    : "";
  const svg = `<svg xmlns="${SVG}" viewBox="0 0 60 90" class="card-svg" aria-hidden="true">
    <rect x="0.5" y="0.5" width="59" height="89" rx="6" fill="#fffdf6" stroke="#777"/>
    ${face}
    <text x="5" y="15" font-size="13" font-weight="700" font-family="sans-serif" fill="${info.colour}">${rank}</text>
    <g transform="translate(4 18) scale(0.55)">${m}</g>
    ${centre}
    <g transform="rotate(180 30 45)"><text x="5" y="15" font-size="13" font-weight="700" font-family="sans-serif" fill="${info.colour}">${rank}</text></g>
  </svg>`;
  const holder = document.createElement(tag);
  holder.className = "card";
  holder.innerHTML = svg;
  holder.dataset.card = `${card.suit}/${card.rank}`;
  if (tag === "span") {
    holder.setAttribute("role", "img");
    holder.setAttribute("aria-label", cardName(game, card));
  }
  return holder;
}

export function cardBack() {
  const holder = document.createElement("span");
  holder.className = "card back";
  holder.innerHTML = `<svg xmlns="${SVG}" viewBox="0 0 60 90" class="card-svg" aria-hidden="true">
    <rect x="0.5" y="0.5" width="59" height="89" rx="6" fill="#24457a" stroke="#777"/>
    <rect x="6" y="6" width="48" height="78" rx="4" fill="none" stroke="#d9c27a" stroke-width="1.5"/>
    <path d="M30 14 L46 45 L30 76 L14 45Z" fill="none" stroke="#d9c27a" stroke-width="1.2"/></svg>`;
  return holder;
}

// The legend of a game's suits, as a list element.
export function suitLegend(game, words) {
  const deck = deckOf(game);
  const list = document.createElement("ul");
  list.className = "legend";
  for (const suit of Object.keys(deck.suits)) {
    const item = document.createElement("li");
    item.append(suitMark(game, suit, 18), " ", words(suit));
    list.append(item);
  }
  return list;
}
