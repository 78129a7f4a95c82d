import assert from "node:assert/strict";
import { test } from "node:test";

import { pacer, personDeadline, waits } from "../../../server/bisca/server/web/static/pacer.js";

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

// A clock the test moves whose sleepers also know the time: `advance(ms)` wakes the due ones.
function timedClock() {
  let time = 0;
  const sleepers = [];
  return {
    now: () => time,
    sleep: (ms) => new Promise((resolve) => sleepers.push({ at: time + ms, resolve })),
    advance(ms) {
      time += ms;
      for (const s of sleepers.filter((s) => s.at <= time)) {
        sleepers.splice(sleepers.indexOf(s), 1);
        s.resolve();
      }
    },
  };
}

test("a question for the person is shown within its limit however slow the pace", async () => {
  const clock = timedClock();
  const pace = pacer(clock.sleep, clock.now);
  const seen = [];
  // Slow cards of the other seats and a trick held until tapped, then the person's question.
  pace.push(() => seen.push("card1"), 1200);
  pace.push(() => seen.push("card2"), 1200);
  pace.push(() => seen.push("trick"), Infinity);
  pace.ask(() => seen.push("question"), 3000);
  await tick();
  clock.advance(1200);
  await tick();
  clock.advance(1200);
  await tick();
  assert.deepEqual(seen, ["card1", "card2", "trick"]);
  clock.advance(599);
  await tick();
  assert.deepEqual(seen, ["card1", "card2", "trick"], "the trick is still shown until the limit");
  clock.advance(1);
  await tick();
  assert.deepEqual(seen, ["card1", "card2", "trick", "question"]);
});

test("a question arriving during a held trick cuts the hold to its limit", async () => {
  const clock = timedClock();
  const pace = pacer(clock.sleep, clock.now);
  const seen = [];
  pace.push(() => seen.push("trick"), Infinity);
  await tick();
  clock.advance(60_000); // a person who does not tap: no question yet, the trick stays
  await tick();
  assert.deepEqual(seen, ["trick"]);
  pace.ask(() => seen.push("question"), 2000);
  clock.advance(1999);
  await tick();
  assert.deepEqual(seen, ["trick"]);
  clock.advance(1);
  await tick();
  assert.deepEqual(seen, ["trick", "question"]);
});

test("waits after a question are not cut (the next question has its own limit)", async () => {
  const clock = timedClock();
  const pace = pacer(clock.sleep, clock.now);
  const seen = [];
  pace.ask(() => seen.push("question"), 100);
  pace.push(() => seen.push("card"), 5000);
  pace.push(() => seen.push("next"));
  await tick();
  assert.deepEqual(seen, ["question", "card"]);
  clock.advance(4999);
  await tick();
  assert.deepEqual(seen, ["question", "card"]);
  clock.advance(1);
  await tick();
  assert.deepEqual(seen, ["question", "card", "next"]);
});

test("the person's countdown starts when the question is shown, not when it arrived", () => {
  // 60 s of the person's own, the referee's 70 s (10 s of pacing allowance) from arrival.
  const request = { moveMs: "70000", bankMs: "120000" };
  const paced = personDeadline({ received: 0, shown: 8000, personMoveMs: 60_000, request });
  assert.deepEqual(paced, { move: 68_000, bank: 120_000 }); // all 60 s, from the showing
  const late = personDeadline({ received: 0, shown: 15_000, personMoveMs: 60_000, request });
  assert.equal(late.move, 70_000, "never past the referee's own deadline");
  const resent = { moveMs: "20000", bankMs: "90000" }; // a second attempt: what is left
  assert.equal(
    personDeadline({ received: 1000, shown: 1000, personMoveMs: 60_000, request: resent }).move,
    21_000,
  );
  assert.equal(personDeadline({ received: 5, shown: 9, request }).move, 70_005);
});
