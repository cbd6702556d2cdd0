import { HttpError } from "@svc/errors";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CUSTOMER_WSDL,
  customerHandlers,
  envelope,
  getCustomer,
  post,
  readFault,
  silentLogger,
  startCustomerService,
  TNS,
} from "../../test/helpers.js";
import { createSoapService, type SoapContext } from "../binding/service.js";
import { SoapFault, WSSE_NS } from "../envelope/fault.js";
import { SoapAuthenticationError } from "../wsse/credentials.js";
import type { XmlElement } from "../xml/reader.js";

const HANG = 15_000;
const ATTACK = `a@${".".repeat(128_000)}@`;
const user = (name: string) =>
  `<c:Authentication xmlns:c="${TNS}"><c:Username>${name}</c:Username></c:Authentication>`;
const create = (id: string, email: string) =>
  `<c:CreateCustomerRequest xmlns:c="${TNS}"><c:customer><c:id>${id}</c:id><c:name>N</c:name><c:email>${email}</c:email></c:customer></c:CreateCustomerRequest>`;

/** The user named in an Authentication header block; only "writer" may call createCustomer. */
async function authenticate(blocks: readonly XmlElement[]): Promise<{ name: string }> {
  const name = blocks.find((b) => b.localName === "Authentication")?.children[0]?.text;
  if (!name) throw new SoapAuthenticationError("Who are you?");
  return { name };
}

const seen: string[] = [];
function authorize(context: SoapContext): boolean {
  const { name } = context.principal as { name: string };
  seen.push(`${name}:${context.operation}`);
  switch (name) {
    case "custom":
      throw new SoapFault({ code: "Sender", subcode: "NotPermitted", reason: "custom refusal" });
    case "busy":
      throw HttpError.serviceUnavailable(3, "authorization store is down");
    case "forbidden":
      throw HttpError.forbidden("no");
    case "broken":
      return undefined as unknown as boolean; // a hook that forgets to return
    case "crash":
      throw new Error("policy engine exploded");
    default:
      return context.operation !== "createCustomer" || name === "writer";
  }
}

describe("authorize hook: who may call an operation is decided before the Body is decoded", () => {
  let svc: Awaited<ReturnType<typeof startCustomerService>>;
  beforeAll(async () => {
    svc = await startCustomerService({ authenticate, authorize: async (c) => authorize(c) });
  });
  afterAll(() => svc.close());

  const call = (who: string, body: string) => post(svc.endpoint, envelope(body, user(who)));

  it("writer → createCustomer 200", async () => {
    const res = await call("writer", create("9", "w@example.com"));
    expect(res.status).toBe(200);
  });

  it("reader → getCustomer 200, the hook saw reader:getCustomer", async () => {
    const res = await call("reader", getCustomer("42"));
    expect(res.status).toBe(200);
    expect(seen).toContain("reader:getCustomer");
  });

  it("reader → createCustomer 400 Sender wsse:FailedAuthentication", async () => {
    const res = await call("reader", create("10", "r@example.com"));
    expect(res.status).toBe(400);
    const fault = readFault(res.text);
    expect(fault.code).toBe("{http://www.w3.org/2003/05/soap-envelope}Sender");
    expect(fault.subcodes).toEqual([`{${WSSE_NS}}FailedAuthentication`]);
    expect(fault.reason).toBe("Not authorized to invoke createCustomer");
  });

  it("reader → createCustomer with an id that is no xs:long → the permission fault, not a schema one", async () => {
    const res = await call("reader", create("not-a-number", "r@example.com"));
    expect(res.status).toBe(400);
    expect(readFault(res.text).reason).toBe("Not authorized to invoke createCustomer");
  });

  it(
    "reader → createCustomer with email a@ + 128,000 dots + @ → the permission fault at once",
    async () => {
      const res = await call("reader", create("11", ATTACK));
      expect(res.status).toBe(400);
      expect(readFault(res.text).reason).toBe("Not authorized to invoke createCustomer");
    },
    HANG,
  );

  it("hook throws a SoapFault → sent as it is (subcode NotPermitted)", async () => {
    const res = await call("custom", getCustomer("42"));
    expect(res.status).toBe(400);
    const fault = readFault(res.text);
    expect(fault.subcodes).toEqual([`{${TNS}}NotPermitted`]);
    expect(fault.reason).toBe("custom refusal");
  });

  it("hook throws HttpError 403 → 400 Sender wsse:FailedAuthentication", async () => {
    const res = await call("forbidden", getCustomer("42"));
    expect(res.status).toBe(400);
    expect(readFault(res.text).subcodes).toEqual([`{${WSSE_NS}}FailedAuthentication`]);
  });

  it("hook throws HttpError 503 with Retry-After → 503 Receiver, Retry-After kept", async () => {
    const res = await call("busy", getCustomer("42"));
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("3");
    expect(readFault(res.text).code).toBe("{http://www.w3.org/2003/05/soap-envelope}Receiver");
  });

  it("hook returns undefined → 500 Receiver, logged: a forgotten return never lets a call through", async () => {
    const before = silentLogger.errors.length;
    const res = await call("broken", getCustomer("42"));
    expect(res.status).toBe(500);
    expect(readFault(res.text).reason).toBe("The service could not process the request");
    expect(silentLogger.errors.length).toBe(before + 1);
  });

  it("hook throws a plain Error → 500 Receiver without its message", async () => {
    const res = await call("crash", getCustomer("42"));
    expect(res.status).toBe(500);
    expect(res.text).not.toContain("exploded");
  });

  it("refused credentials → the authenticate fault; authorize is not called", async () => {
    const before = seen.length;
    const res = await post(svc.endpoint, envelope(getCustomer("42")));
    expect(res.status).toBe(400);
    expect(readFault(res.text).reason).toBe("The security token could not be authenticated or authorized");
    expect(seen.length).toBe(before);
  });
});

describe("authorize option validation", () => {
  it("authorize: 'yes' → TypeError ERR_SVC_SOAP_ENVELOPE_AUTHORIZE at construction", () => {
    const build = () =>
      createSoapService({
        wsdl: CUSTOMER_WSDL,
        handlers: customerHandlers(),
        authorize: "yes" as unknown as () => boolean,
      });
    expect(build).toThrow(TypeError);
    expect(build).toThrow(/@svc\/soap-envelope: authorize must be a function .* got "yes"/);
    try {
      build();
    } catch (err) {
      expect((err as { code?: string }).code).toBe("ERR_SVC_SOAP_ENVELOPE_AUTHORIZE");
    }
  });
});
