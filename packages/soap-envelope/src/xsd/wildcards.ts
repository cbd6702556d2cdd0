import type { ParsedElement } from "../xml/reader.js";
import type { CompileContext } from "./compile-context.js";
import { allowAttributes, type SchemaDoc, where } from "./components.js";
import { SchemaCompileError } from "./errors.js";
import { REGISTRY, type Wildcard } from "./model.js";

/**
 * `xs:any` or `xs:anyAttribute` (Part 1 §3.10): the namespaces it matches and how the elements or
 * attributes it matches are processed.
 */
export function wildcard(
  ctx: CompileContext,
  node: ParsedElement,
  doc: SchemaDoc,
  allowed: readonly string[],
): Wildcard {
  allowAttributes(node, doc.location, allowed);
  const process = node.attributes.processContents ?? "strict";
  if (process !== "strict" && process !== "lax" && process !== "skip")
    throw new SchemaCompileError(
      `${where(node, doc)}: processContents "${process}" is not strict, lax or skip`,
    );
  const raw = (node.attributes.namespace ?? "##any").trim();
  let namespaces: Wildcard["namespaces"];
  if (raw === "##any") namespaces = { kind: "any" };
  else if (raw === "##other") namespaces = { kind: "not", namespace: doc.targetNamespace };
  else {
    const list: string[] = [];
    for (const token of raw.split(/[ \t\n\r]+/)) {
      if (token === "") continue;
      if (token === "##targetNamespace") list.push(doc.targetNamespace);
      else if (token === "##local") list.push("");
      else if (token.startsWith("##"))
        throw new SchemaCompileError(
          `${where(node, doc)}: namespace "${token}" is not a namespace constraint`,
        );
      else list.push(token);
    }
    namespaces = { kind: "list", namespaces: list };
  }
  const wildcard: Wildcard = { namespaces, process };
  REGISTRY.set(wildcard, ctx.registry);
  return wildcard;
}

/** Part 1 §3.10.6 (attribute wildcard union), kept simple: `##any` wins, else the first given. */
export function unionWildcard(a: Wildcard | undefined, b: Wildcard | undefined): Wildcard | undefined {
  if (!a) return b;
  if (!b) return a;
  if (b.namespaces.kind === "any") return b;
  if (a.namespaces.kind === "any") return a;
  if (a.namespaces.kind === "list" && b.namespaces.kind === "list") {
    return {
      ...a,
      namespaces: {
        kind: "list",
        namespaces: [...new Set([...a.namespaces.namespaces, ...b.namespaces.namespaces])],
      },
    };
  }
  return a;
}
