import { WSU_NS } from "@svc/errors";
import { shown, type XmlElement } from "../xml/reader.js";
import { trimXml } from "../xml/space.js";
import { wsseFault } from "./faults.js";
import type { ResolvedWsSecurity } from "./resolved.js";

/** A checked `wsu:Timestamp` (WS-Security 1.1 §10). */
export interface WsTimestamp {
  /** `wsu:Created`: when the sender made the message. */
  created: Date;
  /** `wsu:Expires`, when sent: after it (and the clock skew) the message is refused. */
  expires: Date | undefined;
}

/**
 * xsd:dateTime with a time zone (§10: "All times MUST be in UTC format as specified by the XML
 * Schema type (dateTime)"): a time without one names no instant.
 */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,12})?(Z|[+-]\d{2}:\d{2})$/;

/**
 * WS-Security 1.1 §10: the `wsu:Timestamp` of the processed `wsse:Security` block. "There MUST be
 * only one Timestamp element in a Security header"; `Created` and `Expires` at most once each,
 * in that order. A message whose `Expires` has passed, or whose `Created` is older than
 * `maxAgeMs` ("the recipient MAY ... reject messages that are older than a certain age"), is
 * refused with `wsu:MessageExpired`, each allowing `clockSkewMs`; a `Created` in the future
 * beyond the skew, or a missing Timestamp when required, with `wsse:InvalidSecurity`.
 * @see https://docs.oasis-open.org/wss-m/wss/v1.1.1/os/wss-SOAPMessageSecurity-v1.1.1-os.html (§10)
 */
export function checkTimestamp(
  security: XmlElement | undefined,
  options: NonNullable<ResolvedWsSecurity["timestamp"]>,
  now: number,
): { element: XmlElement; timestamp: WsTimestamp } | undefined {
  const found = security?.children.filter((c) => c.namespace === WSU_NS && c.localName === "Timestamp") ?? [];
  if (found.length > 1) throw wsseFault("InvalidSecurity", "more than one wsu:Timestamp (§10)");
  const element = found[0];
  if (element === undefined) {
    if (options.required) throw wsseFault("InvalidSecurity", "a wsu:Timestamp is required");
    return undefined;
  }
  let created: XmlElement | undefined;
  let expires: XmlElement | undefined;
  for (const child of element.children) {
    if (child.namespace !== WSU_NS) continue; // §10: other elements MAY follow (xsd:any)
    if (child.localName === "Created" && created === undefined && expires === undefined) created = child;
    else if (child.localName === "Expires" && expires === undefined) expires = child;
    else if (child.localName === "Created" || child.localName === "Expires") {
      throw wsseFault("InvalidSecurity", `wsu:${child.localName} out of place in wsu:Timestamp (§10)`);
    }
  }
  // Without Created neither the age nor the replay window can be decided.
  if (created === undefined) throw wsseFault("InvalidSecurity", "wsu:Timestamp has no wsu:Created");
  if (expires === undefined && options.requireExpires) {
    throw wsseFault("InvalidSecurity", "wsu:Timestamp has no wsu:Expires");
  }
  const createdAt = instant(created);
  const expiresAt = expires === undefined ? undefined : instant(expires);
  if (expiresAt !== undefined && expiresAt < createdAt) {
    throw wsseFault("InvalidSecurity", "wsu:Expires is before wsu:Created");
  }
  const skew = options.clockSkewMs;
  if (createdAt > now + skew) throw wsseFault("InvalidSecurity", "wsu:Created is in the future");
  if (expiresAt !== undefined && expiresAt + skew < now) {
    throw wsseFault("MessageExpired", "wsu:Expires has passed");
  }
  if (createdAt + options.maxAgeMs + skew < now) {
    throw wsseFault("MessageExpired", `wsu:Created is more than ${options.maxAgeMs} ms old`);
  }
  return {
    element,
    timestamp: {
      created: new Date(createdAt),
      expires: expiresAt === undefined ? undefined : new Date(expiresAt),
    },
  };
}

/** When a checked timestamp stops being accepted: the end of its replay window. */
export function acceptedUntil(
  timestamp: WsTimestamp,
  options: NonNullable<ResolvedWsSecurity["timestamp"]>,
): number {
  const aged = timestamp.created.getTime() + options.maxAgeMs + options.clockSkewMs;
  const expires = timestamp.expires === undefined ? aged : timestamp.expires.getTime() + options.clockSkewMs;
  return Math.min(aged, expires);
}

function instant(element: XmlElement): number {
  const text = trimXml(element.text);
  const m = DATE_TIME.exec(text);
  const at = m === null ? Number.NaN : Date.parse(text);
  // Date.parse rolls 02-30 over to March: the fields must read back as written.
  const day =
    m === null ? "" : new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))).toISOString();
  if (m === null || Number.isNaN(at) || day.slice(0, 10) !== `${m[1]}-${m[2]}-${m[3]}`) {
    throw wsseFault(
      "InvalidSecurity",
      `wsu:${element.localName} "${shown(text, 40)}" is not an xsd:dateTime with a time zone`,
    );
  }
  return at;
}
