import { type Representation, stringifyJson } from "@svc/kernel";

/** The HAL media type (draft-kelly-json-hal-11 §3). */
export const HAL_JSON = "application/hal+json";

/**
 * `application/hal+json` as a representation for @svc/negotiate. A HAL document is JSON, so the
 * body is the one plain `application/json` clients get; only the Content-Type differs (a BigInt is a number with all its digits there too).
 * `HalResource`s render through their `toJSON()`.
 *
 * @example
 * const svc = expressAdapter(createPipeline({ representations: representations({ offers: [json, halJson, xml] }) }));
 * @see https://datatracker.ietf.org/doc/html/draft-kelly-json-hal-11#section-3
 */
export const halJson: Representation & { serialize(data: unknown): string } = Object.freeze({
  mediaType: HAL_JSON,
  serialize(data: unknown): string {
    return stringifyJson(data);
  },
});
