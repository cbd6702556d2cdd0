import { escapeXml } from "@svc/errors";
import { clark, type ParsedElement, parseXmlDocument, type resolveLimits } from "../xml/reader.js";
import { TYPE_NAMES } from "../xsd/model.js";
import {
  type CompiledSchema,
  SchemaCompileError,
  type SchemaSource,
  schemaComponents,
  type Tolerance,
  XS_NS,
} from "../xsd/schema.js";
import { type FoundBinding, type Messages, type Part, wsdlChildren } from "./contract-model.js";
import { messageName, messageParts } from "./wsdl-messages.js";

/** What {@link bodyShape} reads an operation's messages with. */
interface ShapeContext {
  operation: string;
  style: "document" | "rpc";
  binding: FoundBinding;
  messages: Messages;
  schema: CompiledSchema;
  declared: DeclaredElements;
  tolerance: Tolerance;
}

/**
 * How one message of an operation travels in the Body (WSDL 1.1 §3.5, wsdl11soap12 §3.5): the
 * parts `soap:body parts=` names (all of them when it is absent, but those bound to a
 * `soap:header` of the same message, §3.7); in document style, each part directly in the Body (an
 * `element=` part as that element, a `type=` part as an unqualified element named after the
 * part); in rpc style, one wrapper element named after the operation (`operationResponse` for the
 * output) in the `namespace` of soap:body, with an unqualified accessor per part named after it.
 */
export function bodyShape(
  bop: ParsedElement,
  io: ParsedElement,
  direction: "input" | "output",
  ctx: ShapeContext,
): { element: string; body: string[] } {
  const { operation, binding } = ctx;
  const message = messageParts(io, ctx.messages, ctx.tolerance);
  const bound = wsdlChildren(bop, direction)[0];
  const soapBody = bound?.children.find((c) => c.namespace === binding.ns && c.localName === "body");
  let parts = message.parts;
  const listed = soapBody?.attributes.parts;
  if (listed !== undefined) {
    const names = listed.split(/[ \t\r\n]+/).filter((n) => n !== "");
    const byName = new Map(message.parts.map((p) => [p.name, p]));
    parts = names.flatMap((n) => {
      const part = byName.get(n);
      if (part) return [part];
      // The names that name a part are the Body's; one that names none adds nothing to it.
      ctx.tolerance.pass(
        "undeclared-body-part",
        `operation "${operation}": ${binding.prefix}:body parts names "${n}", which message "${message.name}" does not have`,
        `the ${direction}'s Body holds the parts listed that message "${message.name}" has${names.some((m) => byName.has(m)) ? "" : " (none: an empty Body)"}`,
        soapBody,
      );
      return [];
    });
  } else {
    const inHeaders = new Set(
      (bound?.children ?? [])
        .filter((h) => h.namespace === binding.ns && h.localName === "header")
        .filter(
          (h) =>
            h.attributes.message !== undefined &&
            messageName(h, ctx.messages, ctx.tolerance) === messageName(io, ctx.messages, ctx.tolerance),
        )
        .map((h) => h.attributes.part),
    );
    parts = parts.filter((p) => !inHeaders.has(p.name));
  }
  if (ctx.style === "rpc") {
    const namespace = soapBody?.attributes.namespace;
    if (namespace === undefined || namespace === "") {
      throw new SchemaCompileError(
        `operation "${operation}": rpc style needs ${binding.prefix}:body namespace= for the ${direction}'s wrapper element (WS-I Basic Profile 1.1 R2717)`,
      );
    }
    const local = direction === "input" ? operation : `${operation}Response`;
    const wrapper = clark(namespace, local);
    if (ctx.schema.hasElement(wrapper)) {
      throw new SchemaCompileError(
        `operation "${operation}": its rpc wrapper element ${wrapper} is also a global element of the schema`,
      );
    }
    const members = parts.map((p) => ({
      name: p.name,
      type: p.type ?? namedTypeOf(p, operation, ctx.schema),
    }));
    ctx.declared.add(namespace, local, members, operation);
    return { element: wrapper, body: [wrapper] };
  }
  const only = parts[0];
  if (parts.length === 1 && only?.element !== undefined)
    return { element: only.element, body: [only.element] };
  const body = parts.map((p) => p.element ?? p.name);
  if (new Set(body).size !== body.length) {
    throw new SchemaCompileError(
      `operation "${operation}": two parts of message "${message.name}" put the same element in the Body: they could not be told apart`,
    );
  }
  const local = direction === "input" ? operation : `${operation}Response`;
  ctx.declared.add(
    PARTS_NS,
    local,
    parts.map((p) =>
      p.element !== undefined ? { ref: p.element } : { name: p.name, type: p.type as string },
    ),
    operation,
  );
  return { element: clark(PARTS_NS, local), body };
}

