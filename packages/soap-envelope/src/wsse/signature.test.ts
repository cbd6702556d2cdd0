import { X509Certificate } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ENV, post, readFault } from "../../test/helpers.js";
import {
  at,
  CA,
  EC,
  ECDSA_SHA256,
  PARTNER,
  STRANGER,
  security,
  signByHand,
  signWithNodeSoap,
  stamped,
  startSecuredService,
  timestamp,
  unsigned,
  WSSE_NS,
  withNegatedS,
} from "../../test/wsse.js";

// XML-DSig over exclusive C14N (WS-Security 1.1 §8, X.509 Token Profile 1.1), through a
// listening server: messages signed by node-soap's WSSecurityCert, or by hand where a row needs
// what it does not write (ECDSA, a thumbprint reference).

const WSA = "http://www.w3.org/2005/08/addressing";
const sub = (code: string) => [`{${WSSE_NS}}${code}`];

let svc: Awaited<ReturnType<typeof startSecuredService>>;
beforeAll(async () => {
  svc = await startSecuredService(
    { signature: { trustedCertificates: [CA, EC.cert] }, replay: false },
    { logger: { error: () => {} } },
  );
});
afterAll(() => svc.close());

async function refused(body: string, code: string, reason: string) {
  const before = svc.seen.length;
  const res = await post(svc.endpoint, body);
  expect(res.status).toBe(400);
  const fault = readFault(res.text);
  expect(fault.code).toBe(`{${ENV}}Sender`);
  expect(fault.subcodes).toEqual(sub(code));
  expect(fault.reason).toContain(reason);
  expect(svc.seen.length).toBe(before);
}

describe("signatures accepted", () => {
  it("node-soap WSSecurityCert, RSA-SHA256, a certificate the trusted CA issued → 200, context.security.signature", async () => {
    const res = await post(svc.endpoint, signWithNodeSoap(unsigned()));
    expect(res.status).toBe(200);
    const seen = svc.seen.at(-1);
    expect(seen?.signature?.certificate.subject).toBe("CN=partner.example");
    expect(seen?.signature?.body).toBe(true);
    expect(seen?.signature?.timestamp).toBe(true);
    expect(seen?.timestamp?.expires).toBeInstanceOf(Date);
  });

  it("node-soap's default idMode (an unqualified Id on env:Body) → 400 Sender naming it (SOAP 1.2 Part 1 §5.3)", async () => {
    const res = await post(svc.endpoint, signWithNodeSoap(unsigned(), PARTNER, { signerOptions: {} }));
    expect(res.status).toBe(400);
    expect(readFault(res.text).reason).toBe('Unqualified attribute "Id" on env:Body');
  });

  it("ECDSA-SHA256 (r‖s), a certificate trusted as itself → 200", async () => {
    const res = await post(
      svc.endpoint,
      signByHand(stamped(), [{ uri: "#Body-1" }, { uri: "#TS-1" }], EC, ECDSA_SHA256),
    );
    expect(res.status).toBe(200);
    expect(svc.seen.at(-1)?.signature?.certificate.subject).toBe("CN=ec-partner.example");
  });

  it("trustedCertificates as an X509Certificate and as DER bytes → 200", async () => {
    for (const trusted of [new X509Certificate(CA), new X509Certificate(CA).raw]) {
      const other = await startSecuredService({ signature: { trustedCertificates: [trusted] } });
      try {
        expect((await post(other.endpoint, signWithNodeSoap(unsigned()))).status).toBe(200);
      } finally {
        await other.close();
      }
    }
  });

  it("a required header block signed (node-soap additionalReferences) → 200, in signature.headers", async () => {
    // A WS-Addressing 1.0 message (its [action] and, for a reply, its [message id]) whose wsa:To is signed.
    const To = `<wsa:Action xmlns:wsa="${WSA}">getCustomer</wsa:Action><wsa:MessageID xmlns:wsa="${WSA}">urn:uuid:5</wsa:MessageID><wsa:To xmlns:wsa="${WSA}">urn:customers</wsa:To>`;
    const strict = await startSecuredService({
      signature: { trustedCertificates: [CA], signedParts: ["Body", "Timestamp", `{${WSA}}To`] },
    });
    try {
      const ok = await post(
        strict.endpoint,
        signWithNodeSoap(unsigned("42", To), PARTNER, { additionalReferences: ["wsa:To"] }),
      );
      expect(ok.status).toBe(200);
      expect(strict.seen.at(-1)?.signature?.headers.map((h) => h.localName)).toEqual(["To"]);
      const unsignedTo = await post(strict.endpoint, signWithNodeSoap(unsigned("42", To)));
      expect(unsignedTo.status).toBe(400);
      expect(readFault(unsignedTo.text).reason).toContain(`the header block {${WSA}}To is not signed`);
    } finally {
      await strict.close();
    }
  });

  it("required: false → an unsigned message passes, a badly signed one does not", async () => {
    const optional = await startSecuredService({ signature: { trustedCertificates: [CA], required: false } });
    try {
      expect((await post(optional.endpoint, stamped())).status).toBe(200);
      expect(optional.seen.at(-1)?.signature).toBeUndefined();
      const tampered = signWithNodeSoap(unsigned()).replace("<c:customerId>42<", "<c:customerId>7<");
      expect(readFault((await post(optional.endpoint, tampered)).text).subcodes).toEqual(sub("FailedCheck"));
    } finally {
      await optional.close();
    }
  });
});

