/**
 * Returns the object it is given from its constructor, so that a subclass's private fields are
 * defined on that object (ECMA-262 §10.2.1.3 [[Construct]]: an object returned by a base
 * constructor is `this` for the derived class's field initialisers).
 */
class Stamp {
  constructor(target: object) {
    // biome-ignore lint/correctness/noConstructorReturn: the return is what lets a subclass add its private field to an object it did not make.
    return target as Stamp;
  }
}

/**
 * One value per request object, private to the code that made the slot: the exchange of a
 * request, what an adapter decided for it before its handler runs.
 *
 * The value is a private field defined on the request itself, not an entry of a `WeakMap`. A
 * young request kept in a long-lived `WeakMap` lives through V8's young-generation collections
 * (the scavenger visits a table's values as roots whatever its keys' state), and once the value
 * refers back to its key (an exchange holds its request's view) neither dies before a full
 * collection: every request and what it allocated was moved to the old generation and swept there.
 * A private field dies with its request and is not seen by property enumeration, `Reflect`, a
 * `Proxy` or a copy of the object. An object that takes no new field (frozen, sealed, or
 * non-extensible) keeps its value in a `WeakMap` instead.
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
  const sealed = new WeakMap<object, T>();
  let anySealed = false;
  class Slot extends Stamp {
    #value: T | undefined = undefined;

    static get(owner: object): T | undefined {
      if (#value in owner) return (owner as Slot).#value;
      return anySealed ? sealed.get(owner) : undefined;
    }

    static set(owner: object, value: T): void {
      if (#value in owner) (owner as Slot).#value = value;
      else if (Object.isExtensible(owner)) new Slot(owner).#value = value;
      else {
        anySealed = true;
        sealed.set(owner, value);
      }
    }

    static delete(owner: object): void {
      if (#value in owner) (owner as Slot).#value = undefined;
      else if (anySealed) sealed.delete(owner);
    }
  }
  return { get: Slot.get, set: Slot.set, delete: Slot.delete };
}
