import type { ApiVersioningOptions } from "../src/options.js";

/** The API both the core's and the Express tables version: v1 deprecated, media type strategy. */
export const base: ApiVersioningOptions = {
  versions: [1, 2],
  defaultVersion: 1,
  mediaType: { vendor: "svc" },
  deprecated: {
    1: {
      deprecation: "2026-01-01T00:00:00Z",
      sunset: "2026-07-01T00:00:00Z",
      link: "https://docs.example.com/deprecations/v1",
      sunsetLink: "https://docs.example.com/sunset/v1",
    },
  },
  neutral: ["/health"],
};
