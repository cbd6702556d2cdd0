import { HttpError } from "@svc/errors";
import { holdsExactly } from "./exact-numbers.js";
import type { XmlValue } from "./xml-body.js";

/**
 * The part of a JSON Schema (2020-12 §10, Validation §6.1.1) that types an XML representation
 * read back: `type`, an object's `properties`, an array's `items`, and `anyOf` / `oneOf` whose
 * first branch that is not `{ type: "null" }` is taken (the shape `z.toJSONSchema` gives a
 * nullable field). Other keywords are ignored here: validation stays the application's.
 */
export interface XmlBodySchema {
  /** `integer`, `number`, `boolean`, `string`, `array`, `object` (and `null`, passed over). */
  type?: string | readonly string[];
  /** An object's members, by name. */
  properties?: Readonly<Record<string, XmlBodySchema>>;
  /** The schema of each entry of an array. */
  items?: XmlBodySchema;
  /** Alternatives: the first that is not `{ type: "null" }` types the value. */
  anyOf?: readonly XmlBodySchema[];
  /** As `anyOf`. */
  oneOf?: readonly XmlBodySchema[];
}

interface FieldError {
  field: string;
  message: string;
}

/** The one type a schema gives a value (the first that is not "null"), and the schema that gives it. */
function typeOf(schema: XmlBodySchema | undefined): {
  type: string | undefined;
  schema: XmlBodySchema | undefined;
} {
  if (schema === undefined) return { type: undefined, schema };
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches !== undefined) {
    const branch = branches.find(
      (b) => !(b.type === "null" || (Array.isArray(b.type) && b.type.every((t) => t === "null"))),
    );
    return typeOf(branch);
  }
  const type = Array.isArray(schema.type)
    ? schema.type.find((t) => t !== "null")
    : (schema.type as string | undefined);
  return { type, schema };
}

// XML Schema Part 2 §3.2.3 (decimal), §3.2.5 (double) lexical forms, without INF and NaN: JSON has neither.
const XSD_NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** The XML text of a number in the JSON spelling `holdsExactly` reads (`+.5` → `0.5`). */
function jsonSpelling(text: string): string {
  let t = text.startsWith("+") ? text.slice(1) : text;
  const negative = t.startsWith("-");
  if (negative) t = t.slice(1);
  if (t.startsWith(".")) t = `0${t}`;
  t = t.replace(/\.(?=[eE]|$)/, "");
  return negative ? `-${t}` : t;
}

function shape(
  value: XmlValue | XmlValue[] | undefined,
  schema: XmlBodySchema | undefined,
  path: string,
  errors: FieldError[],
): unknown {
  const at = path === "" ? "(body)" : path;
  if (value === null || value === undefined) return null;
  const { type, schema: typed } = typeOf(schema);
  const join = (key: string | number) => (path === "" ? String(key) : `${path}.${key}`);
  if (Array.isArray(value)) {
    // Repeated elements of one name: a list whatever the schema says of one.
    const itemSchema = type === "array" ? typed?.items : typed;
    return value.map((v, i) => shape(v, itemSchema, join(i), errors));
  }
  if (typeof value === "string") {
    switch (type) {
      case "array":
        if (value === "") return [];
        return [shape(value, typed?.items, join(0), errors)];
      case "object":
        if (value === "") return {};
        errors.push({ field: at, message: "must be an element with child elements" });
        return value;
      case "integer":
      case "number": {
        // XML Schema Part 2 §4.3.6: numeric types collapse white space.
        const text = value.trim();
        if (!XSD_NUMBER.test(text)) {
          errors.push({ field: at, message: `must be ${type === "integer" ? "an integer" : "a number"}` });
          return value;
        }
        const spelled = jsonSpelling(text);
        const n = Number(spelled);
        if (!holdsExactly(spelled)) {
          errors.push({
            field: at,
            message: `must be a number held exactly by a 64-bit binary float; ${text.slice(0, 40)} is not`,
          });
          return value;
        }
        if (type === "integer" && !Number.isInteger(n)) {
          errors.push({ field: at, message: "must be an integer" });
          return value;
        }
        return n;
      }
      case "boolean": {
        // XML Schema Part 2 §3.2.2.1: true, false, 1, 0.
        const text = value.trim();
        if (text === "true" || text === "1") return true;
        if (text === "false" || text === "0") return false;
        errors.push({ field: at, message: "must be true or false" });
        return value;
      }
      default:
        return value;
    }
  }
  const keys = Object.keys(value);
  // The XML representation writes a list as `<item>` children; an element holding `<item>`s and
  // nothing else is read back as that list, unless the schema says it is an object.
  if (type === "array" || (type === undefined && keys.length === 1 && keys[0] === "item")) {
    if (keys.length !== 1 || keys[0] !== "item") {
      errors.push({ field: at, message: "must be a list of <item> elements" });
      return value;
    }
    const items = value.item;
    const list = Array.isArray(items) ? items : [items];
    return list.map((v, i) => shape(v, typed?.items, join(i), errors));
  }
  if (type !== undefined && type !== "object") {
    errors.push({
      field: at,
      message: `must be ${type === "string" ? "text" : `a value of type ${type}`}, not child elements`,
    });
    return value;
  }
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const child = shape(value[key], typed?.properties?.[key], join(key), errors);
    Object.defineProperty(out, key, { value: child, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * Reads back a document the `xml` representation wrote (`parseXmlBody`'s plain objects) as the
 * value it was written from: the root element unwrapped (`<resource>…</resource>` → its content),
 * an element holding only `<item>` children a list, `xsi:nil` `null`. XML carries text only, so
 * without a `schema` every leaf stays a string; with one, each leaf is typed as the schema says
 * (`integer` and `number` from XML Schema's decimal and double forms, refused when no 64-bit float
 * holds the text exactly; `boolean` from `true`, `false`, `1`, `0`), an empty element is `[]` or
 * `{}` where the schema says array or object, and a list of one `<item>` stays a list. A leaf that
 * does not have its type → 400 with one `{ field, message }` per such value.
 *
 * @example fromXmlRepresentation(parseXmlBody("<resource><id>3</id><tags><item>a</item><item>b</item></tags></resource>"), { type: "object", properties: { id: { type: "integer" } } }) // { id: 3, tags: ["a", "b"] }
 * @see https://www.w3.org/TR/xmlschema-2/#built-in-primitive-datatypes
 */
export function fromXmlRepresentation(document: Record<string, XmlValue>, schema?: XmlBodySchema): unknown {
  const [root] = Object.keys(document);
  const errors: FieldError[] = [];
  const value = shape(root === undefined ? null : document[root], schema, "", errors);
  if (errors.length > 0) {
    throw HttpError.badRequest("Invalid XML body: a value does not have its type", {
      code: "malformed_body",
      errors: errors.slice(0, 20),
    });
  }
  return value;
}
