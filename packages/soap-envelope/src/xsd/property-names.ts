import type { ParsedElement } from "../xml/reader.js";
import { type SchemaDoc, where } from "./components.js";
import { SchemaCompileError } from "./errors.js";
import { type ComplexType, elementParticles, type Particle } from "./model.js";

/**
 * A complex type's value is a plain object with one property per attribute and element name.
 * XML Schema 1.0 Part 1 §2.5 puts local attributes and local elements in separate symbol spaces
 * (and §3.4.6 ct-props-correct.4 only forbids two attributes of the same name *and* namespace),
 * so a valid schema may name an attribute and an element `id`, or two attributes `id` in
 * different namespaces. Both would be the one property `id`: decoding would keep one value and
 * drop the other, encoding would write the value twice. Such a type is refused at compile time.
 *
 * The same holds for one element name in two particles that can both match in one instance:
 * §3.8.4 (Element Sequence Valid) makes `<a>1</a><b/><a>2</a>` valid against the sequence
 * (a, b, a), but the value's one property `a` would keep the second and drop the first (a
 * gateway reading the first and the service reading the last would disagree). Alternatives of a
 * choice that occurs once never both match, so the same name in each stays allowed.
 */
export function checkPropertyNames(type: ComplexType, node: ParsedElement, doc: SchemaDoc): void {
  const owner =
    node.attributes.name !== undefined
      ? where(node, doc)
      : `${doc.location}: xs:complexType (of element "${type.name}")`;
  const attributes = new Set<string>();
  for (const a of type.attributes) {
    if (attributes.has(a.name)) {
      throw new SchemaCompileError(
        `${owner}: two attributes are named "${a.name}"; both would be the property "${a.name}" of the value`,
      );
    }
    attributes.add(a.name);
  }
  if (!type.content) return;
  for (const p of elementParticles(type.content)) {
    if (attributes.has(p.decl.localName)) {
      throw new SchemaCompileError(
        `${owner}: "${p.decl.localName}" is both an attribute and an element; both would be the property "${p.decl.localName}" of the value`,
      );
    }
  }
  coOccurringNames(type.content, false, new Set(), (name) => {
    throw new SchemaCompileError(
      `${owner}: the element "${name}" can occur in two places of its content model; both would be the property "${name}" of the value`,
    );
  });
}

/**
 * Adds to `into` the element names (property names: local names) a particle can give values to,
 * calling `clash` with a name two of its particles can both match in one instance: any two in a
 * sequence or an all group, and two alternatives of a choice when that choice can occur more than
 * once (`repeated`: it or a group around it has maxOccurs > 1). Groups nested in a sequence add to
 * the one set, so a deep nesting (a long chain of extensions) costs its size, not its square.
 */
function coOccurringNames(
  p: Particle,
  repeated: boolean,
  into: Set<string>,
  clash: (name: string) => never,
): void {
  if (p.kind === "element") {
    if (into.has(p.decl.localName)) clash(p.decl.localName);
    into.add(p.decl.localName);
    return;
  }
  // Every element a wildcard matches is one more entry of the one list `$any`.
  if (p.kind === "any") return;
  const again = repeated || p.max > 1;
  if (p.kind !== "choice" || again) {
    for (const item of p.items) coOccurringNames(item, again, into, clash);
    return;
  }
  // A choice that occurs once: its alternatives never both match, so each is checked alone.
  const union = new Set<string>();
  for (const item of p.items) {
    const alternative = new Set<string>();
    coOccurringNames(item, again, alternative, clash);
    for (const name of alternative) union.add(name);
  }
  for (const name of union) {
    if (into.has(name)) clash(name);
    into.add(name);
  }
}
