export { type Listening, listen } from "./listen.js";
export { at, simulatedProxy } from "./proxy.js";
export { freePort, serviceUrl, type ThrowawayRedis, throwawayRedis, uniquePrefix } from "./services.js";
