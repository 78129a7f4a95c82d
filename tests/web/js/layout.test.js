// Where seats and trick cards sit on the felt (static/layout.js).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import {
  SCREENS,
  TRICK_RADIUS,
  UPRIGHT_TRICK_RADIUS,
  place,
  seatPlace,
  seatRadius,
  trickPlace,
} from "../../../server/bisca/server/web/static/layout.js";

const STYLESHEET = new URL("../../../server/bisca/server/web/static/style.css", import.meta.url);

const near = (actual, expected) => {
  assert.ok(
    Math.abs(actual[0] - expected[0]) < 1e-9 && Math.abs(actual[1] - expected[1]) < 1e-9,
    `${actual} is not ${expected}`,
  );
};

test("the viewer's seat is at the bottom, the others around it", () => {
  const model = { me: 2, n: 4 };
  const radius = seatRadius(4);
  near(place(model, 2, radius), [50, 50 + radius[1]]);
  near(place(model, 0, radius), [50, 50 - radius[1]]);
  near(place(model, 3, radius), [50 - radius[0], 50]);
  near(place(model, 1, radius), [50 + radius[0], 50]);
});

test("nobody's seat in particular: seat 0 at the bottom", () => {
  near(place({ me: null, n: 5 }, 0, [10, 20]), [50, 70]);
});

test("four players sit on a narrower ring than more", () => {
  assert.deepEqual(seatRadius(4), [36, 38]);
  assert.deepEqual(seatRadius(6), [38, 40]);
});

test("a trick's cards lie evenly on the trick's ring, each at its seat's angle", () => {
  for (const screen of Object.values(SCREENS))
    for (const n of [4, 5, 6, 7]) {
      const model = { me: 1, n };
      const radius = screen.upright ? UPRIGHT_TRICK_RADIUS : TRICK_RADIUS;
      for (let seat = 0; seat < n; seat += 1)
        near(trickPlace(model, seat, screen), place(model, seat, radius));
    }
  // Narrower on a phone held upright, as tall.
  assert.ok(UPRIGHT_TRICK_RADIUS[0] < TRICK_RADIUS[0]);
  assert.equal(UPRIGHT_TRICK_RADIUS[1], TRICK_RADIUS[1]);
});

test("every screen's places are picked by the stylesheet", () => {
  const css = readFileSync(STYLESHEET, "utf8");
  for (const name of Object.keys(SCREENS))
    for (const axis of ["x", "y"])
      assert.ok(css.includes(`var(--${name}-${axis})`), `style.css never reads --${name}-${axis}`);
});

test("on a short landscape screen six or seven seats sit in a column each side and across the top", () => {
  const short = SCREENS.short;
  for (const n of [6, 7]) {
    const model = { me: 3, n };
    const places = Array.from({ length: n }, (_, seat) => seatPlace(model, seat, short));
    assert.deepEqual(places[3], [50, 90], "the viewer at the bottom");
    const others = places.filter((_, seat) => seat !== 3);
    // The viewer's neighbours each side, well above the viewer's seat (its name and cards).
    const [left, right] = [places[4], places[2]];
    assert.ok(left[0] < 20 && right[0] > 80 && left[1] <= 66 && right[1] <= 66, `${places}`);
    // The others at a side (a column clear of the trick) or at the top.
    const top = others.filter(([, y]) => y < 20);
    const sides = others.filter(([x]) => x < 20 || x > 80);
    assert.equal(top.length + sides.length, n - 1, `${places}`);
    assert.equal(top.length, n === 6 ? 1 : 2, `${places}`);
    if (top.length === 2) assert.ok(Math.abs(top[0][0] - top[1][0]) >= 33, `${places}`);
    // A column's seats a label's height apart (a quarter of the felt).
    for (const a of sides)
      for (const b of sides)
        if (a !== b && a[0] === b[0]) assert.ok(Math.abs(a[1] - b[1]) >= 25, `${places}`);
    // The trick's cards point at their seats: the same side of the middle.
    for (let seat = 0; seat < n; seat += 1) {
      const [x, y] = trickPlace(model, seat, short);
      const [sx, sy] = places[seat];
      assert.ok((x - 50) * (sx - 50) >= 0 && (y - 50) * (sy - 50) >= 0, `seat ${seat}`);
    }
  }
  // Fewer seats: the ring, a desktop's (the labels are kept on the felt by their width).
  const model = { me: 0, n: 5 };
  for (let seat = 0; seat < 5; seat += 1)
    near(seatPlace(model, seat, short), place(model, seat, seatRadius(5)));
});

test("on a short landscape screen seven seats' rows are a seat's height apart", () => {
  // On a 568x320 phone the felt is 204 px tall inside its border and a seat (its name over a
  // row of cards) 54 px: the top row, a column's upper seat and its lower one are each that
  // far apart, whatever the seats' widths (on the live page every seat holds cards: seat 2's
  // name lay under seat 3's cards, review 50).
  const height = (54 / 204) * 100;
  for (const me of [0, 3]) {
    const model = { me, n: 7 };
    const others = Array.from({ length: 7 }, (_, seat) => seatPlace(model, seat, SCREENS.short))
      .filter((_, seat) => seat !== me)
      .map(([, y]) => y);
    const rows = [...new Set(others)].sort((a, b) => a - b);
    assert.equal(rows.length, 3, `${rows}`);
    for (let i = 1; i < rows.length; i += 1)
      assert.ok(rows[i] - rows[i - 1] >= height, `rows at ${rows}`);
  }
});

test("on a phone held upright six or seven seats sit in two columns and across the top", () => {
  const upright = { narrow: true, upright: true };
  for (const n of [6, 7]) {
    const model = { me: 2, n };
    const places = Array.from({ length: n }, (_, seat) => seatPlace(model, seat, upright));
    assert.deepEqual(places[2], [50, 90], "the viewer at the bottom");
    // The viewer's neighbours well above the viewer's hand, one each side.
    const [left, right] = [places[3], places[1]];
    assert.ok(left[0] < 25 && right[0] > 75 && left[1] <= 65 && right[1] <= 65, `${places}`);
    // Across the table: at the top, at least a third of the felt apart when two sit there.
    const top = places.filter(([, y]) => y < 20);
    assert.equal(top.length, n === 6 ? 1 : 2, `${places}`);
    if (top.length === 2) assert.ok(Math.abs(top[0][0] - top[1][0]) >= 33, `${places}`);
    // The trick's cards still point at their seats.
    for (let seat = 0; seat < n; seat += 1) {
      const [x, y] = trickPlace(model, seat, upright);
      const [sx, sy] = places[seat];
      assert.ok((x - 50) * (sx - 50) >= 0 && (y - 50) * (sy - 50) >= 0, `seat ${seat}`);
    }
  }
  // Fewer seats, or a phone on its side: the ring, a little narrower than a desktop's.
  near(seatPlace({ me: 0, n: 5 }, 0, upright), [50, 90]);
  near(seatPlace({ me: 0, n: 7 }, 0, { narrow: true }), [50, 90]);
  near(seatPlace({ me: 0, n: 4 }, 1, { narrow: true }), [18, 50]);
  near(seatPlace({ me: 0, n: 4 }, 1), [14, 50]);
});
