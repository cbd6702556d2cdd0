// Consumer smoke check: called with the module as loaded from the packed tarball, once through
// `import` and once through `require`. It throws when the public surface is broken.
export default async function smoke(mod) {
  for (const name of [
    "createAuthenticator",
    "scopeGuard",
    "roleGuard",
    "predicateGuard",
    "createTokenIssuer",
    "verifySoapCredentials",
    "hashPassword",
    "createPasswordHasher",
    "createBasicVerifier",
    "verifyPassword",
    "memoryNonceStore",
    "redisNonceStore",
  ]) {
    if (typeof mod[name] !== "function") throw new Error(`${name} is not exported as a function`);
  }
  const issuer = mod.createTokenIssuer({ issuer: "https://smoke.test/", audience: "smoke" });
  const { access_token, token_type } = await issuer.issue({ id: "smoke", scopes: ["read"] });
  if (token_type !== "Bearer") throw new Error("issue() is broken");
  const verifier = mod.createBearerVerifier({
    jwks: await issuer.jwks(),
    algorithms: ["ES256"],
    audience: "smoke",
  });
  const principal = await verifier.verify(access_token);
  if (principal.id !== "smoke" || principal.scheme !== "bearer")
    throw new Error("Bearer verification is broken");
  const authenticator = mod.createAuthenticator({ realm: "smoke", bearer: verifier });
  const context = await authenticator.authenticate({
    method: "GET",
    url: "/",
    headers: { authorization: `Bearer ${access_token}` },
  });
  if (context.principal?.id !== "smoke") throw new Error("createAuthenticator is broken");
  if (!Array.isArray(mod.pinoRedaction.paths)) throw new Error("pinoRedaction is broken");
}
