// Consumer smoke check: called with the module as loaded from the packed tarball, once through
// `import` and once through `require`. It throws when the public surface is broken.
export default function smoke(mod) {
  if (mod.SCOPE_NAME !== "@svc/otel") throw new Error("SCOPE_NAME is broken");
  if (!mod.PACKAGES.includes("ratelimit")) throw new Error("PACKAGES is broken");
  // The OpenTelemetry API's global providers (no-op without an SDK) are enough to subscribe.
  const instrumentation = mod.instrumentSvc();
  if (typeof instrumentation.disable !== "function") throw new Error("instrumentSvc() is broken");
  instrumentation.disable();
  let refused = false;
  try {
    mod.instrumentSvc({ packages: ["nope"] });
  } catch (err) {
    refused = err.code === "ERR_SVC_OTEL_PACKAGES";
  }
  if (!refused) throw new Error("instrumentSvc() takes an unknown package");
  // Without an SDK the span helpers build no span: the listener and the handler run as they are.
  let served = false;
  mod.serverSpans(() => {
    served = true;
  })({ method: "GET", headers: {} }, { once() {} });
  if (!served) throw new Error("serverSpans() is broken");
  if (typeof mod.fetchServerSpans(() => undefined) !== "function")
    throw new Error("fetchServerSpans() is broken");
}
