import { type OpenApiFragment, type OpenApiObject, openApiRef } from "@svc/kernel";

const link = openApiRef("schemas", "HalLink");
const str = { type: "string" } as const;

/**
 * A `_links` member: `self` plus the given relations, one link object each.
 *
 * @see https://datatracker.ietf.org/doc/html/draft-kelly-json-hal-11#section-4.1.1 `_links` is an
 * object of link objects keyed by relation.
 */
export function halLinksSchema(required: readonly string[], optional: readonly string[] = []): OpenApiObject {
  const properties: OpenApiObject = {};
  for (const rel of ["self", ...required, ...optional]) properties[rel] = link;
  return { type: "object", required: ["self", ...required], properties, additionalProperties: false };
}

/** A HAL resource: its state (every field present) and its links (`self` plus `links`). */
export function halResourceSchema(
  description: string,
  state: Record<string, OpenApiObject>,
  links: readonly string[],
  optionalLinks: readonly string[] = [],
): OpenApiObject {
  return {
    type: "object",
    description,
    required: [...Object.keys(state), "_links"],
    properties: { ...state, _links: halLinksSchema(links, optionalLinks) },
    additionalProperties: false,
  };
}

/** A page of a collection as `pageModel` writes it: its items under `_embedded.<collection>`. */
export function halPageSchema(collection: string, item: OpenApiObject): OpenApiObject {
  return {
    type: "object",
    description: `A page of ${collection}; \`_links\` has \`self\`, \`first\`, \`last\`, and \`previous\`/\`next\` where those pages exist`,
    required: ["_embedded", "page", "_links"],
    properties: {
      _embedded: {
        type: "object",
        required: [collection],
        properties: { [collection]: { type: "array", items: item } },
        additionalProperties: false,
      },
      page: openApiRef("schemas", "PageMetadata"),
      _links: openApiRef("schemas", "PageLinks"),
    },
    additionalProperties: false,
  };
}

/**
 * The OpenAPI 3.1 fragment of `@svc/hal`: the link object, and the page metadata and paging links
 * of `pageModel`. {@link halResourceSchema} and {@link halPageSchema} describe a resource and a
 * page of a collection with them.
 *
 * @see https://datatracker.ietf.org/doc/html/draft-kelly-json-hal-11#section-5 The attributes of a
 * link object.
 */
export function halOpenApi(): OpenApiFragment {
  return {
    source: "@svc/hal",
    components: {
      schemas: {
        HalLink: {
          type: "object",
          description: "A HAL link object (draft-kelly-json-hal §5)",
          required: ["href"],
          properties: {
            href: str,
            templated: { type: "boolean" },
            type: str,
            deprecation: str,
            name: str,
            profile: str,
            title: str,
            hreflang: str,
          },
          additionalProperties: false,
        },
        PageMetadata: {
          type: "object",
          required: ["number", "size", "totalElements", "totalPages"],
          properties: {
            number: { type: "integer", minimum: 1, description: "1-based number of this page" },
            size: { type: "integer", minimum: 1 },
            totalElements: { type: "integer", minimum: 0 },
            totalPages: { type: "integer", minimum: 0 },
          },
          additionalProperties: false,
        },
        PageLinks: halLinksSchema(["first", "last"], ["previous", "next"]),
      },
    },
  };
}
