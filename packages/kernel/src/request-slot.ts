/**
 * One value per request object, private to the code that made the slot: the exchange of a
 * request, what an adapter decided for it before its handler runs.
 *
 * The value is a property of the request itself under the slot's own symbol (never a registered
 * one: no other code can name it), not an entry of a `WeakMap`. A young request kept in a
 * long-lived `WeakMap` lives through V8's young-generation collections (the scavenger visits a
 * table's values as roots whatever its keys' state), and once the value refers back to its key (an
 * exchange holds its request's view) neither dies before a full collection: every request and what
 * it allocated was moved to the old generation and swept there. A property dies with its request,
 * and a symbol-keyed one is not listed by `Object.keys`, `for...in` or `JSON.stringify`. A private
 * field (`#value`) would hide it from `Object.getOwnPropertySymbols` too, but costs twice as much a
 * request to add (a throw-away object per stamp). An object that takes no new property (frozen,
 * sealed, or non-extensible) keeps its value in a `WeakMap` instead.
 */
export interface RequestSlot<T> {
  /** The value `set` for `owner`, if any. */
  get(owner: object): T | undefined;
  /** Keeps `value` for `owner`, in place of the one before. */
  set(owner: object, value: T): void;
  /** Forgets the value of `owner`. */
  delete(owner: object): void;
}

/**
 * A new slot, with its own private name: only the code holding the slot reads what it holds.
 *
 * @example
 * const decided = requestSlot<Decision>();
 * decided.set(req, decision);
 * decided.get(req); // decision
 */
export function requestSlot<T>(): RequestSlot<T> {
  const key = Symbol("@svc/kernel request slot");
  const sealed = new WeakMap<object, T>();
  let anySealed = false;
  type Owner = { [key]?: T | undefined };
  return {
    get(owner) {
      const value = (owner as Owner)[key];
      return value !== undefined || !anySealed ? value : sealed.get(owner);
    },
    set(owner, value) {
      if (Object.isExtensible(owner)) (owner as Owner)[key] = value;
      else {
        anySealed = true;
        sealed.set(owner, value);
      }
    },
    delete(owner) {
      if (key in owner) (owner as Owner)[key] = undefined;
      else if (anySealed) sealed.delete(owner);
    },
  };
}
