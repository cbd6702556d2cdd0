import { express4, listen, express4Version as version } from "@svc/test-utils";
import { describe, expect, it, onTestFinished } from "vitest";
import { soapEndpoint } from "../src/express.js";
import {
  CUSTOMER_WSDL,
  customerHandlers,
  envelope,
  getCustomer,
  post,
  silentLogger,
  soapErrors,
} from "./helpers.js";

describe(`soapEndpoint() on Express ${version}`, () => {
  it("GetCustomer answers 200 with the customer; ?wsdl serves the contract", async () => {
    expect(version).toMatch(/^4\./);
    const app = express4();
    app.use(
      "/ws/customer",
      soapEndpoint({ wsdl: CUSTOMER_WSDL, handlers: customerHandlers(), logger: silentLogger }),
    );
    app.use(soapErrors("/ws/customer"));
    const { url, close } = await listen(app);
    onTestFinished(close);
    const res = await post(`${url}/ws/customer`, envelope(getCustomer("42")));
    expect(res.status).toBe(200);
    expect(res.text).toContain("Ada Lovelace");
    const wsdl = await fetch(`${url}/ws/customer?wsdl`);
    expect(wsdl.status).toBe(200);
    expect(await wsdl.text()).toContain("definitions");
  });
});
