// Consumer smoke check: called with the module as loaded from the packed tarball, once through
// `import` and once through `require`. It throws when the public surface is broken.
export default async function smoke(mod) {
  const fault = new mod.SoapFault({ code: "Sender", reason: "bad" });
  if (fault.httpStatus !== 400 || !mod.isSoapFault(fault)) throw new Error("SoapFault is broken");
  if (!mod.faultToXml(fault).includes("<env:Value>env:Sender</env:Value>"))
    throw new Error("faultToXml is broken");
  const env = await mod.parseEnvelope(
    `<e:Envelope xmlns:e="${mod.SOAP12_NS}"><e:Body><x:Op xmlns:x="urn:x"/></e:Body></e:Envelope>`,
  );
  if (env.body[0]?.localName !== "Op") throw new Error("parseEnvelope is broken");
  if (typeof mod.createSoapEndpoint !== "function" || typeof mod.soapFaults !== "function") {
    throw new Error("createSoapEndpoint/soapFaults are missing");
  }
}
