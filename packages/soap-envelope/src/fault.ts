// The SOAP fault model lives in envelope/fault.ts; WS-Security (wsse.ts, wsse/) reaches it here.
export * from "./envelope/fault.js";
