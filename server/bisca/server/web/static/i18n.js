// The app's words in the language the person chose (kept in localStorage): t(key, values)
// picks it and fills {names}. The words and the pure translation are in words.js.
import { pickLanguage, translate } from "./words.js";

export function language() {
  return pickLanguage(localStorage.getItem("bisca.language"), navigator.language);
}

export function t(key, values = {}) {
  return translate(language(), key, values);
}
