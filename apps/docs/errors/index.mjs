// The catalogue of the `ERR_SVC_*` codes: for each, what raised it (which factory, function or
// plugin, and when), why (what was refused and what is accepted, in the words of the runtime
// message), how to fix it, and a wrong and a right module. The docs generator writes each code's
// page from its entry; `apps/docs/test/error-codes.test.ts` compiles every wrong and right module
// (strict TypeScript), runs them, and checks that the wrong one throws the code with a message
// holding `accepted` and that the right one does not. A page and its message cannot drift apart:
// a message that stops saying what the page says fails that test.
//
// One file per package (`<package folder>.mjs`), its entries built with `option()` for a plain
// option, whose wrong and right modules differ by the option's value only.
import auth from "./auth.mjs";
import conditional from "./conditional.mjs";
import errors from "./errors.mjs";
import hal from "./hal.mjs";
import idempotency from "./idempotency.mjs";
import kernel from "./kernel.mjs";
import negotiate from "./negotiate.mjs";
import otel from "./otel.mjs";
import ratelimit from "./ratelimit.mjs";
import soapEnvelope, { support as soapSupport } from "./soap-envelope.mjs";
import versioning from "./versioning.mjs";

export { option, WHEN } from "./helpers.mjs";

/**
 * The modules the examples import besides the packages (`./greeter.mjs`: a WSDL contract and its
 * handlers), by file name: what a reader has of their own, written next to the examples.
 */
export const support = { ...soapSupport };

/**
 * Codes that a README or a test names but no function of the packages throws, each with the codes
 * thrown instead: their pages say so and send the reader there. The docs test checks that none
 * of them is thrown (named in a package's sources) and that each code named instead has an entry.
 */
export const notThrown = {
  ERR_SVC_NEGOTIATE_COMPRESSION: {
    instead: ["ERR_SVC_NEGOTIATE_OPTIONS", "ERR_SVC_NEGOTIATE_THRESHOLD", "ERR_SVC_NEGOTIATE_LEVEL"],
    why: "A unit test of the option checks makes it up, for a nested `compression` option no function takes. `compression()` refuses options that are no object with `ERR_SVC_NEGOTIATE_OPTIONS`, and its settings with `ERR_SVC_NEGOTIATE_THRESHOLD` and `ERR_SVC_NEGOTIATE_LEVEL`.",
  },
};

/** Every entry, by code. */
export function catalogue() {
  const all = new Map();
  const parts = {
    auth,
    conditional,
    errors,
    hal,
    idempotency,
    kernel,
    negotiate,
    otel,
    ratelimit,
    "soap-envelope": soapEnvelope,
    versioning,
  };
  for (const [pkg, entries] of Object.entries(parts))
    for (const [code, entry] of Object.entries(entries)) all.set(code, { code, pkg, ...entry });
  return all;
}
