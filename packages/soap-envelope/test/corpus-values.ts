import type { Contract } from "../src/wsdl/contract.js";
import { BUILTIN_INFO, type BuiltinType } from "../src/xsd/builtins.js";
import { checkLexical } from "../src/xsd/lexical.js";
import type {
  ComplexType,
  ElementDecl,
  ElementParticle,
  GroupParticle,
  Particle,
  SimpleType,
} from "../src/xsd/model.js";
import { emptiable, TYPE_NAMES } from "../src/xsd/model.js";
import { schemaComponents } from "../src/xsd/schema.js";

// Minimal valid values of a compiled schema, for round trips through real clients: every required
// element as often as it must occur (once at least), every required attribute, a valid literal for each simple type (its first
// enumeration value, else the shortest match of its pattern or a literal of its built-in, checked
// against every facet), the first branch of a required choice (none when a branch may be empty). A
// complex type whose required content is empty gets its first optional child element (of its
// sequences, nested ones too, whose type is not already being built), so a message carries
// something. Not generated (NoValue): a required xs:any, an abstract type (it needs xsi:type), a
// QName. The value is a tree; each client gets it in its own input form and is compared in its own
// output form (the value forms below).

/** A simple value: its built-in, its literal and the value the service decodes it to. */
export interface Leaf {
  kind: "leaf";
  base: BuiltinType;
  lexical: string;
  /** An attribute the sender leaves out and the receiver decodes from its default. */
  implied?: boolean;
}

/** A complex value: attributes, child elements (an array where the element repeats), simple content. */
export interface Complex {
  kind: "complex";
  attributes: [string, Leaf][];
  children: [string, Node | Node[]][];
  simpleContent?: Leaf;
  /** Repeated elements left out: the service decodes each as `[]` (README: Built-in types). */
  emptyLists: string[];
}

/** A list value (`xs:list`): one item. */
export interface ListValue {
  kind: "list";
  items: Leaf[];
}

export type Node = Leaf | Complex | ListValue;

/** Why no value could be built (a construct this generator does not fill). */
export class NoValue extends Error {}

/** The minimal value of a global element of the contract's schema. */
export function elementValue(contract: Contract, clark: string): Node {
  const decl = schemaComponents(contract.schema)?.elements.get(clark);
  if (decl === undefined) throw new NoValue(`${clark} is not a global element`);
  return new Generator().element(decl, []);
}

class Generator {
  element(decl: ElementDecl, stack: (object | string)[]): Node {
    if (stack.length > 24) throw new NoValue(`${decl.localName}: required content nests too deep`);
    if (decl.valueConstraint?.fixed) return this.fixed(decl.type, decl.valueConstraint.value, decl.localName);
    return decl.type.kind === "simple" ? simple(decl.type, decl.localName) : this.complex(decl.type, stack);
  }

  private fixed(type: SimpleType | ComplexType, value: string, where: string): Node {
    if (type.kind === "complex") {
      if (type.simpleContent === undefined) throw new NoValue(`${where}: a fixed complex value`);
      return {
        kind: "complex",
        attributes: [],
        children: [],
        simpleContent: leaf(type.simpleContent, value),
        emptyLists: [],
      };
    }
    return leaf(type, value);
  }

  private complex(type: ComplexType, stack: (object | string)[]): Complex {
    if (type.abstract) throw new NoValue(`${type.name}: an abstract type (needs xsi:type)`);
    const inner = [...stack, typeKey(type)];
    const attributes: [string, Leaf][] = [];
    for (const a of type.attributes) {
      if (a.fixed !== undefined) {
        if (a.required) attributes.push([a.name, leaf(a.type, a.fixed)]);
        else attributes.push([a.name, { ...leaf(a.type, a.fixed), implied: true }]);
      } else if (a.required) attributes.push([a.name, simpleLeaf(a.type, `@${a.name}`)]);
      else if (a.defaultValue !== undefined)
        attributes.push([a.name, { ...leaf(a.type, a.defaultValue), implied: true }]);
    }
    const children: [string, Node | Node[]][] = [];
    if (type.content !== undefined) {
      this.group(type.content, inner, children);
      if (children.length === 0) {
        // A required-empty content: its first optional element of a type not being built.
        const first = directElements(type.content).find((p) => !inner.includes(typeKey(p.decl.type)));
        if (first !== undefined) this.particle(first, inner, children);
      }
    }
    const value: Complex = {
      kind: "complex",
      attributes,
      children,
      emptyLists:
        type.content === undefined ? [] : emptyListsOf(type.content, new Set(children.map(([n]) => n))),
    };
    if (type.simpleContent !== undefined) value.simpleContent = simpleLeaf(type.simpleContent, "$value");
    return value;
  }

