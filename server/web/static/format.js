// Actions and events as the words of a line of text, with no DOM.
import { cardLabel } from "./deck.js";
import { t } from "./i18n.js";
import { oneof } from "./model.js";

export function suitWord(game, suit) {
  return t(game === "bestia" && suit === "SUIT_CLUBS" ? "suit.SUIT_CLUBS.bestia" : `suit.${suit}`);
}

export function actionText(game, action) {
  const [, inner] = oneof(action);
  const [kind, value] = oneof(inner);
  switch (kind) {
    case "playCard":
      return cardLabel(game, value.card);
    case "pass":
      return t("t.pass");
    case "take":
      return t("t.take", { suit: suitWord(game, value.suit) });
    case "exchange":
      return `exchange ${(value.discards || []).map((c) => cardLabel(game, c)).join(" ") || "—"}`;
    case "discard":
      return `discard ${cardLabel(game, value.card)}`;
    default:
      return kind;
  }
}

export function eventText(game, event) {
  const [, inner] = oneof(event);
  const [kind, e] = oneof(inner);
  const seat = (n) => `${t("r.seat", { n: n ?? 0, bot: "" }).replace(" ()", "")}`;
  switch (kind) {
    case "dealStarted":
      return `— deal ${e.dealNumber ?? 0} (${t("t.dealer")}: ${seat(e.dealer)}) —`;
    case "handStarted":
      return `— hand ${e.handNumber ?? 0} (${t("t.dealer")}: ${seat(e.dealer)}) —`;
    case "cardsDealt":
      return `${seat(e.seat)}: ${(e.cards || []).map((c) => cardLabel(game, c)).join(" ")}`;
    case "cardTurned":
      return `${t("t.turned")}: ${cardLabel(game, e.card)}`;
    case "trumpTurned":
      return `${t("t.trump")}: ${cardLabel(game, e.card)}`;
    case "bidMade":
      return `${seat(e.seat)}: ${e.suit ? t("t.take", { suit: suitWord(game, e.suit) }) : t("t.pass")}`;
    case "cardPlayed":
      return `${seat(e.seat)}: ${cardLabel(game, e.card)}`;
    case "beloteAnnounced":
      return `${seat(e.seat)}: ${e.announcement === "ANNOUNCEMENT_REBELOTE" ? t("t.rebelote") : t("t.belote")}`;
    case "trickWon":
      return `${t("r.trick")} ${(e.trickNumber ?? 0) + 1} → ${seat(e.winner)}${e.points !== undefined ? ` (${e.points})` : ""}`;
    case "dealScored":
      return `${t("t.score")}: ${(e.matchScores || []).join(" – ")}`;
    case "matchEnded":
      return t("r.end");
    default:
      return `${kind} ${JSON.stringify(e)}`;
  }
}
