import { diagnosticChannel } from "@svc/kernel/internal";

/**
 * What `svc:versioning` says of one request: the version it got (`chosen`), or the refusal of a
 * version the API does not have (`unsupported`).
 */
export type VersioningDiagnostic =
  | {
      /** The framework's request: what `exchangeOf` of `@svc/kernel` takes. */
      readonly request: object | undefined;
      readonly decision: "chosen";
      /** The version, as a string (`"2"`). */
      readonly version: string;
      /**
       * What named it: `path` (`/v2/…`), `header` (`API-Version: 2`), `media-type`
       * (`application/vnd.svc.v2+json`), or `default` (nothing did: `defaultVersion`).
       */
      readonly strategy: "path" | "header" | "media-type" | "default";
      /** The version is marked deprecated (`deprecated` option), so its responses carry `Deprecation`. */
      readonly deprecated: boolean;
      /** The version has a sunset date, so its responses carry `Sunset`. */
      readonly sunset: boolean;
    }
  | {
      /** The framework's request: what `exchangeOf` of `@svc/kernel` takes. */
      readonly request: object | undefined;
      readonly decision: "unsupported";
      /** The version the request named, as it wrote it (`"9"`). */
      readonly requested: string;
    };

/**
 * The channel the versioning step publishes on. A message is built only when it has a
 * subscriber: without one, a decision costs one property read.
 *
 * @see https://nodejs.org/api/diagnostics_channel.html
 */
export const versioningChannel = diagnosticChannel<VersioningDiagnostic>("svc:versioning");