  private group(g: GroupParticle, stack: (object | string)[], out: [string, Node | Node[]][]): void {
    if (g.min === 0) return;
    if (g.kind === "choice") {
      // A branch that can be empty satisfies the choice with nothing; else the first branch.
      const branch = g.items[0];
      if (branch === undefined || g.items.some(emptiable)) return;
      if (branch.kind === "element") this.particle(branch, stack, out);
      else if (branch.kind === "any") throw new NoValue("a required xs:any");
      else this.group({ ...branch, min: Math.max(branch.min, 1) }, stack, out);
      return;
    }
    for (const item of g.items) {
      if (item.min === 0) continue;
      if (item.kind === "element") this.particle(item, stack, out);
      else if (item.kind === "any") throw new NoValue("a required xs:any");
      else this.group(item, stack, out);
    }
  }

  private particle(p: ElementParticle, stack: (object | string)[], out: [string, Node | Node[]][]): void {
    const value = this.element(p.decl, stack);
    // A repeated element as often as it must occur, at least once.
    out.push([p.decl.localName, p.many ? Array.from({ length: Math.max(1, p.min) }, () => value) : value]);
  }
}

/**
 * The repeated elements a value leaves out that the service decodes as `[]`: those of each group
 * the decoder enters (xsd/decode.ts matchGroup: one that is not emptiable, or one a child sent
 * starts), the chosen branch of a choice, none of a group it skips.
 */
function emptyListsOf(g: GroupParticle, sent: ReadonlySet<string>, out: string[] = []): string[] {
  const holds = (p: Particle): boolean =>
    p.kind === "element" ? sent.has(p.decl.localName) : p.kind !== "any" && p.items.some(holds);
  if (g.kind === "choice") {
    const branch = g.items.find(holds);
    if (branch !== undefined && branch.kind !== "element" && branch.kind !== "any")
      emptyListsOf(branch, sent, out);
    return out;
  }
  if (!holds(g) && emptiable(g)) return out;
  for (const item of g.items) {
    if (item.kind === "element") {
      if (item.many && !sent.has(item.decl.localName)) out.push(item.decl.localName);
    } else if (item.kind !== "any") emptyListsOf(item, sent, out);
  }
  return out;
}

/** A type's identity: its name when it has one (a named type may be compiled once per use). */
function typeKey(type: SimpleType | ComplexType): object | string {
  return TYPE_NAMES.get(type) ?? type;
}

/**
 * The element particles of a sequence or all and of the required sequences and alls in it: those
 * a value may hold alone when the rest of their group is empty.
 */
function directElements(g: GroupParticle): ElementParticle[] {
  if (g.kind === "choice" || g.min === 0) return [];
  return g.items.flatMap((i) => (i.kind === "element" ? [i] : i.kind === "any" ? [] : directElements(i)));
}

/** Literals tried, in order, for each built-in (the first its facets accept is taken). */
const CANDIDATES: Partial<Record<BuiltinType, string[]>> = {
  boolean: ["true"],
  decimal: ["1.5", "1", "0"],
  float: ["1.5", "1", "0"],
  double: ["1.5", "1", "0"],
  duration: ["P1D"],
  dateTime: ["2001-02-03T04:05:06Z"],
  time: ["04:05:06Z"],
  date: ["2001-02-03"],
  gYearMonth: ["2001-02"],
  gYear: ["2001"],
  gMonthDay: ["--02-03"],
  gDay: ["---03"],
  gMonth: ["--02"],
  hexBinary: ["0A0B"],
  base64Binary: ["AQI="],
  anyURI: ["http://example.com/a"],
  language: ["en"],
};

function simple(type: SimpleType, where: string): Leaf | ListValue {
  if (type.variety === "list") {
    if (type.facets.enumeration?.[0] !== undefined) throw new NoValue(`${where}: an enumerated list`);
    return { kind: "list", items: [simpleLeaf(type.itemType as SimpleType, where)] };
  }
  return simpleLeaf(type, where);
}

