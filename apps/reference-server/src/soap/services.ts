import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type SoapContext, SoapFault } from "@svc/soap-envelope";
import type { Db } from "../db/database.js";
import { minorToDecimal } from "../db/money.js";
import { fromDatabaseError } from "../errors.js";
import { CustomerInput } from "../schemas.js";
import {
  findCustomer,
  findPrice,
  insertCustomer,
  insertEvent,
  MAX_CUSTOMER_ID,
  queueNotification,
} from "./store.js";

const HERE = dirname(fileURLToPath(import.meta.url));

/** The contracts folder: next to src/ when run from source, next to dist/ when bundled. */
export const CONTRACTS_DIR = [join(HERE, "..", "..", "contracts"), join(HERE, "..", "contracts")].find((d) =>
  existsSync(join(d, "customer.wsdl")),
) as string;

/** Database failures keep the resource API's meaning: unreachable → 503 with Retry-After. */
async function data<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw fromDatabaseError(err);
  }
}

/** The SOAP contract has no city; customers it creates have an empty one until REST sets it. */
const NO_CITY = "";

/** The same rules as REST's `POST /customers` for the fields both protocols share. */
const SharedCustomerFields = CustomerInput.pick({ name: true, email: true });

interface Customer {
  id: bigint;
  name: string;
  email: string;
}

/** Handlers of contracts/customer.wsdl (spec part 4.2). */
export function customerHandlers(db: Db) {
  return {
    async getCustomer({ customerId }: { customerId: bigint }) {
      const customer = await data(() => findCustomer(db, customerId));
      if (!customer) {
        // The declared fault of getCustomer, its Detail validated against customer.xsd.
        throw new SoapFault({
          code: "Sender",
          subcode: "CustomerNotFound",
          reason: `Customer ${customerId} does not exist`,
          detail: { CustomerNotFound: { customerId } },
        });
      }
      return { customer: { id: customer.id, name: customer.name, email: customer.email } };
    },

    async createCustomer({ customer }: { customer: Customer }) {
      // 0 asks the service to assign the id (clients that cannot leave out the required element
      // send it); a positive id is the id the customer gets. See the Customer type in customer.xsd.
      if (customer.id < 0n || customer.id > MAX_CUSTOMER_ID) {
        throw new SoapFault({
          code: "Sender",
          subcode: "InvalidCustomer",
          reason: `A customer id must be 0 (assigned by the service) or between 1 and ${MAX_CUSTOMER_ID}`,
        });
      }
      const parsed = SharedCustomerFields.safeParse({ name: customer.name, email: customer.email });
      if (!parsed.success) {
        const problems = parsed.error.issues.map((i) => `${i.path.join(".")} ${i.message}`).join("; ");
        throw new SoapFault({
          code: "Sender",
          subcode: "InvalidCustomer",
          reason: `Invalid customer: ${problems}`,
        });
      }
      const result = await data(() =>
        insertCustomer(db, {
          id: customer.id === 0n ? undefined : customer.id,
          ...parsed.data,
          city: NO_CITY,
        }),
      );
      if (result.outcome === "id-taken") {
        throw new SoapFault({
          code: "Sender",
          subcode: "DuplicateCustomerId",
          reason: `Customer ${customer.id} already exists`,
        });
      }
      if (result.outcome === "email-taken") {
        throw new SoapFault({
          code: "Sender",
          subcode: "DuplicateEmail",
          reason: "Another customer already has this email",
        });
      }
      return { customerId: result.id };
    },

    async logEvent(
      {
        event,
      }: {
        event: { type: string; severity: string; message: string; occurredAt?: string; customerId?: bigint };
      },
      context: SoapContext,
    ) {
      await data(() =>
        insertEvent(db, {
          type: event.type,
          severity: event.severity,
          message: event.message,
          occurredAt: event.occurredAt,
          customerId: event.customerId,
          submittedBy: principalId(context),
        }),
      );
    },

    async sendNotification({ message }: { message: string }, context: SoapContext) {
      await data(() => queueNotification(db, { message, submittedBy: principalId(context) }));
    },
  };
}

function principalId(context: SoapContext): string {
  return (context.principal as { id?: string } | undefined)?.id ?? "anonymous";
}

/** Products carry no currency; the service prices in one (the seed's orders use it too). */
export const PRICE_CURRENCY = "EUR";

function availability(stock: number): "IN_STOCK" | "LOW_STOCK" | "OUT_OF_STOCK" {
  if (stock <= 0) return "OUT_OF_STOCK";
  return stock < 5 ? "LOW_STOCK" : "IN_STOCK";
}

/** Handlers of contracts/price.wsdl: prices of the products of the resource API. */
export function priceHandlers(db: Db) {
  return {
    async GetPrice({ Item, Category }: { Item: string; Category: string }) {
      const found = await data(() => findPrice(db, Item, Category));
      if (!found) {
        throw new SoapFault({
          code: "Sender",
          subcode: "PriceNotFound",
          reason: `No price for item "${Item}" in category "${Category}"`,
          detail: { PriceNotFound: { Item, Category } },
        });
      }
      return {
        Price: { $value: minorToDecimal(found.priceMinor), currency: PRICE_CURRENCY },
        Availability: availability(found.stock),
      };
    },
  };
}
