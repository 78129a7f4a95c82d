// The two decks with no DOM: French suits for Belote, Italian suits (coppe, denari, spade,
// bastoni) for Bestia, their ranks, their suit marks as SVG markup, and a card's short text.
// A card value is the canonical JSON of a bisca.v1 Card: {suit: "SUIT_HEARTS", rank: "RANK_TEN"}.

const FRENCH = {
  SUIT_SPADES: { symbol: "♠", colour: "#1b1b1b", word: "spades" },
  SUIT_HEARTS: { symbol: "♥", colour: "#c0182b", word: "hearts" },
  SUIT_DIAMONDS: { symbol: "♦", colour: "#c0182b", word: "diamonds" },
  SUIT_CLUBS: { symbol: "♣", colour: "#1b1b1b", word: "clubs" },
};
const ITALIAN = {
  SUIT_CUPS: { symbol: "coppe", colour: "#b3202a", word: "cups" },
  SUIT_COINS: { symbol: "denari", colour: "#b8860b", word: "coins" },
  SUIT_SWORDS: { symbol: "spade", colour: "#1f4e8c", word: "swords" },
  SUIT_CLUBS: { symbol: "bastoni", colour: "#2e6b30", word: "clubs" },
};
const FRENCH_RANKS = {
  RANK_SEVEN: "7",
  RANK_EIGHT: "8",
  RANK_NINE: "9",
  RANK_TEN: "10",
  RANK_JACK: "J",
  RANK_QUEEN: "Q",
  RANK_KING: "K",
  RANK_ACE: "A",
};
const ITALIAN_RANKS = {
  RANK_TWO: "2",
  RANK_THREE: "3",
  RANK_FOUR: "4",
  RANK_FIVE: "5",
  RANK_SIX: "6",
  RANK_SEVEN: "7",
  RANK_JACK: "F",
  RANK_QUEEN: "C",
  RANK_KING: "R",
  RANK_ACE: "A",
};

// Suit marks, each in a 20x20 box centred on (10, 10).
const MARKS = {
  SUIT_SPADES: (c) =>
    `<path fill="${c}" d="M10 1 C13 6 19 9 19 13 C19 16 15 18 11.5 15.5 L13 19 H7 L8.5 15.5 C5 18 1 16 1 13 C1 9 7 6 10 1Z"/>`,
  SUIT_HEARTS: (c) =>
    `<path fill="${c}" d="M10 18 C6 14 1 11 1 6.5 C1 3.5 3.5 1.5 6 1.5 C8 1.5 9.3 2.8 10 4.3 C10.7 2.8 12 1.5 14 1.5 C16.5 1.5 19 3.5 19 6.5 C19 11 14 14 10 18Z"/>`,
  SUIT_DIAMONDS: (c) => `<path fill="${c}" d="M10 1 L17 10 L10 19 L3 10Z"/>`,
  SUIT_CLUBS_FR: (c) =>
    `<g fill="${c}"><circle cx="10" cy="5.5" r="4.3"/><circle cx="5" cy="11.5" r="4.3"/><circle cx="15" cy="11.5" r="4.3"/><path d="M9 11 H11 L12.5 19 H7.5Z"/></g>`,
  SUIT_CUPS: (c) =>
    `<g fill="${c}"><path d="M3 2 H17 C17 8 14 11 11 11.5 V15 H14 V18 H6 V15 H9 V11.5 C6 11 3 8 3 2Z"/><rect x="4" y="3" width="12" height="1.6" fill="#f6e27a"/></g>`,
  SUIT_COINS: (c) =>
    `<g><circle cx="10" cy="10" r="8.5" fill="${c}"/><circle cx="10" cy="10" r="5.5" fill="#f6e27a"/><circle cx="10" cy="10" r="2.2" fill="${c}"/></g>`,
  SUIT_SWORDS: (c) =>
    `<g fill="${c}"><path d="M10 0.5 L12 4 V14 H8 V4Z"/><rect x="4.5" y="13.5" width="11" height="2"/><rect x="9" y="15.5" width="2" height="3"/><circle cx="10" cy="19" r="1.2"/></g>`,
  SUIT_CLUBS_IT: (c) =>
    `<g fill="${c}"><path d="M7.5 19 L9 3 C9 1 12.5 1 12.5 3 L13 19Z"/><circle cx="8.5" cy="7" r="1.6"/><circle cx="13" cy="10" r="1.6"/><circle cx="8.7" cy="13" r="1.6"/></g>`,
};

export function deckOf(game) {
  return game === "bestia"
    ? {
        suits: ITALIAN,
        ranks: ITALIAN_RANKS,
        mark: (s) => MARKS[s === "SUIT_CLUBS" ? "SUIT_CLUBS_IT" : s],
      }
    : {
        suits: FRENCH,
        ranks: FRENCH_RANKS,
        mark: (s) => MARKS[s === "SUIT_CLUBS" ? "SUIT_CLUBS_FR" : s],
      };
}

// A short text for a card: "10♥" for Belote, "7 coppe" for Bestia.
export function cardLabel(game, card) {
  const deck = deckOf(game);
  const suit = deck.suits[card.suit] || { symbol: "?" };
  const rank = deck.ranks[card.rank] || "?";
  return game === "bestia" ? `${rank} ${suit.symbol}` : `${rank}${suit.symbol}`;
}
