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

// "belote" for the enum name "GAME_BELOTE" (an empty name: "").
export function gameName(enumName) {
  return (enumName || "").replace("GAME_", "").toLowerCase();
}

// A number with its sign, to `digits` decimals: "+1.5", "-0.3".
export function signed(x, digits) {
  return `${x >= 0 ? "+" : ""}${x.toFixed(digits)}`;
}

// A mean result, with its 95% confidence interval when there is one: "+1.5 ± 0.5  [+1.0, +2.0]".
export function meanText(mean, half) {
  if (half === undefined || half === null) return signed(mean, 1);
  return `${signed(mean, 1)} ± ${half.toFixed(1)}  [${signed(mean - half, 1)}, ${signed(mean + half, 1)}]`;
}

// A match's result in a line: the teams' scores for Belote, each seat's for Bestia; the
// reason when there is no result (a failed match).
export function resultText(info) {
  const results = info.results || [];
  if (!results.length) return info.reason || "";
  const game = gameName(info.game);
  if (game === "belote") {
    const team = (s) => (results.find((r) => r.seat % 2 === s) || { score: 0 }).score;
    return `${team(0)} – ${team(1)}`;
  }
  return results.map((r) => `${r.seat}:${r.score}`).join(" ");
}

// A Belote deal's end in a line: card points, Belote points, whether the contract was made.
export function dealSummary(deal) {
  const points = `${t("t.points")}: ${(deal.cardPoints || []).join(" – ")}`;
  const belote = `${t("t.belote")}: ${(deal.belotePoints || []).join(" – ")}`;
  const contract = t("p.contract", { made: deal.contractMade ? t("p.made") : t("p.failed") });
  return `${points} · ${belote} · ${contract}${deal.capot ? ` · ${t("p.capot")}` : ""}`;
}

// How long a decision took and the bank it left (the log counts microseconds).
export function decisionTiming(decision) {
  const took = t("r.took", { ms: Math.round(Number(decision.usedUs) / 1000) });
  const bank = t("r.bank", { s: (Number(decision.bankLeftUs) / 1e6).toFixed(1) });
  return `${took}, ${bank}`;
}
