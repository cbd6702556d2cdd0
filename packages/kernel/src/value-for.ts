/**
 * The `get` and `set` of a `Map` or a `WeakMap`.
 *
 * @internal
 */
export interface KeyedValues<K, V> {
  get(key: K): V | undefined;
  set(key: K, value: V): unknown;
}

/**
 * The value `values` holds for `key`: made with `make(key)` and kept there the first time it is
 * asked for, the kept one every time after.
 *
 * @example const slot = valueFor(slots, pipeline, () => requestSlot<Prepared>());
 * @internal
 */
export function valueFor<K, V>(values: KeyedValues<K, V>, key: K, make: (key: K) => V): V {
  let value = values.get(key);
  if (value === undefined) {
    value = make(key);
    values.set(key, value);
  }
  return value;
}