function simpleLeaf(type: SimpleType, where: string): Leaf {
  if (type.variety === "union") return simpleLeaf((type.memberTypes as SimpleType[])[0] as SimpleType, where);
  if (type.variety === "list") throw new NoValue(`${where}: a list in an attribute or simple content`);
  const kind = BUILTIN_INFO[type.base].value;
  if (kind === "qname") throw new NoValue(`${where}: an xs:${type.base} (needs a declared prefix)`);
  const f = type.facets;
  const candidates = f.enumeration?.length
    ? [f.enumeration[0] as string]
    : [
        // The shortest string each pattern of the last derivation step matches.
        ...(f.patterns.at(-1) ?? []).map((p) => patternExample(p.source)),
        ...(kind === "int" || kind === "bigint"
          ? [
              "1",
              "0",
              "-1",
              f.minInclusive,
              f.maxInclusive,
              f.minExclusive && `${BigInt(f.minExclusive) + 1n}`,
            ]
          : (CANDIDATES[type.base] ?? ["a"])),
      ];
  const length = f.length ?? f.minLength;
  for (const c of candidates) {
    if (c === undefined || c === "") continue;
    const literal = kind === "string" && length !== undefined && length > 1 ? c.repeat(length) : c;
    try {
      checkLexical(type, literal, where);
      return leaf(type, literal);
    } catch {}
  }
  throw new NoValue(`${where}: no literal of ${type.name} accepted by its facets`);
}

/**
 * A short string an XSD pattern (XML Schema Part 2 Appendix F) matches, or undefined when the
 * pattern uses what this reads no further: the first branch of each alternation, each atom its
 * fewest times, the first character of a class (`a` for a negated one), `0` for `\d`, `a` for
 * the other escapes that name a class.
 */
export function patternExample(pattern: string): string | undefined {
  let i = 0;
  const branch = (): string | undefined => {
    let out = "";
    while (i < pattern.length && pattern[i] !== "|" && pattern[i] !== ")") {
      const piece = atom();
      if (piece === undefined) return undefined;
      const times = quantifier();
      if (times === undefined) return undefined;
      out += piece.repeat(times);
    }
    return out;
  };
  const alternatives = (): string | undefined => {
    const first = branch();
    while (pattern[i] === "|") {
      i++;
      if (branch() === undefined) return undefined;
    }
    return first;
  };
  const escaped = (): string | undefined => {
    const [example, next] = escapeExample(pattern, i);
    i = next;
    return example;
  };
  const atom = (): string | undefined => {
    const c = pattern[i];
    if (c === "(") {
      i++;
      const inner = alternatives();
      if (pattern[i] !== ")") return undefined;
      i++;
      return inner;
    }
    if (c === "[") {
      // The class ends at the first `]` not escaped (`\]` is one of its characters).
      let end = i + 1;
      while (end < pattern.length && pattern[end] !== "]") end += pattern[end] === "\\" ? 2 : 1;
      if (end >= pattern.length) return undefined;
      const body = pattern.slice(i + 1, end);
      i = end + 1;
      if (body.startsWith("^") || body.includes("-[")) return "a";
      return body.startsWith("\\") ? escapeExample(body, 0)[0] : body[0];
    }
    if (c === "\\") return escaped();
    i++;
    return c === "." ? "a" : c;
  };
  const quantifier = (): number | undefined => {
    const c = pattern[i];
    if (c === "?" || c === "*") {
      i++;
      return 0;
    }
    if (c === "+") {
      i++;
      return 1;
    }
    if (c === "{") {
      const end = pattern.indexOf("}", i);
      const min = Number.parseInt(pattern.slice(i + 1, end), 10);
      if (end < 0 || !Number.isSafeInteger(min) || min > 1000) return undefined;
      i = end + 1;
      return min;
    }
    return 1;
  };
  const example = alternatives();
  return i === pattern.length ? example : undefined;
}

/** A character the escape at `at` (a backslash) matches, and the index after the escape. */
function escapeExample(pattern: string, at: number): [string | undefined, number] {
  const c = pattern[at + 1];
  if (c === undefined) return [undefined, at + 1];
  if (c === "p" || c === "P") {
    const end = pattern.indexOf("}", at);
    return end < 0 ? [undefined, pattern.length] : ["a", end + 1];
  }
  const named: Record<string, string> = {
    ...{ d: "0", s: " ", i: "a", c: "a", w: "a", n: "\n", t: "\t", r: "\r" },
    ...{ D: "a", S: "a", I: "-", C: " ", W: " " },
  };
  return [named[c] ?? c, at + 2];
}

function leaf(type: SimpleType, lexical: string): Leaf {
  return { kind: "leaf", base: type.variety === "atomic" ? type.base : "string", lexical };
}

