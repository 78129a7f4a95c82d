// The words and their pure translation (static/words.js).
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  LANGUAGES,
  WORDS,
  pickLanguage,
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
