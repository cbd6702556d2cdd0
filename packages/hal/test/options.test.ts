import { describeOptions, type OptionCase } from "@svc/test-utils";
import {
  allowedHosts,
  compileTrust,
  createHostCheck,
  HalResource,
  hal,
  parsePageRequest,
} from "../src/index.js";

const hosts = ["api.example.com"];

const rows: OptionCase[] = [
  // allowedHosts / createHostCheck
  [
    "allowedHosts: hosts",
    () => allowedHosts("api.example.com" as never),
    "ERR_SVC_HAL_ALLOWED_HOSTS",
    /@svc\/hal: allowedHosts must be .*, got "api.example.com"/,
    () => allowedHosts(hosts),
  ],
  [
    "allowedHosts: hosts (with a port)",
    () => allowedHosts(["api.example.com:443"]),
    "ERR_SVC_HAL_ALLOWED_HOSTS",
    /got \["api.example.com:443"\]/,
    () => allowedHosts("*"),
  ],
  [
    "allowedHosts(hosts, options)",
    () => allowedHosts(hosts, "loopback" as never),
    "ERR_SVC_HAL_OPTIONS",
    /@svc\/hal: options must be an object with the fields trustProxy, got "loopback"/,
    () => allowedHosts(hosts, {}),
  ],
  [
    "allowedHosts: unknown name",
    () => allowedHosts(hosts, { trustproxy: true } as never),
    "ERR_SVC_HAL_UNKNOWN_OPTION",
    /@svc\/hal: unknown option "trustproxy" \(did you mean "trustProxy"\?\)/,
    () => allowedHosts(hosts, { trustProxy: true }),
  ],
  [
    "allowedHosts: trustProxy",
    () => allowedHosts(hosts, { trustProxy: -1 }),
    "ERR_SVC_HAL_TRUST_PROXY",
    /@svc\/hal: trustProxy must be .*, got -1/,
    () => allowedHosts(hosts, { trustProxy: 1 }),
  ],
  [
    "createHostCheck: trustProxy (not an address)",
    () => createHostCheck(hosts, { trustProxy: "nearby" }),
    "ERR_SVC_HAL_TRUST_PROXY",
    /got "nearby"/,
    () => createHostCheck(hosts, { trustProxy: "loopback, 10.0.0.0/8" }),
  ],
  [
    "compileTrust: value",
    () => compileTrust({} as never),
    "ERR_SVC_HAL_TRUST_PROXY",
    /trustProxy must be .*, got an object/,
    () => compileTrust(["127.0.0.1"]),
  ],
  // HalResource / hal
  [
    "HalResource: state",
    () => new HalResource([] as never),
    "ERR_SVC_HAL_STATE",
    /HalResource: state must be a plain object, got \[\]/,
    () => new HalResource({ id: 1 }),
  ],
  [
    "HalResource: state (reserved property)",
    () => hal({ _links: {} }),
    "ERR_SVC_HAL_STATE",
    /HalResource: state must be a plain object without the reserved properties _links and _embedded, got "_links"/,
    () => hal({ links: {} }),
  ],
  [
    "HalResource(state, options)",
    () => hal({}, ["items"] as never),
    "ERR_SVC_HAL_OPTIONS",
    /HalResource: options must be an object with the fields arrayRelations, emptyEmbedded, got \["items"\]/,
    () => hal({}, {}),
  ],
  [
    "HalResource: unknown name",
    () => hal({}, { arrayRelation: ["items"] } as never),
    "ERR_SVC_HAL_UNKNOWN_OPTION",
    /HalResource: unknown option "arrayRelation" \(did you mean "arrayRelations"\?\)/,
    () => hal({}, { arrayRelations: ["items"] }),
  ],
  [
    "HalResource: arrayRelations",
    () => hal({}, { arrayRelations: "items" as never }),
    "ERR_SVC_HAL_ARRAY_RELATIONS",
    /HalResource: arrayRelations must be an array of relation names, got "items"/,
    () => hal({}, { arrayRelations: [] }),
  ],
  [
    "HalResource: emptyEmbedded",
    () => hal({}, { emptyEmbedded: "true" as never }),
    "ERR_SVC_HAL_EMPTY_EMBEDDED",
    /HalResource: emptyEmbedded must be true or false, got "true"/,
    () => hal({}, { emptyEmbedded: true }),
  ],
  // parsePageRequest
  [
    "parsePageRequest(query, options)",
    () => parsePageRequest({}, 20 as never),
    "ERR_SVC_HAL_OPTIONS",
    /parsePageRequest: options must be an object with the fields defaultSize, maxSize, got 20/,
    () => parsePageRequest({}),
  ],
  [
    "parsePageRequest: unknown name",
    () => parsePageRequest({}, { maxsize: 50 } as never),
    "ERR_SVC_HAL_UNKNOWN_OPTION",
    /parsePageRequest: unknown option "maxsize" \(did you mean "maxSize"\?\)/,
    () => parsePageRequest({}, { maxSize: 50 }),
  ],
  [
    "parsePageRequest: maxSize",
    () => parsePageRequest({}, { maxSize: 0 }),
    "ERR_SVC_HAL_MAX_SIZE",
    /parsePageRequest: maxSize must be a positive integer, got 0/,
    () => parsePageRequest({}, { maxSize: 1, defaultSize: 1 }),
  ],
  [
    "parsePageRequest: defaultSize",
    () => parsePageRequest({}, { defaultSize: 200 }),
    "ERR_SVC_HAL_DEFAULT_SIZE",
    /parsePageRequest: defaultSize must be a positive integer not above maxSize \(100\), got 200/,
    () => parsePageRequest({}, { defaultSize: 100 }),
  ],
];

describeOptions("@svc/hal: every option refused at construction with a stable code", rows);
