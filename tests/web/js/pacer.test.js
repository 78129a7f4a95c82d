import assert from "node:assert/strict";
import { test } from "node:test";

import { pacer, waits } from "../../../server/bisca/server/web/static/pacer.js";

// A clock the test moves: sleep(ms) resolves when the test says so.
function manualClock() {
  const sleepers = [];
  return {
    sleep: (ms) => new Promise((resolve) => sleepers.push({ ms, resolve })),
    sleepers,
    wakeAll: () => sleepers.splice(0).forEach((s) => s.resolve()),
  };
}
const tick = () => new Promise((resolve) => setImmediate(resolve));

test("steps run one at a time, each after the previous one's wait", async () => {
  const clock = manualClock();
  const pace = pacer(clock.sleep);
  const seen = [];
  pace.push(() => seen.push("a"), 700);
  pace.push(() => seen.push("b"), 700);
  pace.push(() => seen.push("c"), 0);
  await tick();
  assert.deepEqual(seen, ["a"]);
  assert.equal(clock.sleepers[0].ms, 700);
  clock.wakeAll();
  await tick();
  assert.deepEqual(seen, ["a", "b"]);
  clock.wakeAll();
  await tick();
  assert.deepEqual(seen, ["a", "b", "c"]);
  assert.equal(pace.busy, false);
});

test("a tap ends the current wait at once", async () => {
  const clock = manualClock();
  const pace = pacer(clock.sleep);
  const seen = [];
  pace.push(() => seen.push("trick"), 5000);
  pace.push(() => seen.push("next"));
  await tick();
  assert.deepEqual(seen, ["trick"]);
  pace.skip();
  await tick();
  assert.deepEqual(seen, ["trick", "next"]);
});

test("instant shows everything without waiting; a trick is held longer than a card", () => {
  assert.deepEqual(waits("instant"), { card: 0, trick: 0 });
  const normal = waits("normal");
  assert.equal(normal.card, 700);
  assert.ok(normal.trick > normal.card);
  assert.deepEqual(waits("nonsense"), normal);
});

test("with the tap speed a completed trick waits for the tap alone", async () => {
  const clock = manualClock();
  const pace = pacer(clock.sleep);
  const seen = [];
  assert.equal(waits("tap").trick, Infinity);
  pace.push(() => seen.push("trick"), waits("tap").trick);
  pace.push(() => seen.push("next"));
  await tick();
  assert.equal(clock.sleepers.length, 0);
  assert.deepEqual(seen, ["trick"]);
  pace.skip();
  await tick();
  assert.deepEqual(seen, ["trick", "next"]);
});
