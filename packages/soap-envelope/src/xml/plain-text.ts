// The text runs the fast path (xml/fast-parse.ts) and the templates that replay it
// (xml/templates.ts) read as plain: one test each, so a run is judged the same by both.

/** In text: references, controls but tab and line feed, surrogates and above; `]]>` separately. */
export const NOT_PLAIN_IN_TEXT = /[^\t\n\x20-\x25\x27-\ud7ff]/;
export const NOT_BLANK = /[^ \t\n]/;
