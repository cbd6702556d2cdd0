import { SaxesParser, type SaxesTagPlain } from "saxes";

/** A parsed XML element: attributes as `@name`, text as `#text` when mixed, repeated children as arrays. */
export type XmlValue = string | { [name: string]: XmlValue | XmlValue[] };

interface Frame {
  name: string;
  obj: Record<string, XmlValue | XmlValue[]>;
  text: string;
  children: number;
}

/** Builds plain objects from saxes events; the first failure is kept. */
class XmlBuilder {
  readonly stack: Frame[] = [];
  result: Record<string, XmlValue> | undefined;
  failure: Error | undefined;

  constructor(private readonly maxDepth: number) {}

  fail(message: string, cause?: unknown): void {
    this.failure ??= cause === undefined ? new Error(message) : new Error(message, { cause });
  }

  open(tag: SaxesTagPlain): void {
    const { stack } = this;
    if (stack.length >= this.maxDepth) this.fail(`XML is nested deeper than ${this.maxDepth} levels`);
    const obj: Record<string, XmlValue | XmlValue[]> = {};
    for (const [k, v] of Object.entries(tag.attributes)) obj[`@${k}`] = String(v);
    const parent = stack[stack.length - 1];
    if (parent) parent.children++;
    stack.push({ name: tag.name, obj, text: "", children: 0 });
  }

  text(t: string): void {
    const top = this.stack[this.stack.length - 1];
    if (top) top.text += t;
  }

  close(): void {
    const frame = this.stack.pop();
    if (!frame) return;
    const value = frameValue(frame);
    const parent = this.stack[this.stack.length - 1];
    if (!parent) {
      this.result = { [frame.name]: value };
      return;
    }
    // Own properties only: an element named `constructor` or `toString` is not already there
    // (the function it would inherit is not a first value to append to), and one named
    // `__proto__` is a key like any other, as JSON.parse makes it, not the object's prototype.
    const existing = Object.hasOwn(parent.obj, frame.name) ? parent.obj[frame.name] : undefined;
    if (existing === undefined) setOwn(parent.obj, frame.name, value);
    else if (Array.isArray(existing)) existing.push(value);
    else setOwn(parent.obj, frame.name, [existing, value]);
  }
}

function setOwn(
  obj: Record<string, XmlValue | XmlValue[]>,
  name: string,
  value: XmlValue | XmlValue[],
): void {
  if (name === "__proto__") {
    Object.defineProperty(obj, name, { value, writable: true, enumerable: true, configurable: true });
  } else {
    obj[name] = value;
  }
}

/** A text-only element is its text; otherwise its object, with `#text` when the content is mixed. */
function frameValue(frame: Frame): XmlValue {
  const text = frame.text.trim();
  if (frame.children === 0 && Object.keys(frame.obj).length === 0) return frame.text;
  return text === "" ? frame.obj : Object.assign(frame.obj, { "#text": text });
}

/**
 * Parses XML into plain objects with `saxes`: elements become keys, repeated elements arrays,
 * attributes `@name`, text-only elements strings. A DOCTYPE is refused outright, which shuts out
 * entity-expansion and external-entity attacks before they start.
 *
 * @example parseXmlBody("<a x='1'><b>2</b><b>3</b></a>") // → { a: { "@x": "1", b: ["2", "3"] } }
 * @see https://www.w3.org/TR/xml/
 */
export function parseXmlBody(source: string, maxDepth = 32): Record<string, XmlValue> {
  const parser = new SaxesParser();
  const builder = new XmlBuilder(maxDepth);
  parser.on("doctype", () => builder.fail("DOCTYPE is not allowed"));
  // XML 1.0 §2.1 well-formedness, in words of our own with where it broke: saxes' message can
  // quote the document (`unclosed tag: <name>`) and is kept as the cause, for logs only.
  const malformed = (e: unknown) =>
    builder.fail(`not well-formed XML (line ${parser.line}, column ${parser.column})`, e);
  parser.on("error", malformed);
  parser.on("opentag", (tag) => builder.open(tag));
  parser.on("text", (t) => builder.text(t));
  parser.on("cdata", (t) => builder.text(t));
  parser.on("closetag", () => builder.close());
  try {
    parser.write(source);
    if (builder.failure === undefined) parser.close();
  } catch (e) {
    malformed(e);
  }
  if (builder.failure) throw builder.failure;
  if (!builder.result) throw new Error("XML document has no root element");
  return builder.result;
}
