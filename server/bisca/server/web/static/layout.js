// Where things sit on the drawn table, in percent of the felt, with no DOM.

// The radii [x%, y%] of the ring of seats: a little narrower with four players than with more.
export function seatRadius(players) {
  return players === 4 ? [36, 38] : [38, 40];
}

// The radii of the ring of cards in the trick, in the middle of the felt.
export const TRICK_RADIUS = [13, 15];

// Where seat `seat` sits around the table, the viewer's seat at the bottom: [x%, y%].
export function place(model, seat, radius) {
  const bottom = model.me ?? 0;
  const k = (seat - bottom + model.n) % model.n;
  const angle = Math.PI / 2 + (k * 2 * Math.PI) / model.n;
  return [50 + radius[0] * Math.cos(angle), 50 + radius[1] * Math.sin(angle)];
}
