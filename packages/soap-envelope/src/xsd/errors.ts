import { shown } from "../xml/shown.js";

/**
 * A WSDL or XSD construct the compiler does not support; thrown at start-up so nothing in a
 * contract is silently ignored.
 */
export class SchemaCompileError extends Error {
  /**
   * Every problem found, each naming its file and construct: a contract is checked as a whole
   * (its binding before its types), so one start-up lists all that stands in the way.
   */
  readonly problems: readonly string[];
  constructor(message: string, problems: readonly string[] = [message]) {
    super(message);
    this.name = "SchemaCompileError";
    this.problems = problems;
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

/**
 * A payload element scoped with a data encoding this node does not decode (an `env:encodingStyle`
 * other than `encoding/none` or empty on a descendant of the body child, SOAP 1.2 Part 1 §5.1.1):
 * not a schema mismatch but a DataEncodingUnknown fault (§5.4.6).
 */
export class EncodingStyleError extends SchemaValidationError {
  /** The `env:encodingStyle` value, as sent. */
  readonly encodingStyle: string;
  constructor(path: string, encodingStyle: string) {
    super(path, `encoding style "${shown(encodingStyle, 200)}" is not supported`);
    this.name = "EncodingStyleError";
    this.encodingStyle = encodingStyle;
  }
}
