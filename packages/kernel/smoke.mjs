// Consumer smoke check: called with the module as loaded from the packed tarball, once through
// `import` and once through `require`. It throws when the public surface is broken.
export default function smoke(mod) {
  const err = mod.HttpError.notFound("gone");
  if (err.status !== 404 || !mod.isHttpError(err)) throw new Error("HttpError.notFound is broken");
  if (mod.reasonPhrase(422) !== "Unprocessable Content") throw new Error("reasonPhrase is broken");
  if (mod.matchMediaType("application/json", ["application/json"])?.offer !== "application/json")
    throw new Error("matchMediaType is broken");
}
