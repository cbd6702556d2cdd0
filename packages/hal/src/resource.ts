import { MEDIA_TYPE } from "@svc/kernel";
import { checkBooleanOption, checkOptionNames } from "@svc/kernel/internal";
import { HAL_JSON } from "./hal-json.js";
import { checkTemplate, type HalLink, toHalLink } from "./link.js";
import { optionError } from "./option-error.js";

/** A rendered HAL document (draft-kelly-json-hal-11 §4). */
export interface HalDocument {
  _links?: Record<string, HalLink | HalLink[]>;
  _embedded?: Record<string, HalDocument | HalDocument[] | object | object[]>;
  [property: string]: unknown;
}

/** Options of {@link HalResource}. */
export interface HalResourceOptions {
  /**
   * Relations (links and embedded) that always render as an array, even with one entry, so
   * clients never see a relation switch between object and array (draft §4.1.1: "If [a relation]
   * may have multiple links, it SHOULD be an array").
   * @default []
   */
  arrayRelations?: readonly string[];
  /**
   * Render `_embedded: {}` when nothing is embedded, for clients that expect the key.
   * @default false
   */
  emptyEmbedded?: boolean;
}

/** Per-call options of {@link HalResource.link} and {@link HalResource.embed}. */
export interface RelationOptions {
  /**
   * Render this relation as an array, whatever the number of entries.
   * @default false (true when an array is passed)
   */
  array?: boolean;
}

type Embeddable = HalResource | object;

/** One relation of a resource: its name, its shape (array or single) and what it holds. */
interface Relation<T> {
  readonly rel: string;
  readonly array: boolean;
  readonly items: T[];
}

/** Relations a resource holds before its lookups go through a Map index. */
const INDEX_AFTER = 16;

/**
 * A resource's relations in the order they were added. Looked up by a linear scan (a resource
 * holds a handful of relations, and a scan costs less per response than a Map), with a Map index
 * built once the list grows past {@link INDEX_AFTER} entries so many relations stay linear overall.
 */
interface Relations<T> {
  readonly list: Relation<T>[];
  index: Map<string, Relation<T>> | undefined;
}

function relations<T>(): Relations<T> {
  return { list: [], index: undefined };
}

function relationOf<T>(table: Relations<T>, rel: string): Relation<T> | undefined {
  if (table.index !== undefined) return table.index.get(rel);
  const list = table.list;
  for (let i = 0; i < list.length; i++) {
    const entry = list[i] as Relation<T>;
    if (entry.rel === rel) return entry;
  }
  return undefined;
}

function addRelation<T>(table: Relations<T>, entry: Relation<T>): void {
  table.list.push(entry);
  if (table.index !== undefined) table.index.set(entry.rel, entry);
  else if (table.list.length > INDEX_AFTER) table.index = new Map(table.list.map((e) => [e.rel, e]));
}

const RESERVED = new Set(["_links", "_embedded"]);

/**
 * Builds one HAL resource: state, `_links` (with every Link Object attribute), `curies` and
 * `_embedded`. A relation is either a single object or an array, chosen once: passing an array or
 * `{ array: true }` (or listing it in `arrayRelations`) makes it an array even with one entry; adding
 * a second link to a single-object relation throws, so a relation's shape never depends on data.
 *
 * Serialises itself through `toJSON()`, so `res.json(resource)` and `JSON.stringify` both work;
 * names its media type under the kernel's `MEDIA_TYPE`, so @svc/negotiate's `representations()`
 * labels it `application/hal+json`.
 *
 * @example
 * const employee = new HalResource({ id: 7, name: "Ada" })
 *   .link(Rel.SELF, "/employees/7")
 *   .link(Rel.MANAGER, { href: "/employees/3", title: "Grace" })
 *   .embed("projects", [project1, project2]);
 * res.json(employee);
 * @see https://datatracker.ietf.org/doc/html/draft-kelly-json-hal-11
 */
export class HalResource<State extends object = Record<string, unknown>> {
  readonly #state: State;
  readonly #links = relations<HalLink>();
  // Built per response: what most resources never use is only allocated when used.
  #embedded: Relations<Embeddable> | undefined;
  #curies: HalLink[] | undefined;
  readonly #arrayRelations: ReadonlySet<string> | undefined;
  readonly #emptyEmbedded: boolean;

