import { unreadBodyPolicy } from "@svc/test-utils/unread-body";
import { PATH, soapMounts } from "./mounts.js";

unreadBodyPolicy(
  "@svc/soap-envelope: a message refused unread, on each framework",
  soapMounts({ unreadBody: { maxBytes: 4096, timeoutMs: 300 } }),
  {
    large: { path: PATH, fields: { "Content-Type": "application/soap+xml; charset=utf-8" }, status: 413 },
    small: { path: PATH, fields: { "Content-Type": "text/csv" }, status: 415 },
    after: { path: `${PATH}?wsdl`, status: 200 },
  },
);