/**
 * The namespace of the elements the loader declares for a document-style Body of several parts,
 * `type=` parts or none: their children are the Body's.
 */
const PARTS_NS = "urn:svc:soap-envelope:document-parts";

/** The named type of an rpc part's element: its accessor has that type (WSDL 1.1 §3.5). */
function namedTypeOf(part: Part, operation: string, schema: CompiledSchema): string {
  const decl = schemaComponents(schema)?.elements.get(part.element as string);
  const name = decl && TYPE_NAMES.get(decl.type);
  if (name === undefined) {
    throw new SchemaCompileError(
      `operation "${operation}": rpc part "${part.name}" names element ${part.element}, whose type is anonymous: give the part type= (WS-I Basic Profile 1.1 R2203)`,
    );
  }
  return name;
}

/** A member of a declared wrapper: a local element of a type, or a reference to a global element. */
type Member = { name: string; type: string } | { ref: string };

/**
 * The elements the loader declares from the WSDL: rpc wrappers and the wrappers of document-style
 * Bodies of several parts, as XSD documents compiled with the contract's schemas (one per
 * namespace, each referring to the contract's types and elements by Clark name).
 */
export class DeclaredElements {
  private readonly byNamespace = new Map<string, Map<string, { members: Member[]; key: string }>>();

  add(namespace: string, local: string, members: Member[], operation: string): void {
    let elements = this.byNamespace.get(namespace);
    if (!elements) {
      elements = new Map();
      this.byNamespace.set(namespace, elements);
    }
    const key = JSON.stringify(members);
    const before = elements.get(local);
    if (before && before.key !== key) {
      throw new SchemaCompileError(
        `operation "${operation}": its ${namespace === PARTS_NS ? "Body" : `rpc wrapper {${namespace}}${local}`} differs from another binding's or operation's of the same name`,
      );
    }
    elements.set(local, { members, key });
  }

  sources(limits: ReturnType<typeof resolveLimits>): SchemaSource[] {
    const out: SchemaSource[] = [];
    for (const [namespace, elements] of this.byNamespace) {
      const prefixes = new Map<string, string>();
      const ref = (name: string) => {
        if (!name.startsWith("{")) return name;
        const close = name.indexOf("}");
        const ns = name.slice(1, close);
        let prefix = prefixes.get(ns);
        if (prefix === undefined) {
          prefix = `n${prefixes.size}`;
          prefixes.set(ns, prefix);
        }
        return `${prefix}:${name.slice(close + 1)}`;
      };
      let body = "";
      for (const [local, { members }] of elements) {
        const content = members
          .map((m) =>
            "ref" in m
              ? `<xs:element ref="${escapeXml(ref(m.ref))}"/>`
              : `<xs:element name="${escapeXml(m.name)}" type="${escapeXml(ref(m.type))}"/>`,
          )
          .join("");
        body += `<xs:element name="${escapeXml(local)}"><xs:complexType><xs:sequence>${content}</xs:sequence></xs:complexType></xs:element>`;
      }
      let head = `<xs:schema xmlns:xs="${XS_NS}"${namespace === "" ? "" : ` targetNamespace="${escapeXml(namespace)}"`}`;
      let imports = "";
      for (const [ns, prefix] of prefixes) {
        head += ` xmlns:${prefix}="${escapeXml(ns)}"`;
        if (ns !== namespace && ns !== XS_NS) imports += `<xs:import namespace="${escapeXml(ns)}"/>`;
      }
      const text = `${head}>${imports}${body}</xs:schema>`;
      out.push({
        root: parseXmlDocument(text, limits),
        location: `the WSDL's message parts in ${namespace || "no namespace"}`,
      });
    }
    return out;
  }
}
