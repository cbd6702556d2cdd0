/**
 * The link relation names of the service contract (spec part 2, "Links"). Using these constants
 * keeps link names consistent across resources (spec part 2, Links rule 3); note `previous`, not
 * the `prev` other toolkits use.
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

/** One of the contract's relation names. */
export type Relation = (typeof Rel)[keyof typeof Rel];

/**
 * Every relation name of the contract, in the order the spec lists them.
 *
 * @example RELATIONS.includes("previous") // true
 * @see Rel
 */
export const RELATIONS: readonly Relation[] = Object.freeze(Object.values(Rel));
