// The table's drawing: the model (model.js) into the page's elements.
import { cardBack, cardSvg, suitMark } from "./cards.js";
import { cardLabel } from "./deck.js";
import { cardName, seatText, suitWord, tableVoice } from "./format.js";
import { t } from "./i18n.js";
import { SCREENS, seatPlace, trickPlace } from "./layout.js";

export const cardKey = (card) => `${card.suit}/${card.rank}`;

// Draw the table into `root`.
// options.person: the viewer is the person at seat model.me (their hand is buttons);
// options.cards: "SUIT/RANK" -> {legal, reason, selected} for the person's hand;
// options.onCard(card): a card of the person's hand was pressed;
// options.keysHelp: the id of the element saying how the hand is played from the keyboard;
// options.onTap(): the felt was tapped, or the held trick's "go on" pressed (a completed trick
// goes on at once).
// Focus inside the person's hand stays on the same card (or its place) across redraws: while
// it is there, the person's seat is updated in place (the focused card is never replaced, so
// a screen reader hears no focus change when another seat plays).
export function drawTable(root, model, options = {}) {
  const focused = document.activeElement;
  const hadFocus = focused && root.contains(focused) && focused.dataset.card;
  const hadNext = focused && root.contains(focused) && focused.classList.contains("trick-next");
  const focusKey = hadFocus ? focused.dataset.card : null;
  const focusIndex = hadFocus ? Number(focused.dataset.index) : -1;
  const shown = hadFocus ? root.querySelector(":scope > .felt") : null;
  root.className = `table game-${model.game} seats-${model.n}`;
  const felt = document.createElement("div");
  felt.className = "felt";
  if (options.onTap)
    felt.addEventListener("click", (ev) => {
      if (!ev.target.closest("button")) options.onTap();
    });
  let handButtons = [];
  // The seats as the person at the table hears them ("your partner"), not the bots' names.
  const voice = options.person ? tableVoice(model.game, model.me ?? 0) : null;
  for (let seat = 0; seat < model.n; seat += 1) {
    const box = document.createElement("div");
    box.className = "seat";
    // A group named for its seat, so a screen reader tells one seat's labels and cards from
    // the next's (its tricks won and the next seat's name were read as one run of text).
    box.setAttribute("role", "group");
    box.setAttribute("aria-label", voice ? voice.who(seat) : seatText(seat, model.names));
    if (seat === model.toAct) box.classList.add("to-act");
    const mine = seat === (model.me ?? -1);
    if (mine) box.classList.add("mine");
    if (model.game === "bestia" && model.inHand.length && model.inHand[seat] === false)
      box.classList.add("out");
    box.dataset.seat = String(seat);
    placeOnEveryScreen(box, (screen) => seatPlace(model, seat, screen));
    const name = document.createElement("div");
    name.className = "seat-name";
    // The seat's roles first, its name last: a label cut short on a phone keeps what matters
    // to the person (partner, dealer, taker, chips), the bot's generated name goes first.
    const roles = [];
    if (mine && options.person) roles.push(t("t.you"));
    else if (
      model.game === "belote" &&
      model.me !== null &&
      seat === (model.me + 2) % 4 &&
      options.person
    )
      roles.push(t("t.partner"));
    if (seat === model.dealer) roles.push(t("t.dealer"));
    if (seat === model.taker) roles.push(t("t.taker"));
    if (model.game === "bestia" && model.balances.length) roles.push(String(model.balances[seat]));
    const who = mine && options.person ? t("t.seat", { n: seat }) : seatText(seat, model.names);
    const label = [...roles, who].join(" · ");
    name.textContent = label;
    name.title = label;
    // At the person's table a seat is heard once, by its place: its group is named so ("your
    // partner"), and its label, which says it again with the bot's generated name (left to the
    // eye), is hidden from a screen reader; the roles it adds (dealer, taker, chips) are said on
    // their own (review 54: "partner · seat 2 (seat2-greedy-99eaa4)" was read, then again as
    // its hand's name).
    let heard = null;
    if (voice) {
      name.setAttribute("aria-hidden", "true");
      const said = roles.filter((role) => role !== t("t.you") && role !== t("t.partner"));
      if (said.length) {
        heard = document.createElement("span");
        heard.className = "visually-hidden";
        heard.textContent = said.join(", ");
      }
    }
    // Another seat's hand: at the person's table its count alone (its seat's group names it).
    const handName = (n) => (voice ? t("t.cards", { n }) : t("t.cardsof", { who: label, n }));
    const hand = document.createElement("div");
    hand.className = "hand";
    hand.dataset.seat = String(seat);
    const cards = model.hands[seat];
    if (cards && mine && options.person && options.cards) {
      hand.setAttribute("role", "group");
      hand.setAttribute("aria-label", t("t.hand"));
      if (options.keysHelp) hand.setAttribute("aria-describedby", options.keysHelp);
      hand.style.setProperty("--n", String(cards.length));
      handButtons = cards.map((card, index) => {
        const key = cardKey(card);
        const info = options.cards[key] || { legal: false };
        const button = cardSvg(model.game, card, "button");
        button.type = "button";
        button.dataset.index = String(index);
        const words = cardName(model.game, card);
        let spoken = info.legal ? t("t.allowed", { card: words }) : words;
        if (info.idle) button.setAttribute("aria-disabled", "true");
        if (!info.legal && info.reason) {
          button.classList.add("illegal");
          button.setAttribute("aria-disabled", "true");
          spoken = t("t.notallowed", { card: words, why: info.reason });
        }
        if (info.selected) {
          button.classList.add("selected");
          button.setAttribute("aria-pressed", "true");
          spoken = t("t.selected", { card: words });
        } else if (info.legal) button.setAttribute("aria-pressed", "false");
        if (info.legal) button.classList.add("playable");
        button.setAttribute("aria-label", spoken);
        button.tabIndex = -1;
        // Read when pressed: a button kept across redraws is given its new `press`.
        button.press = () => options.onCard && options.onCard(card, info);
        button.addEventListener("click", (ev) => ev.currentTarget.press());
        hand.append(button);
        return button;
      });
      hand.addEventListener("keydown", (ev) => moveFocus(ev, [...hand.querySelectorAll("button")]));
    } else if (cards) {
      hand.setAttribute("role", "list");
      hand.setAttribute("aria-label", handName(cards.length));
      for (const card of cards) {
        const element = cardSvg(model.game, card);
        element.setAttribute("role", "listitem");
        hand.append(element);
      }
    } else {
      hand.setAttribute("role", "img");
      hand.setAttribute("aria-label", handName(model.counts[seat] || 0));
      for (let i = 0; i < (model.counts[seat] || 0); i += 1) hand.append(cardBack());
    }
    const won = document.createElement("div");
    won.className = "seat-tricks";
    won.textContent = `${t("t.tricks")}: ${model.tricksWon[seat] || 0}`;
    box.append(...[name, heard, hand, won].filter(Boolean));
    felt.append(box);
  }
  const centre = document.createElement("div");
  centre.className = "trick";
  const plays = model.trick.length ? model.trick : model.held ? model.held.plays : [];
  if (!model.trick.length && model.held) {
    centre.classList.add("complete");
    centre.dataset.winner = String(model.held.winner);
    const caption = document.createElement("div");
    caption.className = "trick-caption";
    caption.textContent = voice
      ? takesText(voice, model.held.winner ?? 0)
      : t("t.takes", { who: seatText(model.held.winner, model.names) });
    if (options.onTap) {
      // A button as well as the felt: a trick held until tapped goes on from the keyboard too.
      const next = document.createElement("button");
      next.type = "button";
      next.className = "trick-next";
      next.textContent = t("t.tap");
      next.addEventListener("click", () => options.onTap());
      // (the dot between them hidden where the button takes a line of its own: style.css)
      const dot = document.createElement("span");
      dot.className = "trick-dot";
      dot.textContent = " · ";
      caption.append(dot, next);
    }
    centre.append(caption);
  }
  // A card of the trick says who played it (a screen reader that missed the announcement can
  // read the trick again).
  for (const play of plays) {
    const element = cardSvg(model.game, play.card);
    const by = voice ? voice.who(play.seat) : seatText(play.seat ?? 0, model.names);
    element.setAttribute(
      "aria-label",
      t("t.playedby", { card: cardName(model.game, play.card), who: by }),
    );
    placeOnEveryScreen(element, (screen) => trickPlace(model, play.seat ?? 0, screen));
    element.dataset.seat = String(play.seat ?? 0);
    if (centre.dataset.winner === String(play.seat ?? 0)) element.classList.add("winner");
    centre.append(element);
  }
  if (model.turned) {
    const element = cardSvg(model.game, model.turned);
    element.classList.add("turned");
    element.title = t("t.turned");
    centre.append(element);
  }
  felt.append(centre);
  const kept = shown && keepSeat(shown, felt);
  if (kept) {
    // Never detached (a detached element loses its focus): only what follows it is replaced.
    while (shown.nextSibling) shown.nextSibling.remove();
    root.append(tableInfo(model, options));
    handButtons = [...kept.querySelectorAll(".hand button")];
  } else root.replaceChildren(felt, tableInfo(model, options));
  // One card of the hand is in the tab order: the focused one, else the selected, else the
  // first that may be played; focus that was in the hand stays there.
  const next = root.querySelector(".trick-next");
  if (!handButtons.length && (hadFocus || hadNext)) {
    // The last card was played: focus stays on the table itself (or its held trick's button).
    root.tabIndex = -1;
    (next || root).focus({ preventScroll: true });
  } else if (hadNext && next) next.focus({ preventScroll: true });
  if (handButtons.length) {
    // A new turn starts on a card that may be played; otherwise focus stays where it was.
    const playable = options.focusHand && handButtons.find((b) => b.classList.contains("playable"));
    const target =
      playable ||
      handButtons.find((b) => b.dataset.card === focusKey) ||
      (focusIndex >= 0 ? handButtons[Math.min(focusIndex, handButtons.length - 1)] : null) ||
      handButtons.find((b) => b.classList.contains("selected")) ||
      handButtons.find((b) => b.classList.contains("playable")) ||
      handButtons[0];
    for (const button of handButtons) button.tabIndex = button === target ? 0 : -1;
    // A new turn scrolls the hand into view (clear of the sticky turn bar: scroll-padding).
    if (options.focusHand) target.focus();
    else if ((hadFocus || (hadNext && !next)) && target !== document.activeElement)
      target.focus({ preventScroll: true });
  }
}

