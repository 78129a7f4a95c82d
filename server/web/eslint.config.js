// ESLint's flat config for the browser app (static/) and its unit tests (tests/web/js, run by
// `node --test`). The app is ES modules in the browser; the tests are ES modules in Node.
import js from "@eslint/js";
import globals from "globals";

export default [
  js.configs.recommended,
  {
    files: ["server/web/static/**/*.js"],
    languageOptions: { sourceType: "module", globals: globals.browser },
  },
  {
    files: ["tests/web/js/**/*.js", "server/web/eslint.config.js"],
    languageOptions: { sourceType: "module", globals: globals.node },
  },
];
