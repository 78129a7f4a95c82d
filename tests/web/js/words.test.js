// The words and their pure translation (static/words.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  LANGUAGES,
  WORDS,
  pickLanguage,
  texts,
  translate,
} from "../../../server/bisca/server/web/static/words.js";

test("a key is translated in the chosen language, its names filled", () => {
  assert.equal(
    translate("en", "m.page", { page: 2, pages: 5, total: 93 }),
    "page 2 of 5 (93 matches)",
  );
  assert.equal(
    translate("it", "m.page", { page: 2, pages: 5, total: 93 }),
    "pagina 2 di 5 (93 partite)",
  );
});

test("a name without a value keeps its braces", () => {
  assert.equal(translate("en", "lb.title", {}), "{game} leaderboard");
});

test("an unknown language falls back to English, an unknown key to itself", () => {
  assert.equal(translate("fr", "nav.play"), "Play");
  assert.equal(translate("it", "no.such.key"), "no.such.key");
});

test("every language has the same keys as English", () => {
  for (const language of LANGUAGES) {
    assert.deepEqual(Object.keys(WORDS[language]).sort(), Object.keys(WORDS.en).sort(), language);
  }
});

test("the chosen language wins; otherwise Italian browsers get Italian", () => {
  assert.equal(pickLanguage("en", "it-IT"), "en");
  assert.equal(pickLanguage("it", "en-GB"), "it");
  assert.equal(pickLanguage(null, "it-CH"), "it");
  assert.equal(pickLanguage("de", "de-DE"), "en");
  assert.equal(pickLanguage(null, undefined), "en");
});

test("counts take the plural form of their language", () => {
  const cases = [
    ["en", "h.tricks", { who: "A", n: 1 }, "A: 1 trick"],
    ["en", "h.tricks", { who: "A", n: 2 }, "A: 2 tricks"],
    ["en", "h.tricks", { who: "A", n: 0 }, "A: 0 tricks"],
    ["it", "h.tricks", { who: "A", n: 1 }, "A: 1 presa"],
    ["it", "h.tricks", { who: "A", n: 3 }, "A: 3 prese"],
    ["en", "e.trick", { who: "A", n: 4, points: 1 }, "A wins trick 4 (1 point)."],
    ["it", "e.trick", { who: "A", n: 4, points: 1 }, "A vince la presa 4 (1 punto)."],
    ["it", "e.trick", { who: "A", n: 1, points: 20 }, "A vince la presa 1 (20 punti)."],
    ["en", "h.net", { who: "A", chips: "+1" }, "A: +1 chip"],
    ["en", "h.net", { who: "A", chips: "−1" }, "A: −1 chip"],
    ["it", "h.net", { who: "A", chips: "+12" }, "A: +12 gettoni"],
    ["en", "t.cards", { n: 1 }, "1 card"],
    ["it", "t.cards", { n: 1 }, "1 carta"],
    ["en", "m.page", { page: 1, pages: 1, total: 1 }, "page 1 of 1 (1 match)"],
    ["it", "p.refused", { why: "no", n: 1 }, "Rifiutata dall'arbitro: no (ancora 1 tentativo)"],
  ];
  for (const [language, key, values, expected] of cases)
    assert.equal(translate(language, key, values), expected, `${language} ${key}`);
});

test("no text says one of a thing with the plural noun", () => {
  // Every entry whose count may be 1 has its forms: "1 tricks" is never written.
  for (const language of LANGUAGES)
    for (const [key, entry] of Object.entries(WORDS[language])) {
      if (typeof entry === "string") continue;
      assert.ok(entry.count && entry.one && entry.other, `${language} ${key}`);
      assert.ok(entry.one.includes(`{${entry.count}}`), `${language} ${key}: one`);
      assert.notEqual(entry.one, entry.other, `${language} ${key}`);
    }
  for (const language of LANGUAGES)
    for (const key of ["h.tricks", "t.cards", "e.trick", "h.net", "e.ante", "t.rounds"])
      assert.equal(typeof WORDS[language][key], "object", `${language} ${key} has plural forms`);
});

test("texts() lists every form of a language's dictionary", () => {
  const all = texts("it");
  assert.ok(all.includes("{who}: {n} presa") && all.includes("{who}: {n} prese"));
  assert.ok(all.every((text) => typeof text === "string"));
});

test("what the person is told about itself in Italian assumes no gender", () => {
  // "Hai finito primo", "resti servito": the person may be a woman (review 45b M3).
  for (const key of ["p.bestia.won", "b.standpat", "p.choose"]) {
    const entry = WORDS.it[key];
    const text = typeof entry === "string" ? entry : Object.values(entry).join(" ");
    assert.doesNotMatch(text, /\b(primo|prima|servito|servita)\b/, key);
  }
});

test("a held trick's button says what it does, with no gesture", () => {
  assert.equal(translate("en", "t.tap"), "go on");
  assert.equal(translate("it", "t.tap"), "avanti");
});
