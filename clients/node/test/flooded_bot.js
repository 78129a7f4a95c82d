'use strict';
// A bot for test/hostile_server.test.js, run as its own process so that the memory measured is
// the bot's alone: it plays $BISCA_ADDRESS with the SDK in $BISCA_SDK_DIR (this one by
// default), answering each request with its first legal action, and samples its own memory
// every 10 ms.  With $FLOODED_THINK set it thinks over its first request until a line comes on
// its stdin (the test says when), and keeps the peak of that time apart.  Its warnings go to
// stderr as lines; at the end it prints on stdout, as JSON, its peak RSS and heap (MB), what
// its heap holds after a garbage collection, and how it ended.  Past $FLOODED_RSS_LIMIT_MB of
// RSS it stops at once (exit code 3): the figure is already known to be too much, and growing
// further only burdens the machine.

const path = require('node:path');
const v8 = require('node:v8');
const vm = require('node:vm');

const sdk = require(process.env.BISCA_SDK_DIR || path.join(__dirname, '..'));

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');
const MB = 2 ** 20;
const limit = Number(process.env.FLOODED_RSS_LIMIT_MB || Infinity);
const peak = { rss: 0, heap: 0, thinking: 0 };
let thinking = false;

function report(ended) {
  gc();
  const held = process.memoryUsage();
  process.stdout.write(
    `${JSON.stringify({
      ended,
      peakRssMb: Math.round(peak.rss / MB),
      peakHeapMb: Math.round(peak.heap / MB),
      peakThinkingRssMb: Math.round(peak.thinking / MB),
      heldHeapMb: Math.round((held.heapUsed + held.external) / MB),
      maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    })}\n`,
  );
}

const sample = () => {
  const { rss, heapUsed, external } = process.memoryUsage();
  peak.rss = Math.max(peak.rss, rss);
  peak.heap = Math.max(peak.heap, heapUsed + external);
  if (thinking) peak.thinking = Math.max(peak.thinking, rss);
  if (rss > limit * MB) {
    report(`over ${limit} MB`);
    process.exit(3);
  }
};
const sampler = setInterval(sample, 10);

/** Resolves at the first line on stdin. */
const told = () =>
  new Promise((done) => {
    process.stdin.once('data', done);
    process.stdin.resume();
  });

let first = Boolean(process.env.FLOODED_THINK);
const bot = async (request) => {
  if (first) {
    first = false;
    thinking = true;
    await told();
    sample();
    thinking = false;
    process.stdin.pause();
  }
  return request.legalActions[0];
};

const lines = (level) => (text) => process.stderr.write(`${level} ${text.slice(0, 300)}\n`);
sdk
  .run(bot, {
    name: 'flooded',
    token: 't',
    reconnect: false,
    logger: { debug() {}, info() {}, warn: lines('warn'), error: lines('error') },
  })
  .then(
    () => 'done',
    (error) => `failed: ${error.message}`,
  )
  .then((ended) => {
    clearInterval(sampler);
    sample();
    report(ended);
  });
