import { type DecisionChannel, decisionChannel } from "@svc/kernel/internal";

/** The strategy that named a version: `path`, `query`, `header`, `custom` or `media-type`. */
export type VersioningStrategy = "path" | "query" | "header" | "custom" | "media-type";

/**
 * What `svc:versioning` says of one request: the version it got (`chosen`), or its refusal: a
 * version the API does not have (`unsupported`), a version field that holds no version
 * (`malformed`), two strategies naming different versions (`conflicting`), a version the API has
 * whose representations `Accept` takes none of (`not-acceptable`, 406). Every member takes its
 * value from a set the configuration bounds: a refusal never carries what the client wrote.
 *
 * @see https://opentelemetry.io/docs/specs/otel/metrics/sdk/#cardinality-limits a subscriber labels metrics with these members
 */
export type VersioningDiagnostic =
  | {
      /** The framework's request: what `exchangeOf` of `@svc/kernel` takes. */
      readonly request: object | undefined;
      readonly decision: "chosen";
      /** The version, as a string (`"2"`). */
      readonly version: string;
      /**
       * What named it: `path` (`/v2/…`), `query` (`?api-version=2`), `header` (`API-Version: 2`),
       * `custom` (the `custom.extract` function), `media-type` (`application/vnd.svc.v2+json`),
       * or `default` (nothing did: `defaultVersion`).
       */
      readonly strategy: VersioningStrategy | "default";
      /** The version is marked deprecated (`deprecated` option), so its responses carry `Deprecation`. */
      readonly deprecated: boolean;
      /** The version has a sunset date, so its responses carry `Sunset`. */
      readonly sunset: boolean;
    }
  | {
      /** The framework's request: what `exchangeOf` of `@svc/kernel` takes. */
      readonly request: object | undefined;
      /** A version the API does not have; which one is the client's to choose, so not said. */
      readonly decision: "unsupported";
      /** The strategy that named it (the one whose status answered). */
      readonly strategy: VersioningStrategy;
    }
  | {
      /** The framework's request: what `exchangeOf` of `@svc/kernel` takes. */
      readonly request: object | undefined;
      readonly decision: "malformed";
      /** The strategy whose field holds no version (`API-Version: two`, `?api-version=1&api-version=2`). */
      readonly strategy: VersioningStrategy;
    }
  | {
      /** The framework's request: what `exchangeOf` of `@svc/kernel` takes. */
      readonly request: object | undefined;
      /**
       * A version the API has, but `Accept` takes none of its representations (RFC 9110
       * §15.5.7): a vendor media type of another version, or one whose version does not parse.
       */
      readonly decision: "not-acceptable";
      /** The strategy that named the version. */
      readonly strategy: VersioningStrategy;
    }
  | {
      /** The framework's request: what `exchangeOf` of `@svc/kernel` takes. */
      readonly request: object | undefined;
      readonly decision: "conflicting";
      /** The two strategies that named different versions, in the order they are read. */
      readonly strategies: readonly [VersioningStrategy, VersioningStrategy];
    };

/**
 * The channel the versioning step publishes on: its name and whether anyone listens. Listen with
 * `subscribeDiagnostics(versioningChannel.name, listener)` of `@svc/kernel` (or
 * `node:diagnostics_channel`). A message is built only when it has a subscriber: without one, a
 * decision costs one property read.
 *
 * @see https://nodejs.org/api/diagnostics_channel.html
 */
export const versioningChannel: DecisionChannel<VersioningDiagnostic> =
  decisionChannel<VersioningDiagnostic>("svc:versioning");
