import { join } from "node:path";
import { SoapFault, type SoapServiceOptions } from "@svc/soap-envelope";

/** A contract with a SOAP 1.2 and a SOAP 1.1 binding of one port type (`@svc/soap-envelope`'s fixture). */
export const WSDL = join(
  import.meta.dirname,
  "../../../packages/soap-envelope/src/__fixtures__/customer-both.wsdl",
);

interface Customer {
  id: bigint;
  name: string;
  email: string;
}

/**
 * The SOAP endpoint's options, with a customer store of its own: each framework's server gets its
 * own. Apart from the rest of the service, so that a composition without SOAP (on a runtime
 * `@svc/soap-envelope` does not serve) loads none of it.
 */
export function soapOptions() {
  const customers = new Map<bigint, Customer>([
    [42n, { id: 42n, name: "Ada Lovelace", email: "ada@example.com" }],
  ]);
  return {
    wsdl: WSDL,
    limits: { maxBytes: 4096 },
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