/** The value handlers receive (and may return): the package's decoded forms (README: Built-in types). */
export function decoded(node: Node): unknown {
  if (node.kind === "list") return node.items.map(decoded);
  if (node.kind === "leaf") {
    switch (BUILTIN_INFO[node.base].value) {
      case "boolean":
        return node.lexical === "true" || node.lexical === "1";
      case "int":
      case "float":
        return Number(node.lexical);
      case "bigint":
        return BigInt(node.lexical);
      case "bytes":
        return node.base === "hexBinary"
          ? Uint8Array.from(Buffer.from(node.lexical, "hex"))
          : Uint8Array.from(Buffer.from(node.lexical, "base64"));
      default:
        return node.lexical;
    }
  }
  const out: Record<string, unknown> = {};
  for (const [name, a] of node.attributes) out[name] = decoded(a);
  for (const [name, c] of node.children) out[name] = Array.isArray(c) ? c.map(decoded) : decoded(c);
  for (const name of node.emptyLists) out[name] = [];
  if (node.simpleContent !== undefined) out.$value = decoded(node.simpleContent);
  return out;
}

/** node-soap's input form: literals as strings, attributes under `attributes`, simple content `$value`. */
export function nodeSoapInput(node: Node): unknown {
  if (node.kind === "leaf") return node.lexical;
  if (node.kind === "list") return node.items.map((i) => i.lexical).join(" ");
  const out: Record<string, unknown> = {};
  const attributes = node.attributes.filter(([, a]) => !a.implied);
  if (attributes.length > 0) out.attributes = Object.fromEntries(attributes.map(([n, a]) => [n, a.lexical]));
  for (const [name, c] of node.children)
    out[name] = Array.isArray(c) ? c.map(nodeSoapInput) : nodeSoapInput(c);
  if (node.simpleContent !== undefined) out.$value = node.simpleContent.lexical;
  return out;
}

/**
 * zeep's input form: attributes and elements alike as keyword arguments, simple content
 * `_value_1`; each literal tagged with its built-in, which the zeep side turns into zeep's own
 * Python value for that type (`pythonvalue`).
 */
export function zeepInput(node: Node): unknown {
  if (node.kind === "leaf") return { $xsd: node.base, lexical: node.lexical };
  if (node.kind === "list") return node.items.map(zeepInput);
  const out: Record<string, unknown> = {};
  for (const [name, a] of node.attributes) if (!a.implied) out[name] = zeepInput(a);
  for (const [name, c] of node.children) out[name] = Array.isArray(c) ? c.map(zeepInput) : zeepInput(c);
  if (node.simpleContent !== undefined) out._value_1 = zeepInput(node.simpleContent);
  return out;
}

export type Client = "node-soap" | "zeep";

/**
 * Where a client's result differs from the expected value, allowing each client's documented
 * value forms: numbers as numbers or strings, `xs:date` / `xs:dateTime` as a `Date` (node-soap)
 * or an ISO 8601 string with an offset (zeep), binary as base64, the g* types as zeep's tuples, a single occurrence of a
 * repeated element as itself (node-soap), attributes under `attributes` (node-soap), simple
 * content as `$value` (node-soap) or `_value_1` (zeep); an absent optional element as `null` or
 * `[]` (zeep lists every element of the type).
 */