// Where `element` (a seat, a card of the trick) sits on each of layout.js's SCREENS, as the
// custom properties --{screen}-x and --{screen}-y (percent of the felt): the stylesheet places
// it by those of the screen it is on, so a phone turned over or a window resized re-places the
// table at once, without a redraw. `placeOn(screen)`: [x%, y%].
function placeOnEveryScreen(element, placeOn) {
  for (const [name, screen] of Object.entries(SCREENS)) {
    const [x, y] = placeOn(screen);
    element.style.setProperty(`--${name}-x`, `${x}%`);
    element.style.setProperty(`--${name}-y`, `${y}%`);
  }
}

// Who takes the held trick in `voice` (tableVoice): "You take the trick", "Your partner takes
// the trick".
function takesText(voice, winner) {
  if (winner === voice.me) return t("t.takes.you");
  const text = t("t.takes", { who: voice.who(winner) });
  return text.charAt(0).toUpperCase() + text.slice(1);
}

// Move what `fresh` (a felt just drawn) shows into `shown` (the felt on the page) but for the
// person's seat, which is updated in place: its hand's buttons kept by card, so the focused one
// stays focused. Returns the kept seat, or null when there is none to keep (all is replaced).
function keepSeat(shown, fresh) {
  const seat = shown.querySelector(".seat.mine");
  const drawn = fresh.querySelector(".seat.mine");
  const hand = seat && seat.querySelector(".hand[role=group]");
  const drawnHand = drawn && drawn.querySelector(".hand[role=group]");
  if (!hand || !drawnHand || seat.dataset.seat !== drawn.dataset.seat) return null;
  for (const child of [...shown.children]) if (child !== seat) child.remove();
  let before = true;
  for (const child of [...fresh.children]) {
    if (child === drawn) before = false;
    else if (before) shown.insertBefore(child, seat);
    else shown.append(child);
  }
  seat.className = drawn.className;
  seat.style.cssText = drawn.style.cssText;
  seat.setAttribute("aria-label", drawn.getAttribute("aria-label"));
  for (const child of [...seat.children]) if (child !== hand) child.remove();
  const parts = [...drawn.children];
  const at = parts.indexOf(drawnHand);
  for (const part of parts.slice(0, at)) seat.insertBefore(part, hand);
  for (const part of parts.slice(at + 1)) seat.append(part);
  keepButtons(hand, drawnHand);
  return seat;
}

