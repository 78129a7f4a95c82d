// ESLint's flat config for the browser app (static/) and its unit tests (tests/web/js, run by
// `node --test`). The app is ES modules in the browser; the tests are ES modules in Node.
import js from "@eslint/js";
import globals from "globals";

export default [
  js.configs.recommended,
  {
    files: ["server/bisca/server/web/static/**/*.js"],
    languageOptions: { sourceType: "module", globals: globals.browser },
    rules: {
      // The modules share what they export, never the page's globals.
      "no-restricted-syntax": [
        "error",
        {
          selector:
            "AssignmentExpression > MemberExpression.left[object.name=/^(window|globalThis|self)$/]",
          message: "export it from its module instead of setting a global",
        },
      ],
    },
  },
  {
    files: ["tests/web/js/**/*.js", "server/bisca/server/web/eslint.config.js"],
    languageOptions: { sourceType: "module", globals: globals.node },
  },
];
