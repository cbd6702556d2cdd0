// Where a signed message's Header ends, so its signature is checked on the header alone before
// the rest is read (signature.ts).

/** The first end tag of a Header, and the envelope's start tag (its qualified name). */
const HEADER_END = /<\/(?:[A-Za-z_][\w.-]*:)?Header[\t\n\r ]*>/;
const ENVELOPE_START = /<([A-Za-z_][\w.-]*:)?Envelope[\t\n\r />]/;

/**
 * The message cut after its Header into two documents: `head`, the message up to the end of the
 * Header with the envelope closed (what step 2 reads), and `rest`, the envelope's start tag
 * followed by what comes after the Header. Undefined when there is no such cut; a cut in the
 * wrong place (at a Header end tag in a comment, or of another namespace) gives a head that does
 * not parse or holds more than the Header, which the signature check turns down.
 */
export function cutAtHeader(raw: string): { head: string; rest: string } | undefined {
  const end = HEADER_END.exec(raw);
  const root = ENVELOPE_START.exec(raw);
  if (end === null || root === null || root.index > end.index) return undefined;
  const open = startTagEnd(raw, root.index);
  if (open === undefined || open > end.index) return undefined;
  const after = end.index + end[0].length;
  return {
    head: `${raw.slice(0, after)}</${root[1] ?? ""}Envelope>`,
    rest: raw.slice(0, open) + raw.slice(after),
  };
}

/** The index after the `>` that ends the start tag at `from` (a `>` in a quoted value aside). */
function startTagEnd(raw: string, from: number): number | undefined {
  let quote = "";
  for (let i = from; i < raw.length; i++) {
    const c = raw[i];
    if (quote !== "") {
      if (c === quote) quote = "";
    } else if (c === '"' || c === "'") quote = c;
    else if (c === ">") return i + 1;
  }
  return undefined;
}
