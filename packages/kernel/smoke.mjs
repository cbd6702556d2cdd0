// Consumer smoke check: called with the module as loaded from the packed tarball, once through
// `import` and once through `require`, and with its subpath entries (`./internal`). It throws when
// the public surface is broken.
export default function smoke(mod, _kind, entries = {}) {
  const err = mod.HttpError.notFound("gone");
  if (err.status !== 404 || !mod.isHttpError(err)) throw new Error("HttpError.notFound is broken");
  // A logger names an error by its constructor (pino's `err.type`): the build keeps the name.
  if (err.constructor.name !== "HttpError")
    throw new Error(`HttpError's constructor is named ${err.constructor.name} in the build`);
  if (mod.reasonPhrase(422) !== "Unprocessable Content") throw new Error("reasonPhrase is broken");
  if (mod.matchMediaType("application/json", ["application/json"])?.offer !== "application/json")
    throw new Error("matchMediaType is broken");
  if ("refusedOption" in mod) throw new Error("refusedOption ships from the main entry");
  const internal = entries["./internal"];
  if (typeof internal?.refusedOption !== "function")
    throw new Error("@svc/kernel/internal does not export refusedOption");
  const refused = internal.refusedOption("auth", "realm", 42, "a string");
  if (!(refused instanceof TypeError) || refused.code !== "ERR_SVC_AUTH_REALM")
    throw new Error("refusedOption is broken");
  if (mod.ipBucket("2001:db8::1") !== "2001:db8::/64") throw new Error("ipBucket is broken");
}