// The buttons of `hand` (the person's cards, or the bids: keyed by `data-{key}`) as `drawn`
// has them, those already shown kept (their attributes and `press` taken from the drawn one),
// the others added or removed.
export function keepButtons(hand, drawn, key = "card") {
  const old = new Map([...hand.querySelectorAll("button")].map((b) => [b.dataset[key], b]));
  for (const name of ["style", "aria-label", "aria-describedby"])
    if (drawn.hasAttribute(name)) hand.setAttribute(name, drawn.getAttribute(name));
  const buttons = [...drawn.querySelectorAll("button")].map((button) => {
    const kept = old.get(button.dataset[key]);
    if (!kept) return button;
    old.delete(button.dataset[key]);
    for (const { name } of [...kept.attributes])
      if (!button.hasAttribute(name)) kept.removeAttribute(name);
    for (const { name, value } of [...button.attributes]) kept.setAttribute(name, value);
    kept.press = button.press;
    return kept;
  });
  for (const gone of old.values()) gone.remove();
  // In order, moving only what is out of place (a focused button is never moved).
  buttons.forEach((button, index) => {
    if (hand.children[index] !== button) hand.insertBefore(button, hand.children[index] || null);
  });
}

// Arrow keys move between the cards of the hand (Home, End: the first, the last).
function moveFocus(ev, buttons) {
  const index = buttons.indexOf(document.activeElement);
  if (index < 0) return;
  const moves = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };
  let next = null;
  if (ev.key in moves) next = (index + moves[ev.key] + buttons.length) % buttons.length;
  else if (ev.key === "Home") next = 0;
  else if (ev.key === "End") next = buttons.length - 1;
  if (next === null) return;
  ev.preventDefault();
  buttons[index].tabIndex = -1;
  buttons[next].tabIndex = 0;
  buttons[next].focus();
}

