import { SoapFault, type SoapServiceOptions } from "@svc/soap-envelope";

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
