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
  readonly #links = new Map<string, { array: boolean; links: HalLink[] }>();
  readonly #embedded = new Map<string, { array: boolean; items: Embeddable[] }>();
  readonly #curies: HalLink[] = [];
  readonly #arrayRelations: ReadonlySet<string>;
  readonly #emptyEmbedded: boolean;

  constructor(state?: State, options: HalResourceOptions = {}) {
    const value = state ?? ({} as State);
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      throw optionError("HalResource", "state", value, "a plain object");
    }
    checkState(value);
    this.#state = value;
    checkOptionNames("hal", options, ["arrayRelations", "emptyEmbedded"], "HalResource");
    const arrayRelations: unknown = options.arrayRelations ?? [];
    // A lone string would be a set of its characters.
    if (!Array.isArray(arrayRelations) || !arrayRelations.every((r) => typeof r === "string" && r !== "")) {
      throw optionError("HalResource", "arrayRelations", arrayRelations, "an array of relation names");
    }
    checkBooleanOption("hal", "emptyEmbedded", options.emptyEmbedded, "HalResource: emptyEmbedded");
    this.#arrayRelations = new Set(arrayRelations as readonly string[]);
    this.#emptyEmbedded = options.emptyEmbedded ?? false;
  }

  /**
   * Adds one link (or several) under a relation (draft §4.1.1).
   * @example resource.link("self", "/orders/1").link("item", ["/items/1", "/items/2"])
   */
  link(
    rel: string,
    link: string | HalLink | readonly (string | HalLink)[],
    options: RelationOptions = {},
  ): this {
    checkRel(rel);
    if (rel === "curies") throw new TypeError("HalResource: use curie(name, href) for curies");
    const list = Array.isArray(link) ? link.map(toHalLink) : [toHalLink(link as string | HalLink)];
    const array = Array.isArray(link) || options.array === true || this.#arrayRelations.has(rel);
    const entry = this.#links.get(rel);
    if (entry === undefined) {
      if (!array && list.length !== 1) throw new TypeError(`HalResource: relation ${rel} is single`);
      this.#links.set(rel, { array, links: list });
      return this;
    }
    if (!entry.array) {
      throw new TypeError(
        `HalResource: relation ${rel} already has a link; declare it an array (array: true) to hold several`,
      );
    }
    entry.links.push(...list);
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
  embed(rel: string, resource: Embeddable | readonly Embeddable[], options: RelationOptions = {}): this {
    checkRel(rel);
    const list: Embeddable[] = Array.isArray(resource) ? [...resource] : [resource as Embeddable];
    for (const item of list) {
      if (item === null || typeof item !== "object" || Array.isArray(item)) {
        throw new TypeError(`HalResource: embedded ${rel} must be resources (objects)`);
      }
    }
    const array = Array.isArray(resource) || options.array === true || this.#arrayRelations.has(rel);
    const entry = this.#embedded.get(rel);
    if (entry === undefined) {
      this.#embedded.set(rel, { array, items: list });
      return this;
    }
    if (!entry.array) throw new TypeError(`HalResource: embedded relation ${rel} is single`);
    entry.items.push(...list);
    return this;
  }

  /** The links of a relation as added, or undefined. */
  links(rel: string): readonly HalLink[] | undefined {
    return this.#links.get(rel)?.links;
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
    if (this.#links.size > 0 || this.#curies.length > 0) {
      const links: Record<string, HalLink | HalLink[]> = {};
      for (const [rel, { array, links: list }] of this.#links) {
        setMember(links, rel, array ? [...list] : (list[0] as HalLink));
      }
      // draft §8.2: curies is always an array of links
      if (this.#curies.length > 0) links.curies = [...this.#curies];
      doc._links = links;
    }
    // The state is held by reference, so a reserved member added after construction is refused
    // here too (draft-kelly-json-hal-11 §4.1: _links and _embedded are the resource's own): it
    // would silently replace the links this builder holds.
    if (Object.hasOwn(this.#state, "_links") || Object.hasOwn(this.#state, "_embedded")) {
      checkState(this.#state);
    }
    if (Object.hasOwn(this.#state, "__proto__")) copyMembers(doc, this.#state);
    else Object.assign(doc, this.#state);
    if (this.#embedded.size > 0 || this.#emptyEmbedded) {
      const embedded: Record<string, object | object[]> = {};
      for (const [rel, { array, items }] of this.#embedded) {
        const rendered = items.map(renderEmbedded);
        setMember(embedded, rel, array ? rendered : (rendered[0] as object));
      }
      doc._embedded = embedded;
    }
    return doc;
  }
}

/**
 * Copies the state's members as data properties. An own `__proto__` member (JSON.parse makes one,
 * RFC 8259 allows any member name) would, through Object.assign's assignment, set the document's
 * prototype instead and be missing from the JSON text.
 */
function copyMembers(doc: HalDocument, state: object): void {
  for (const key of Object.keys(state)) {
    const value: unknown = (state as Record<string, unknown>)[key];
    Object.defineProperty(doc, key, { value, enumerable: true, writable: true, configurable: true });
  }
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
  if (typeof rel !== "string" || rel.length === 0 || /\s/.test(rel)) {
    throw new TypeError(
      `HalResource: relation must be a non-empty string without spaces, got ${String(rel)}`,
    );
  }
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
