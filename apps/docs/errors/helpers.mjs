// What every entry of the catalogue (./index.mjs) is made of.

/**
 * @typedef {"construction" | "registration" | "request" | "call"} When
 *   construction: the factory's call, before any request; registration: a Fastify plugin's
 *   registration (`ready`/`listen`); request: while a request is handled; call: each call of a
 *   function the application makes itself (a response helper, a model builder).
 * @typedef {object} ErrorEntry
 * @property {string} code
 * @property {string} pkg        the package folder (`ratelimit`)
 * @property {string} raiser     Markdown: the factory, function or plugin that throws it
 * @property {When} when
 * @property {string} refused    Markdown: what was refused (the option, the value's kind)
 * @property {string} accepted   what is accepted, as the runtime message says it (a substring of it)
 * @property {string} fix        Markdown: what to change
 * @property {string} wrong      a whole module that throws the code (top-level await allowed)
 * @property {string} right      the same module, fixed
 */

export const WHEN = {
  construction:
    "when it is called, before any request: options are checked once, so the application fails at start-up",
  registration: "when the plugin is registered: Fastify's `ready()` (and so `listen()`) rejects with it",
  request: "while a request is handled: the handler or middleware throws it for that request",
  call: "each time the application calls it with such an argument",
};

/**
 * An entry for a plain option: `call(value)` is the module's statement with the option set to
 * `value`, `imports` its import lines; `wrong` and `right` are source text of a value.
 *
 * @returns {Omit<ErrorEntry, "code" | "pkg">}
 */
export function option({
  raiser,
  when = "construction",
  name,
  accepted,
  wrong,
  right,
  imports,
  call,
  fix,
  refused,
}) {
  return {
    raiser,
    when,
    refused: refused ?? `its option \`${name}\` was given a value it does not take`,
    accepted,
    fix: fix ?? `Give \`${name}\` ${accepted}, or leave it out when it has a default.`,
    wrong: `${imports}\n\n${call(wrong)}\n`,
    right: `${imports}\n\n${call(right)}\n`,
  };
}
