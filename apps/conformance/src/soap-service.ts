import { compression } from "@svc/negotiate";
import { SoapFault, type SoapServiceOptions, soapFaults } from "@svc/soap-envelope";
import { SOAP_PATH } from "./service.js";

/**
 * The options of the application's one error handler, on every framework: the challenges a 401
 * names, and the SOAP endpoint's errors (a 429 or 401 in front of it, its own refusals) as faults.
 */
export const ERRORS = {
  wwwAuthenticate: 'Bearer realm="api", Basic realm="api"',
  renderers: [soapFaults({ path: SOAP_PATH })],
};

interface Customer {
  id: bigint;
  name: string;
  email: string;
}

/**
 * The SOAP endpoint's options but its contract, with a customer store of its own: each
 * framework's server gets its own. Apart from the contract's files (`soap.ts`), so that the
 * Worker (`runtimes/workerd.ts`), which gives the contract in memory, loads no Node.js module.
 */
export function soapService() {
  const customers = new Map<bigint, Customer>([
    [42n, { id: 42n, name: "Ada Lovelace", email: "ada@example.com" }],
  ]);
  return {
    limits: { maxBytes: 4096 },
    // The WSDL, its schema and the answers in the coding Accept-Encoding prefers, as the API's.
    coding: compression({ threshold: 256 }),
    logger: { error() {} },
    handlers: {
      getCustomer: async ({ customerId }: { customerId: bigint }) => {
        const customer = customers.get(customerId);
        if (customer === undefined) {
          throw new SoapFault({
            code: "Sender",
            subcode: "CustomerNotFound",
            reason: `Customer ${customerId} does not exist`,
            detail: { CustomerNotFound: { customerId } },
          });
        }
        return { customer };
      },
      createCustomer: async ({ customer }: { customer: Customer }) => {
        customers.set(customer.id, customer);
        return { customerId: customer.id };
      },
      logEvent: async () => {},
      sendNotification: async () => {},
    } as SoapServiceOptions["handlers"],
  };
}
