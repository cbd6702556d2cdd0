/**
 * Link relation names: registered ones (`self`, `next`, `previous`, `first`, `last`; RFC 8288
 * §2.1.1, the IANA registry) and a few application names. Using these constants keeps link names
 * consistent across resources; note `previous`, not the `prev` other toolkits use.
 *
 * @example
 * builder.link(Rel.SELF, "/employees/7").link(Rel.MANAGER, "/employees/3");
 * @see https://www.iana.org/assignments/link-relations/link-relations.xhtml
 */
export const Rel = Object.freeze({
  SELF: "self",
  NEXT: "next",
  PREVIOUS: "previous",
  FIRST: "first",
  LAST: "last",
  UPDATE: "update",
  DELETE: "delete",
  MANAGER: "manager",
  DEPARTMENT: "department",
  TRACKING: "tracking",
  INVOICE: "invoice",
  CANCEL: "cancel",
  PAYMENT: "payment",
} as const);

/** One of the relation names of {@link Rel}. */
export type Relation = (typeof Rel)[keyof typeof Rel];

/**
 * Every relation name of {@link Rel}, in declaration order.
 *
 * @example RELATIONS.includes("previous") // true
 * @see Rel
 */
export const RELATIONS: readonly Relation[] = Object.freeze(Object.values(Rel));