describe("signatures refused", () => {
  it("unsigned while required → wsse:InvalidSecurity", () =>
    refused(stamped(), "InvalidSecurity", "the message must be signed"));

  it("a certificate no trusted certificate issued (same subject, self-signed) → wsse:FailedAuthentication", () =>
    refused(signWithNodeSoap(unsigned(), STRANGER), "FailedAuthentication", "not trusted"));

  it("the Body changed after signing → wsse:FailedCheck (its digest)", () =>
    refused(
      signWithNodeSoap(unsigned()).replace("<c:customerId>42<", "<c:customerId>7<"),
      "FailedCheck",
      "does not match",
    ));

  it("the Timestamp changed after signing → wsse:FailedCheck", () => {
    const signed = signWithNodeSoap(unsigned());
    const later = signed.replace(
      /<Expires>[^<]+<\/Expires>/,
      `<Expires>${at(3_600_000).slice(0, 19)}Z</Expires>`,
    );
    return refused(later, "FailedCheck", "does not match");
  });

  it("the SignatureValue changed → wsse:FailedCheck", () => {
    const signed = signWithNodeSoap(unsigned());
    const broken = signed.replace(
      /<SignatureValue>(.)/,
      (_m, c: string) => `<SignatureValue>${c === "A" ? "B" : "A"}`,
    );
    return refused(broken, "FailedCheck", "the ds:SignatureValue does not verify");
  });

  it("a bad SignatureValue and a Body with an undeclared entity past 4 KiB → wsse:FailedCheck: the Body is never parsed", () => {
    const signed = signWithNodeSoap(unsigned());
    const broken = signed
      .replace(/<SignatureValue>(.)/, (_m, c: string) => `<SignatureValue>${c === "A" ? "B" : "A"}`)
      .replace("<c:customerId>", `<c:note>${"x".repeat(8000)}&undeclared;</c:note><c:customerId>`);
    return refused(broken, "FailedCheck", "the ds:SignatureValue does not verify");
  });

  it("ds:SignatureMethod rsa-sha1 → wsse:UnsupportedAlgorithm", () =>
    refused(
      signWithNodeSoap(unsigned(), PARTNER, {
        signatureAlgorithm: "http://www.w3.org/2000/09/xmldsig#rsa-sha1",
      }),
      "UnsupportedAlgorithm",
      "rsa-sha256 or ecdsa-sha256",
    ));

  it("ds:DigestMethod sha1 → wsse:UnsupportedAlgorithm", () =>
    refused(
      signWithNodeSoap(unsigned(), PARTNER, { digestAlgorithm: "http://www.w3.org/2000/09/xmldsig#sha1" }),
      "UnsupportedAlgorithm",
      "sha256",
    ));

  it("ecdsa-sha256 named for an RSA key → wsse:UnsupportedAlgorithm", () =>
    refused(
      signByHand(stamped(), [{ uri: "#Body-1" }, { uri: "#TS-1" }], PARTNER, ECDSA_SHA256).replace(
        /<ds:SignatureValue>[^<]*/,
        "<ds:SignatureValue>AAAA",
      ),
      "UnsupportedAlgorithm",
      "does not fit the certificate's rsa key",
    ));

  it("the Timestamp left unsigned (excludeReferencesFromSigning) → wsse:FailedCheck", () =>
    refused(
      signWithNodeSoap(unsigned(), PARTNER, { excludeReferencesFromSigning: ["Timestamp"] }),
      "FailedCheck",
      "the wsu:Timestamp is not signed",
    ));

  it("the Body left unsigned → wsse:FailedCheck", () =>
    refused(signByHand(stamped(), [{ uri: "#TS-1" }]), "FailedCheck", "the env:Body is not signed"));

  it("a wsse:Reference to no token → wsse:SecurityTokenUnavailable", () =>
    refused(
      signWithNodeSoap(unsigned()).replace(
        /<wsse:Reference URI="#x509-[^"]*"/,
        '<wsse:Reference URI="#nowhere"',
      ),
      "SecurityTokenUnavailable",
      "names no one wsse:BinarySecurityToken",
    ));
});

