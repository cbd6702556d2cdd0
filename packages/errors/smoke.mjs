// Consumer smoke check: called with the module as loaded from the packed tarball, once through
// `import` and once through `require`. It throws when the public surface is broken.
export default function smoke(mod) {
  const err = mod.HttpError.notFound("gone");
  if (err.status !== 404 || !mod.isHttpError(err)) throw new Error("HttpError.notFound is broken");
  if (typeof mod.renderError !== "function") throw new Error("renderError is not a function");
  if (mod.reasonPhrase(422) !== "Unprocessable Content") throw new Error("reasonPhrase is broken");
}
