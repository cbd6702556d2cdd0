// Consumer smoke check: called with the module as loaded from the packed tarball, once through
// `import` and once through `require`. It throws when the public surface is broken.
export default function smoke(mod) {
  if (!mod.representationTag("application/json", undefined, "{}").startsWith('"'))
    throw new Error("representationTag is broken");
  if (!mod.weakMatch('W/"a"', '"a"') || mod.strongMatch('W/"a"', '"a"'))
    throw new Error("comparison is broken");
  if (mod.evaluatePreconditions("PUT", { "if-match": '"1"' }, { etag: '"2"' }) !== 412)
    throw new Error("evaluatePreconditions is broken");
  if (mod.formatCacheControl({ visibility: "public", maxAge: 60 }) !== "public, max-age=60")
    throw new Error("formatCacheControl is broken");
  if (typeof mod.validators().validate !== "function") throw new Error("validators() is not a pipeline step");
  if (mod.evaluateIfRange('W/"1"', { etag: 'W/"1"' }) !== false) throw new Error("evaluateIfRange is broken");
  if (typeof mod.preconditionsDecision({ current: () => undefined }) !== "function")
    throw new Error("preconditions() is broken");
  if (typeof mod.checkPreconditions !== "function") throw new Error("checkPreconditions is missing");
  if (mod.preconditionFailed({ etag: '"1"' }).headers.ETag !== '"1"')
    throw new Error("preconditionFailed is broken");
}