  constructor(state?: State, options?: HalResourceOptions) {
    const value = state ?? ({} as State);
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      throw optionError("HalResource", "state", value, "a plain object");
    }
    if (hasReserved(value)) checkState(value);
    this.#state = value;
    if (options === undefined) {
      this.#arrayRelations = undefined;
      this.#emptyEmbedded = false;
      return;
    }
    checkOptionNames("hal", options, ["arrayRelations", "emptyEmbedded"], "HalResource");
    const arrayRelations: unknown = options.arrayRelations ?? [];
    // A lone string would be a set of its characters.
    if (!Array.isArray(arrayRelations) || !arrayRelations.every((r) => typeof r === "string" && r !== "")) {
      throw optionError("HalResource", "arrayRelations", arrayRelations, "an array of relation names");
    }
    checkBooleanOption("hal", "emptyEmbedded", options.emptyEmbedded, "HalResource: emptyEmbedded");
    this.#arrayRelations = arrayRelations.length === 0 ? undefined : new Set(arrayRelations as string[]);
    this.#emptyEmbedded = options.emptyEmbedded ?? false;
  }

  /**
   * Adds one link (or several) under a relation (draft §4.1.1).
   * @example resource.link("self", "/orders/1").link("item", ["/items/1", "/items/2"])
   */
  link(rel: string, link: string | HalLink | readonly (string | HalLink)[], options?: RelationOptions): this {
    checkRel(rel);
    if (rel === "curies") throw new TypeError("HalResource: use curie(name, href) for curies");
    const many = Array.isArray(link);
    const list = many ? link.map(toHalLink) : [toHalLink(link as string | HalLink)];
    const array = many || this.#isArray(rel, options);
    const entry = relationOf(this.#links, rel);
    if (entry === undefined) {
      if (!array && list.length !== 1) throw new TypeError(`HalResource: relation ${rel} is single`);
      addRelation(this.#links, { rel, array, items: list });
      return this;
    }
    if (!entry.array) {
      throw new TypeError(
        `HalResource: relation ${rel} already has a link; declare it an array (array: true) to hold several`,
      );
    }
    entry.items.push(...list);
    return this;
  }

  /**
   * Declares a CURIE (draft §8.2): a named, templated link to relation documentation; compact
   * relations such as `acme:widgets` then expand with `{rel}`.
   * @example resource.curie("acme", "https://docs.example.com/rels/{rel}").link("acme:widgets", "/widgets")
   */
  curie(name: string, href: string): this {
    if (typeof name !== "string" || !/^[A-Za-z_][\w.-]*$/.test(name)) {
      throw new TypeError(`HalResource: curie name must be an NCName, got ${String(name)}`);
    }
    if (typeof href !== "string" || !href.includes("{rel}")) {
      throw new TypeError("HalResource: a curie href must be a URI Template containing {rel}");
    }
    checkTemplate(href, "HalResource: curie href");
    this.#curies ??= [];
    if (this.#curies.some((c) => c.name === name))
      throw new TypeError(`HalResource: curie ${name} is declared twice`);
    this.#curies.push({ href, templated: true, name });
    return this;
  }

  /**
   * Embeds one resource (an object) or several (an array, rendered as an array even when it is
   * empty or has one entry) under a relation (draft §4.1.2).
   * @example order.embed("items", itemResources).embed("customer", customerResource)
   */
  embed(rel: string, resource: Embeddable | readonly Embeddable[], options?: RelationOptions): this {
    checkRel(rel);
    const many = Array.isArray(resource);
    const list: Embeddable[] = many ? [...resource] : [resource as Embeddable];
    for (const item of list) {
      if (item === null || typeof item !== "object" || Array.isArray(item)) {
        throw new TypeError(`HalResource: embedded ${rel} must be resources (objects)`);
      }
    }
    const array = many || this.#isArray(rel, options);
    this.#embedded ??= relations<Embeddable>();
    const entry = relationOf(this.#embedded, rel);
    if (entry === undefined) {
      addRelation(this.#embedded, { rel, array, items: list });
      return this;
    }
    if (!entry.array) throw new TypeError(`HalResource: embedded relation ${rel} is single`);
    entry.items.push(...list);
    return this;
  }

  /** The links of a relation as added, or undefined. */
  links(rel: string): readonly HalLink[] | undefined {
    return typeof rel === "string" ? relationOf(this.#links, rel)?.items : undefined;
  }

  /**
   * `application/hal+json` (draft-kelly-json-hal-11 §3), under the kernel's `MEDIA_TYPE`: the
   * representation step of @svc/negotiate sends that `Content-Type` instead of `application/json`
   * when the client accepts it.
   */
  get [MEDIA_TYPE](): string {
    return HAL_JSON;
  }

  /** The HAL document: `_links`, then the state's properties, then `_embedded`. */
  toJSON(): HalDocument {
    const doc: HalDocument = {};
    const relations = this.#links.list;
    const curies = this.#curies;
    if (relations.length > 0 || curies !== undefined) {
      const links: Record<string, HalLink | HalLink[]> = {};
      for (let i = 0; i < relations.length; i++) {
        const { rel, array, items } = relations[i] as Relation<HalLink>;
        setMember(links, rel, array ? items.slice() : (items[0] as HalLink));
      }
      // draft §8.2: curies is always an array of links
      if (curies !== undefined) links.curies = curies.slice();
      doc._links = links;
    }
    // The state is held by reference, so a reserved member added after construction is refused
    // here too (draft-kelly-json-hal-11 §4.1: _links and _embedded are the resource's own): it
    // would silently replace the links this builder holds.
    copyState(doc, this.#state);
    const embedded = this.#embedded;
    if (embedded !== undefined || this.#emptyEmbedded) {
      const out: Record<string, object | object[]> = {};
      if (embedded !== undefined) {
        for (const { rel, array, items } of embedded.list) {
          const rendered = items.map(renderEmbedded);
          setMember(out, rel, array ? rendered : (rendered[0] as object));
        }
      }
      doc._embedded = out;
    }
    return doc;
  }

  /** Whether a new relation renders as an array: `{ array: true }` or listed in `arrayRelations`. */
  #isArray(rel: string, options: RelationOptions | undefined): boolean {
    // `options` is read like a defaulted parameter: undefined stands for `{}`, null throws.
    const asked = options === undefined ? false : (options as RelationOptions).array === true;
    return asked || this.#arrayRelations?.has(rel) === true;
  }
}

/**
 * Copies the state's members into the document, refusing a reserved one. An own `__proto__`
 * member (JSON.parse makes one, RFC 8259 allows any member name) is defined as a data property:
 * Object.assign's assignment would set the document's prototype instead, and the member would be
 * missing from the JSON text.
 */
function copyState(doc: HalDocument, state: object): void {
  if (hasReserved(state)) checkState(state);
  if (!Object.hasOwn(state, "__proto__")) {
    Object.assign(doc, state);
    return;
  }
  for (const key of Object.keys(state)) setMember(doc, key, (state as Record<string, unknown>)[key]);
}

/**
 * `object[key] = value` as a data property. A relation named "__proto__" (a member name like any
 * other, RFC 8259 §4; JSON.parse makes it an own key) would, assigned, set the object's prototype:
 * the link or embedded resource was missing from the JSON text.
 */
function setMember(object: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__")
    Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  else object[key] = value;
}

/** Whether the state has an own `_links` or `_embedded`; `in` first answers on the usual shape without a call. */
function hasReserved(state: object): boolean {
  return (
    ("_links" in state && Object.hasOwn(state, "_links")) ||
    ("_embedded" in state && Object.hasOwn(state, "_embedded"))
  );
}

/** Refuses a state holding a reserved property (draft-kelly-json-hal-11 §4.1). */
function checkState(state: object): void {
  for (const key of Object.keys(state)) {
    if (RESERVED.has(key))
      throw optionError(
        "HalResource",
        "state",
        key,
        "a plain object without the reserved properties _links and _embedded",
      );
  }
}

function renderEmbedded(item: Embeddable): object {
  return item instanceof HalResource ? item.toJSON() : item;
}

function checkRel(rel: string): void {
  if (typeof rel !== "string" || rel.length === 0 || hasSpace(rel)) {
    throw new TypeError(
      `HalResource: relation must be a non-empty string without spaces, got ${String(rel)}`,
    );
  }
}

/**
 * Whether `text` holds a character `/\s/` matches (ECMA-262 WhiteSpace and LineTerminator), by a
 * scan of its code units: a relation name is checked on every link, and a short scan costs less
 * than a regular expression.
 */
function hasSpace(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c <= 0x20) {
      if (c === 0x20 || (c >= 0x09 && c <= 0x0d)) return true;
    } else if (
      c >= 0xa0 &&
      (c === 0xa0 ||
        c === 0x1680 ||
        (c >= 0x2000 && c <= 0x200a) ||
        c === 0x2028 ||
        c === 0x2029 ||
        c === 0x202f ||
        c === 0x205f ||
        c === 0x3000 ||
        c === 0xfeff)
    )
      return true;
  }
  return false;
}

/**
 * Shorthand for `new HalResource(state, options)`.
 *
 * @example res.json(hal({ id: 7 }).link("self", "/employees/7"));
 * @see HalResource
 */
export function hal<State extends object>(state?: State, options?: HalResourceOptions): HalResource<State> {
  return new HalResource(state, options);
}
