export {
  type ClusterNodeAddress,
  closeNodeRedisCluster,
  connectIoredisCluster,
  connectNodeRedisCluster,
  keySlot,
  type RedisCluster,
  type RedisClusterOptions,
  type ReshardOptions,
  redisCluster,
} from "./cluster.js";
export { express4, express4Version } from "./express4.js";
export { type Listening, listen, listenOn, whenListening } from "./listen.js";
export { mainEntryFiles, mainEntryFrameworkTies } from "./main-entry.js";
export { describeOptions, type OptionCase, refusal } from "./options.js";
export { at, simulatedProxy } from "./proxy.js";
export { type RawExchange, type RawResponse, rawExchange, rawRequest, rawSend } from "./raw-request.js";
export { assertReadmeShows, readmeRegion } from "./readme.js";
export { freePort, serviceUrl, type ThrowawayRedis, throwawayRedis, uniquePrefix } from "./services.js";
export { byPathVersioner } from "./versioner.js";