function tableInfo(model, options) {
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
  if (model.game === "bestia" && model.phase && !model.over)
    line(t("t.phase"), t(`phase.${model.phase}`)).className = "phase";
  if (model.trump)
    line(
      t(model.game === "bestia" ? "t.briscola" : "t.trump"),
      suitMark(model.game, model.trump, 18),
      " ",
      suitWord(model.game, model.trump),
    ).className = "trump";
  // At the person's table the seats are named as everywhere else there, by their place ("your
  // partner", "you"), and the cards in words: these lines are where a screen reader reviews the
  // bids and the last trick once their announcements are said (review 53: "1:A♠ 2:9♦" was read
  // as numbers and symbols). Elsewhere (live, replay) they stay compact: seat numbers, symbols.
  const voice = options.person ? tableVoice(model.game, model.me ?? 0) : null;
  const who = (seat) =>
    !voice ? String(seat ?? 0) : (seat ?? 0) === voice.me ? t("t.you") : voice.who(seat);
  if (model.game === "belote") {
    const bids = model.bids.map(
      (bid) =>
        `${who(bid.seat)}: ${bid.suit ? t("t.take", { suit: suitWord("belote", bid.suit) }) : t("t.pass")}`,
    );
    if (bids.length) line(t("t.bids"), bids.join(", ")).className = "bids";
    if (model.announcements.length) {
      line(
        t("t.belote"),
        model.announcements
          .map(
            (a) =>
              `${who(a.seat)}: ${a.announcement === "ANNOUNCEMENT_REBELOTE" ? t("t.rebelote") : t("t.belote")}`,
          )
          .join(", "),
      );
    }
    const scores = model.scores.length ? model.scores : [0, 0];
    // At the person's table, the person's team first and named so (whichever seat it has).
    const ours = options.person && model.me !== null ? model.me % 2 : 0;
    const [us, them] = options.person
      ? [t("t.yourteam"), t("t.opponents")]
      : [t("t.team", { n: 0 }), t("t.team", { n: 1 })];
    line(t("t.score"), `${us} ${scores[ours] ?? 0} – ${scores[1 - ours] ?? 0} ${them}`).className =
      "scores";
    if (model.cardPoints.length)
      line(t("t.points"), `${model.cardPoints[ours] ?? 0} – ${model.cardPoints[1 - ours] ?? 0}`);
  } else {
    if (model.pot !== null && !model.over) line(t("t.pot"), String(model.pot)).className = "pot";
    if (model.balances.length)
      line(t("t.balance"), model.balances.join(" · ")).className = "scores";
  }
  if (model.lastTrick.length) {
    const cards = document.createElement("span");
    cards.className = "last-trick";
    cards.textContent = voice
      ? model.lastTrick.map((p) => `${who(p.seat)}: ${cardName(model.game, p.card)}`).join(", ")
      : model.lastTrick.map((p) => `${p.seat ?? 0}:${cardLabel(model.game, p.card)}`).join("  ");
    line(t("t.lasttrick"), cards);
  }
  return info;
}
