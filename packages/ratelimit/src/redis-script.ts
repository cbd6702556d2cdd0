import { redisScript } from "@svc/kernel/internal";

/** What both scripts read first: the key and ARGV `algorithm, limit, windowMs, cost`. */
const ARGS = `
local key = KEYS[1]
local alg = ARGV[1]
local limit = tonumber(ARGV[2])
local w = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
`;

/**
 * The whole decision in one script, so it is atomic and costs one round trip. Time comes from
 * Redis (`TIME`), so the clocks of the application instances do not matter. State is one hash per
 * key: `t` (window start or GCRA theoretical arrival time, ms), `c` (current count), `p` (previous
 * window's count). Returns `{allowed, remaining, resetAt, retryAfterMs, now}` as integers.
 *
 * Redis 5+ replicates scripts by their effects, which is what makes `TIME` before a write legal.
 * @see https://redis.io/docs/latest/develop/interact/programmability/eval-intro/
 */
const DECIDE_SCRIPT = `${ARGS}local burst = tonumber(ARGV[5])
local eps = 1e-6
local tm = redis.call('TIME')
local now = tonumber(tm[1]) * 1000 + math.floor(tonumber(tm[2]) / 1000)
local st = redis.call('HMGET', key, 't', 'c', 'p')
local t = tonumber(st[1])
local c = tonumber(st[2]) or 0
local p = tonumber(st[3]) or 0
local allowed, remaining, resetAt, retry, ttl
if alg == 'fixed-window' then
  local ws = math.floor(now / w) * w
  if t ~= ws then c = 0; t = ws end
  resetAt = ws + w
  if c + cost <= limit then allowed = 1; c = c + cost; retry = 0 else allowed = 0; retry = resetAt - now end
  remaining = limit - c
  if remaining < 0 then remaining = 0 end
  ttl = resetAt - now
elseif alg == 'sliding-window' then
  local ws = math.floor(now / w) * w
  if t ~= ws then
    if t == ws - w then p = c else p = 0 end
    c = 0; t = ws
  end
  local est = p * (w - (now - ws)) / w + c
  if est + cost <= limit + eps then
    allowed = 1; c = c + cost; est = est + cost; retry = 0
  else
    allowed = 0
    local at
    if cost > limit then at = ws + 2 * w
    elseif c + cost <= limit and p > 0 then at = ws + w * (1 - (limit - c - cost) / p)
    else
      local decay = 0
      if c > 0 then decay = w * (1 - (limit - cost) / c) end
      if decay < 0 then decay = 0 end
      at = ws + w + decay
    end
    retry = math.ceil(at - now)
    if retry < 1 then retry = 1 end
  end
  remaining = math.floor(limit - est + eps)
  if remaining < 0 then remaining = 0 end
  if c > 0 then resetAt = ws + 2 * w elseif p > 0 then resetAt = ws + w else resetAt = now end
  ttl = ws + 2 * w - now
else
  local interval = w / limit
  local tol = interval * burst
  local tat = t or now
  if tat < now then tat = now end
  local nxt = tat + cost * interval
  if nxt - now <= tol + eps then allowed = 1; tat = nxt; retry = 0
  else allowed = 0; retry = math.ceil(nxt - tol - now) end
  t = tat
  remaining = math.floor((tol - (tat - now)) / interval + eps)
  if remaining < 0 then remaining = 0 end
  resetAt = math.ceil(tat)
  ttl = tat - now
end
if ttl > 0 then
  redis.call('HSET', key, 't', string.format('%.17g', t), 'c', c, 'p', p)
  redis.call('PEXPIRE', key, math.ceil(ttl) + 1000)
end
return {allowed, remaining, resetAt, retry, now}
`;

/** {@link DECIDE_SCRIPT} with its SHA1, for `EVALSHA`. */
export const DECIDE = redisScript(DECIDE_SCRIPT);

/**
 * Gives back `cost` units an allowed decision spent (`skipSuccessfulRequests` /
 * `skipFailedRequests`): ARGV `algorithm, limit, windowMs, cost, at` where `at` is the decision's
 * Redis time. A window algorithm refunds only the window the decision was counted in (for the
 * sliding window also once it has become the previous window); GCRA moves the theoretical arrival
 * time back. A key that expired or was reset is left alone (no key is created), and `HSET` keeps
 * the key's TTL. Returns 1 when something was given back, else 0.
 */
const REFUND_SCRIPT = `${ARGS}local at = tonumber(ARGV[5])
local st = redis.call('HMGET', key, 't', 'c', 'p')
local t = tonumber(st[1])
if t == nil then return 0 end
if alg == 'gcra' then
  redis.call('HSET', key, 't', string.format('%.17g', t - cost * w / limit))
  return 1
end
local ws = math.floor(at / w) * w
if t == ws then
  local c = (tonumber(st[2]) or 0) - cost
  if c < 0 then c = 0 end
  redis.call('HSET', key, 'c', c)
  return 1
elseif alg == 'sliding-window' and t == ws + w then
  local p = (tonumber(st[3]) or 0) - cost
  if p < 0 then p = 0 end
  redis.call('HSET', key, 'p', p)
  return 1
end
return 0
`;

/** {@link REFUND_SCRIPT} with its SHA1, for `EVALSHA`. */
export const REFUND = redisScript(REFUND_SCRIPT);
