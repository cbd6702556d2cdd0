/**
 * A WSDL or XSD construct the compiler does not support; thrown at start-up so nothing in a
 * contract is silently ignored.
 */
export class SchemaCompileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SchemaCompileError";
  }
}

/**
 * An instance that does not match the schema; `path` locates it: in a decoded document as an
 * element path (`GetCustomerRequest/customerId`), in a value being encoded as a property path
 * (`GetCustomerResponse.customer.email`, `Order.item[2].price`).
 */
export class SchemaValidationError extends Error {
  readonly path: string;
  constructor(path: string, message: string) {
    super(`${path}: ${message}`);
    this.name = "SchemaValidationError";
    this.path = path;
  }
}
