// Where seats and trick cards sit on the felt (static/layout.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import { place, seatRadius } from "../../../server/bisca/server/web/static/layout.js";

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
