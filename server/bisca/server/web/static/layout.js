// Where things sit on the drawn table, in percent of the felt, with no DOM.

// The radii [x%, y%] of the ring of seats: a little narrower with four players than with more.
export function seatRadius(players) {
  return players === 4 ? [36, 38] : [38, 40];
}

// The radii of the ring of cards in the trick, in the middle of the felt.
export const TRICK_RADIUS = [13, 15];

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

// Where seat `seat` sits on the felt drawn on `screen` ({narrow, upright}: a phone, held
// upright): [x%, y%].
export function seatPlace(model, seat, screen = {}) {
  const fixed = screen.upright && UPRIGHT_PLACES[model.n];
  if (fixed) return fixed[fromViewer(model, seat)];
  return place(model, seat, ringOn(model.n, screen));
}

// Where the card `seat` played sits in the trick on `screen`: on the trick's ring, towards the
// seat (on a ring, at the seat's own angle).
export function trickPlace(model, seat, screen = {}) {
  const [x, y] = seatPlace(model, seat, screen);
  const [rx, ry] = ringOn(model.n, screen);
  const angle = Math.atan2((y - 50) / ry, (x - 50) / rx);
  return [50 + TRICK_RADIUS[0] * Math.cos(angle), 50 + TRICK_RADIUS[1] * Math.sin(angle)];
}
