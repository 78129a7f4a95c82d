// Where things sit on the drawn table, in percent of the felt, with no DOM.

// The radii [x%, y%] of the ring of seats: a little narrower with four players than with more.
export function seatRadius(players) {
  return players === 4 ? [36, 38] : [38, 40];
}

// The radii of the ring of cards in the trick, in the middle of the felt.
export const TRICK_RADIUS = [13, 15];

// The screens the felt is drawn on, each a media query of the stylesheet (style.css, where a
// seat and a card of the trick sit): `wide` (any other), `narrow` (at most 720 px wide: a
// phone, its seats on a narrower ring), `upright` (a phone held upright) and `short` (a
// landscape screen at most 600 px tall: a phone on its side, whatever its width). Every seat
// and card is given its place on each and the stylesheet picks the screen's: a phone turned
// over, or a window resized, re-places them at once, with no redraw.
export const SCREENS = {
  wide: {},
  narrow: { narrow: true },
  upright: { narrow: true, upright: true },
  short: { short: true },
};

// On a phone held upright (a tall, narrow felt) six or seven seats on a ring put the viewer's
// neighbours on the viewer's hand, which spans the felt, and the seats across the table on
// each other's labels: they sit in two columns and across the top instead. [x%, y%] from the
// viewer's seat (at the bottom), clockwise on the screen (the viewer's left first).
export const UPRIGHT_PLACES = {
  6: [
    [50, 90],
    [17, 64],
    [17, 37],
    [50, 11],
    [83, 37],
    [83, 64],
  ],
  7: [
    [50, 90],
    [17, 64],
    [17, 37],
    [33, 11],
    [67, 11],
    [83, 37],
    [83, 64],
  ],
};

// On a short landscape screen (a phone on its side) the felt is hardly taller than four seats'
// labels (a name over a row of cards) and the viewer's seat is wide (its name and cards side
// by side, on the felt's bottom edge): six or seven seats on a ring put the viewer's
// neighbours on the viewer's name and cards, and the two seats across the table on each
// other's names. They sit in a column each side, clear of the trick and above the viewer's
// seat, and across the top; seven seats' three rows a seat's height apart (a name over a row of
// cards, 27 % of a 320 px phone's felt: on the live page, where every seat holds cards, seat
// 2's name lay under seat 3's cards, review 50), the top two wide apart. As UPRIGHT_PLACES (the
// stylesheet sets the viewer's own place).
export const SHORT_PLACES = {
  6: [
    [50, 90],
    [16, 64],
    [16, 30],
    [50, 12],
    [84, 30],
    [84, 64],
  ],
  7: [
    [50, 90],
    [16, 65],
    [16, 38],
    [30, 11],
    [70, 11],
    [84, 38],
    [84, 65],
  ],
};

// The trick's ring on a phone held upright: narrower, so the cards beside the middle stay clear
// of the labels of the seats at the felt's sides (the felt is hardly wider than the trick and
// those two labels).
export const UPRIGHT_TRICK_RADIUS = [9, 15];

// Where seat `seat` sits around the table, the viewer's seat at the bottom: [x%, y%].
export function place(model, seat, radius) {
  const k = fromViewer(model, seat);
  const angle = Math.PI / 2 + (k * 2 * Math.PI) / model.n;
  return [50 + radius[0] * Math.cos(angle), 50 + radius[1] * Math.sin(angle)];
}

// How many places clockwise from the viewer's seat (model.me; seat 0 when nobody's) `seat` is.
function fromViewer(model, seat) {
  return (seat - (model.me ?? 0) + model.n) % model.n;
}

// The ring of seats on a screen: `narrow` (a phone) a little narrower, so the seats' labels
// stay on the felt.
function ringOn(players, screen) {
  const [x, y] = seatRadius(players);
  return screen.narrow ? [x - 4, y] : [x, y];
}

// Where seat `seat` sits on the felt drawn on `screen` (one of SCREENS): [x%, y%].
export function seatPlace(model, seat, screen = {}) {
  const fixed =
    (screen.upright && UPRIGHT_PLACES[model.n]) || (screen.short && SHORT_PLACES[model.n]);
  if (fixed) return fixed[fromViewer(model, seat)];
  return place(model, seat, ringOn(model.n, screen));
}

// Where the card `seat` played sits in the trick on `screen`: on the trick's ring, at the
// seat's angle on the ring of seats, so towards the seat, and the trick's cards evenly apart
// even where the seats sit in columns (UPRIGHT_PLACES, SHORT_PLACES: each keeps its seat's
// side of the felt, left or right, top or bottom).
export function trickPlace(model, seat, screen = {}) {
  return place(model, seat, screen.upright ? UPRIGHT_TRICK_RADIUS : TRICK_RADIUS);
}
