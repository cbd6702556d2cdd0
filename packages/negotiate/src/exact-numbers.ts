/**
 * Numbers in a JSON text that a JavaScript number (an IEEE 754 double) does not hold: RFC 8259 §6
 * leaves the range and precision of numbers to the implementation and warns that a number such as
 * `3.141592653589793238462643383279` "may indicate potential interoperability problems", since a
 * parser gives the nearest double. `JSON.parse` reads `1.0000000000000001` as 1 and `1e400` as
 * Infinity without a word; a service handling money must refuse what it cannot hold.
 */

/** One number of the text that its double does not hold, and where it stands. */
export interface InexactNumber {
  /** The member names and array indices from the root, joined with `.` (`items.0.price`); `""` for the root. */
  readonly path: string;
  /** The number as it was written (cut to 40 characters). */
  readonly text: string;
}

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** A decimal number's value as `digits` and a power of ten, zero as "0", for comparison. */
function normalized(text: string): string | undefined {
  const m = DECIMAL.exec(text);
  if (m === null) return undefined;
  const fraction = m[3] ?? "";
  let digits = `${m[2]}${fraction}`.replace(/^0+/, "");
  if (digits === "") return "0";
  let exponent = Number(m[4] ?? "0") - fraction.length;
  const trimmed = digits.replace(/0+$/, "");
  exponent += digits.length - trimmed.length;
  digits = trimmed;
  return `${m[1]}${digits}e${exponent}`;
}

/**
 * Whether the double `text` parses to has the value `text` names: the shortest decimal that
 * reads back as that double (ECMAScript Number::toString) names the same number as the text,
 * whatever the spelling (`1.50`, `15e-1` and `1.5` are one value). `0.1` is held (it reads back as
 * `0.1`); `1.0000000000000001` (read as 1), `9007199254740993` (read as 9007199254740992), `1e400`
 * (Infinity) and `1e-400` (0) are not.
 */
export function holdsExactly(text: string): boolean {
  const value = Number(text);
  if (!Number.isFinite(value)) return false;
  return normalized(text) === normalized(String(value));
}

const NUMBER_START = /[-0-9]/;
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

interface Frame {
  readonly array: boolean;
  index: number;
  key: string;
  expectKey: boolean;
}

/**
 * The numbers of a JSON text (one `JSON.parse` has accepted) that no double holds, in text order,
 * at most `max` of them. One linear pass over the text; member names are decoded only when the
 * path of such a number is written.
 */
export function inexactNumbers(json: string, max = 20): InexactNumber[] {
  const found: InexactNumber[] = [];
  const stack: Frame[] = [];
  let i = 0;
  const n = json.length;
  const pathOf = () => stack.map((f) => (f.array ? String(f.index) : f.key)).join(".");
  while (i < n && found.length < max) {
    const c = json[i] as string;
    if (c === '"') {
      const start = i;
      i++;
      while (i < n && json[i] !== '"') i += json[i] === "\\" ? 2 : 1;
      i++;
      const top = stack[stack.length - 1];
      if (top !== undefined && !top.array && top.expectKey) {
        top.key = JSON.parse(json.slice(start, i)) as string;
      }
    } else if (c === "{" || c === "[") {
      stack.push({ array: c === "[", index: 0, key: "", expectKey: c === "{" });
      i++;
    } else if (c === "}" || c === "]") {
      stack.pop();
      i++;
    } else if (c === ",") {
      const top = stack[stack.length - 1];
      if (top !== undefined) {
        if (top.array) top.index++;
        else top.expectKey = true;
      }
      i++;
    } else if (c === ":") {
      const top = stack[stack.length - 1];
      if (top !== undefined) top.expectKey = false;
      i++;
    } else if (NUMBER_START.test(c)) {
      NUMBER.lastIndex = i;
      const match = NUMBER.exec(json);
      const text = match?.[0] ?? c;
      if (!holdsExactly(text))
        found.push({ path: pathOf(), text: text.length > 40 ? `${text.slice(0, 40)}…` : text });
      i += text.length;
    } else i++;
  }
  return found;
}
