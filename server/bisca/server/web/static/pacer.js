// The table's pace, with no DOM: what the other seats do is shown one step at a time, each
// step followed by its wait (a card: the speed chosen; a completed trick: a longer hold), and
// a tap (skip) ends the current wait at once. `sleep(ms)` is the timer (setTimeout in the
// page, a test's own clock in Node), `now()` the time in ms (Date.now in the page).
//
// The person is never charged for this pace: a question for the person (`ask`) is shown at
// most `limitMs` after it arrived — every wait before it is cut to fit, a held trick included
// — and the server adds that allowance to the referee's move time at a person's table.

// "tap": cards at the normal pace, a completed trick held until the felt is tapped.
export const SPEEDS = { slow: 1200, normal: 700, fast: 300, instant: 0, tap: 300 };
export const DEFAULT_SPEED = "normal";

// How long a card of another seat and a completed trick stay before the next step.
export function waits(speed) {
  const card = SPEEDS[speed] ?? SPEEDS[DEFAULT_SPEED];
  if (speed === "tap") return { card, trick: Infinity };
  return { card, trick: card === 0 ? 0 : Math.max(1200, card * 2) };
}

export function pacer(sleep, now = Date.now) {
  const queue = [];
  let running = false;
  let wake = null;
  let endsAt = 0; // when the current wait ends by itself (ms; Infinity for a tap)
  // When the earliest question still queued must be shown by (ms), or null.
  const due = () => {
    const question = queue.find((step) => step.due !== undefined);
    return question ? question.due : null;
  };
  async function drain() {
    running = true;
    try {
      while (queue.length) {
        const { run, wait } = queue.shift();
        run();
        let ms = typeof wait === "function" ? wait() : wait;
        const by = due();
        if (by !== null) ms = Math.max(0, Math.min(ms, by - now()));
        if (ms > 0)
          await new Promise((resolve) => {
            wake = resolve;
            endsAt = now() + ms;
            if (ms !== Infinity) sleep(ms).then(resolve);
          });
        wake = null;
      }
    } finally {
      running = false;
    }
  }
  return {
    // Run `run` after everything queued before it, then wait `wait` ms (a number or a function
    // read when the step runs, so a speed changed meanwhile counts).
    push(run, wait = 0) {
      queue.push({ run, wait });
      if (!running) drain();
    },
    // Show a question for the person after everything queued before it, at most `limitMs`
    // from now: the waits before it are cut so that it is.
    ask(run, limitMs) {
      const dueAt = now() + limitMs;
      queue.push({ run, wait: 0, due: dueAt });
      if (wake && endsAt > dueAt) {
        // The current wait (a held trick, say) would end too late: it ends at the due time.
        sleep(limitMs).then(wake);
        endsAt = dueAt;
      }
      if (!running) drain();
    },
    // End the current wait now (a tap on the table, "instant").
    skip() {
      if (wake) wake();
    },
    get busy() {
      return running;
    },
  };
}

// The person's clock as the page counts it down: from the moment the question is `shown`,
// the person's own move time (`personMoveMs`), never past the referee's deadline (the
// request's `moveMs` from its arrival, `received`, which includes the pacing allowance).
// Returns {move, bank}: when the move time ends (ms) and the bank left then.
export function personDeadline({ received, shown, personMoveMs, request }) {
  const refereeMoveEnd = received + Number(request.moveMs);
  const move = personMoveMs ? Math.min(shown + personMoveMs, refereeMoveEnd) : refereeMoveEnd;
  return { move, bank: Number(request.bankMs) };
}