describe("bounds (checked before any signature or digest is computed)", () => {
  const rows: [string, Record<string, number>, string][] = [
    [
      "maxReferences: 1 (node-soap signs Body and Timestamp)",
      { maxReferences: 1 },
      "must hold 1 to 1 ds:Reference",
    ],
    [
      "maxTransforms: 1 (node-soap names enveloped-signature and exc-c14n)",
      { maxTransforms: 1 },
      "more than 1 ds:Transform",
    ],
    [
      "maxSignatureBytes: 128 (RSA 2048 is 256)",
      { maxSignatureBytes: 128 },
      "ds:SignatureValue is not base64 of at most 128 bytes",
    ],
    [
      "maxTokenBytes: 512 (the certificate is larger)",
      { maxTokenBytes: 512 },
      "the X.509 certificate is not base64 of at most 512 bytes",
    ],
  ];
  it.each(rows)("%s → wsse:InvalidSecurity", async (_name, bound, reason) => {
    const bounded = await startSecuredService({ signature: { trustedCertificates: [CA], ...bound } });
    try {
      const res = await post(bounded.endpoint, signWithNodeSoap(unsigned()));
      expect(res.status).toBe(400);
      expect(readFault(res.text).subcodes).toEqual(sub("InvalidSecurity"));
      expect(readFault(res.text).reason).toContain(reason);
    } finally {
      await bounded.close();
    }
  });
});

describe("signature and replay", () => {
  it("a signed message sent twice → 200, then wsse:InvalidSecurity", async () => {
    const r = await startSecuredService({ signature: { trustedCertificates: [CA] } });
    try {
      const signed = signWithNodeSoap(unsigned());
      expect((await post(r.endpoint, signed)).status).toBe(200);
      const again = await post(r.endpoint, signed);
      expect(readFault(again.text).reason).toContain("already received");
      // The same message with whitespace added is the same signature: still a replay.
      const spaced = signed.replace("<soap:Body", " <soap:Body");
      expect(readFault((await post(r.endpoint, spaced)).text).reason).toContain("already received");
    } finally {
      await r.close();
    }
  });

  it("an ECDSA-signed message, then the same with (r, n − s) as its SignatureValue → 200, then the replay's wsse:InvalidSecurity", async () => {
    const r = await startSecuredService({ signature: { trustedCertificates: [EC.cert] } });
    try {
      const signed = signByHand(stamped(), [{ uri: "#Body-1" }, { uri: "#TS-1" }], EC, ECDSA_SHA256);
      const malleated = withNegatedS(signed);
      expect(malleated).not.toBe(signed);
      expect((await post(r.endpoint, signed)).status).toBe(200);
      const again = await post(r.endpoint, malleated);
      expect(again.status).toBe(400);
      const fault = readFault(again.text);
      expect(fault.subcodes).toEqual(sub("InvalidSecurity"));
      expect(fault.reason).toContain("already received");
      // The very fault a copy of the accepted bytes gets, and the handler ran once.
      expect(fault).toEqual(readFault((await post(r.endpoint, signed)).text));
      expect(r.seen.length).toBe(1);
    } finally {
      await r.close();
    }
  });

  it("(r, n − s) of an ECDSA signature never sent before → 200 (it verifies: the row above is a replay)", async () => {
    const r = await startSecuredService({ signature: { trustedCertificates: [EC.cert] } });
    try {
      const signed = signByHand(stamped(), [{ uri: "#Body-1" }, { uri: "#TS-1" }], EC, ECDSA_SHA256);
      expect((await post(r.endpoint, withNegatedS(signed))).status).toBe(200);
    } finally {
      await r.close();
    }
  });

  it("an expired signed message → wsu:MessageExpired before the signature is checked", async () => {
    const r = await startSecuredService({ signature: { trustedCertificates: [CA] } });
    try {
      const old = signByHand(stamped("42", "", at(-20 * 60_000), at(-10 * 60_000)), [
        { uri: "#Body-1" },
        { uri: "#TS-1" },
      ]);
      const res = await post(r.endpoint, old);
      expect(readFault(res.text).code).toBe(`{${ENV}}Sender`);
      expect(readFault(res.text).reason).toContain("wsu:Expires has passed");
    } finally {
      await r.close();
    }
  });
});

describe("the Security block's place", () => {
  it("a signed message whose only Security block is for another role → wsse:InvalidSecurity", () => {
    const signed = signWithNodeSoap(unsigned()).replace(
      "<wsse:Security ",
      `<wsse:Security xmlns:e="${ENV}" e:role="urn:gateway" `,
    );
    return refused(signed, "InvalidSecurity", "a wsu:Timestamp is required");
  });

  it("a message of a timestamp alone, signed by nobody → wsse:InvalidSecurity", () =>
    refused(
      `<soap:Envelope xmlns:soap="${ENV}"><soap:Header>${security(timestamp(at(0), at(60_000)))}</soap:Header><soap:Body/></soap:Envelope>`,
      "InvalidSecurity",
      "the message must be signed",
    ));
});