export function differences(expected: Node, actual: unknown, client: Client, path = "result"): string[] {
  // node-soap keeps the xsi:type of an encoded simple value (SOAP 1.1 §5) as its attribute.
  if (client === "node-soap" && expected.kind !== "complex" && typedSimple(actual)) actual = actual.$value;
  // zeep reads soapenc:string as the SOAP-ENC schema declares it: simple content with id/href.
  if (client === "zeep" && expected.kind !== "complex" && encodedSimple(actual)) actual = actual._value_1;
  if (expected.kind === "list") {
    const items = Array.isArray(actual)
      ? actual
      : typeof actual === "string"
        ? actual.split(/\s+/).filter(Boolean)
        : [actual];
    if (items.length !== expected.items.length) return [`${path}: expected ${expected.items.length} items`];
    return expected.items.flatMap((e, i) => differences(e, items[i], client, `${path}[${i}]`));
  }
  if (expected.kind === "leaf") {
    return sameLeaf(expected, actual) ? [] : [`${path}: expected ${expected.lexical}, got ${show(actual)}`];
  }
  const emptyComplex = expected.attributes.length === 0 && expected.children.length === 0;
  // node-soap: an element of simple content without attributes is its value alone.
  if (client === "node-soap" && emptyComplex && expected.simpleContent && typeof actual !== "object")
    return differences(expected.simpleContent, actual, client, path);
  if (actual === null || actual === undefined || actual === "" || typeof actual !== "object") {
    if (emptyComplex && expected.simpleContent === undefined && actual !== 0) return [];
    return [`${path}: expected an object, got ${show(actual)}`];
  }
  const got = actual as Record<string, unknown>;
  const found: string[] = [];
  const seen = new Set<string>();
  const nodeAttrs =
    client === "node-soap" ? (got.attributes as Record<string, unknown> | undefined) : undefined;
  for (const [name, a] of expected.attributes) {
    seen.add(name);
    found.push(...differences(a, nodeAttrs?.[name] ?? got[name], client, `${path}@${name}`));
  }
  for (const [name, c] of expected.children) {
    seen.add(name);
    const value = got[name];
    if (Array.isArray(c)) {
      const items = Array.isArray(value) ? value : [value];
      if (items.length !== c.length)
        found.push(`${path}.${name}: expected ${c.length} items, got ${show(value)}`);
      else
        for (const [i, e] of c.entries())
          found.push(...differences(e, items[i], client, `${path}.${name}[${i}]`));
    } else found.push(...differences(c, value, client, `${path}.${name}`));
  }
  if (expected.simpleContent !== undefined) {
    const key = client === "node-soap" ? "$value" : "_value_1";
    seen.add(key);
    found.push(...differences(expected.simpleContent, got[key], client, `${path}.${key}`));
  }
  if (client === "node-soap") seen.add("attributes");
  for (const [key, value] of Object.entries(got)) {
    if (seen.has(key) || value === null || value === undefined) continue;
    if (Array.isArray(value) && value.length === 0) continue;
    // zeep: a choice or wildcard with nothing in it, `_value_1: {}`.
    if (client === "zeep" && typeof value === "object" && Object.keys(value).length === 0) continue;
    found.push(`${path}.${key}: not sent, got ${show(value)}`);
  }
  return found;
}

/** node-soap's form of a simple value with `xsi:type`: `{ attributes: { "xsi:type": ... }, $value }`. */
function typedSimple(value: unknown): value is { $value: unknown } {
  if (typeof value !== "object" || value === null || !("$value" in value)) return false;
  const attributes = (value as { attributes?: unknown }).attributes;
  return (
    typeof attributes === "object" &&
    attributes !== null &&
    Object.keys(attributes).every((k) => k === "xsi:type")
  );
}

/** zeep's form of a SOAP-ENC simple value: `{ _value_1, id: null, href: null, _attr_1: null }`. */
function encodedSimple(value: unknown): value is { _value_1: unknown } {
  if (typeof value !== "object" || value === null || !("_value_1" in value)) return false;
  return Object.entries(value).every(([k, v]) => k === "_value_1" || v === null);
}

function sameLeaf(expected: Leaf, actual: unknown): boolean {
  const { base, lexical } = expected;
  const kind = BUILTIN_INFO[base].value;
  // zeep: xs:gYear as (year, tz), xs:gMonthDay as (month, day, tz), ... (no tz here: null).
  if (Array.isArray(actual) && base.startsWith("g"))
    return (
      JSON.stringify(actual.filter((n) => n !== null)) === JSON.stringify(lexical.match(/\d+/g)?.map(Number))
    );
  if (actual instanceof Date) return actual.getTime() === Date.parse(lexical);
  if (actual instanceof Uint8Array)
    return Buffer.from(actual).equals(Buffer.from(decoded(expected) as Uint8Array));
  if (typeof actual === "boolean") return kind === "boolean" && actual === decoded(expected);
  if (typeof actual === "number" || typeof actual === "bigint")
    return (
      (kind === "int" || kind === "bigint" || kind === "decimal" || kind === "float") &&
      Number(actual) === Number(lexical)
    );
  if (typeof actual !== "string") return false;
  if (actual === lexical) return true;
  if (kind === "bytes") {
    const bytes = Buffer.from(decoded(expected) as Uint8Array);
    return (
      actual === bytes.toString("base64") || actual.toUpperCase() === bytes.toString("hex").toUpperCase()
    );
  }
  if (kind === "boolean") return (actual === "true" || actual === "1") === decoded(expected);
  if (kind !== "string") return Number(actual) === Number(lexical);
  if (base === "dateTime" || base === "date") return Date.parse(actual) === Date.parse(lexical);
  if (base === "time") return actual.replace(/(\+00:00|Z)$/, "") === lexical.replace(/Z$/, "");
  return false;
}

function show(value: unknown): string {
  return typeof value === "bigint"
    ? `${value}n`
    : value instanceof Date
      ? value.toISOString()
      : (JSON.stringify(value) ?? String(value));
}
