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
  // The owner read or written last and its value. A request's steps read its slots one after
  // the other (each middleware, the pipeline's steps), and a property read keyed by a symbol on a
  // request whose shape changes as it goes (Express, Node.js and the application add fields) is a
  // megamorphic look-up of some 200 instructions; comparing the owner is two. It holds one owner
  // (the last request) until another is read, never more.
  let lastOwner: object | undefined;
  let lastValue: T | undefined;
  type Owner = { [key]?: T | undefined };
  return {
    get(owner) {
      if (owner === lastOwner) return lastValue;
      const own = (owner as Owner)[key];
      const value = own !== undefined || !anySealed ? own : sealed.get(owner);
      lastOwner = owner;
      lastValue = value;
      return value;
    },
    set(owner, value) {
      if (Object.isExtensible(owner)) (owner as Owner)[key] = value;
      else {
        anySealed = true;
        sealed.set(owner, value);
      }
      lastOwner = owner;
      lastValue = value;
    },
    delete(owner) {
      if (key in owner) (owner as Owner)[key] = undefined;
      else if (anySealed) sealed.delete(owner);
      if (owner === lastOwner) lastValue = undefined;
    },
  };
}
