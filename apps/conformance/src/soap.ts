import { join } from "node:path";
import { soapService } from "./soap-service.js";

/** A contract with a SOAP 1.2 and a SOAP 1.1 binding of one port type (`@svc/soap-envelope`'s fixture). */
export const WSDL = join(
  import.meta.dirname,
  "../../../packages/soap-envelope/src/__fixtures__/customer-both.wsdl",
);

/** The SOAP endpoint's options, its contract read from `WSDL` and the file it imports. */
export function soapOptions() {
  return { wsdl: WSDL, ...soapService() };
}
