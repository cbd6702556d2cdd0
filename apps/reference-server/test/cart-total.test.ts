import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, client, type Started } from "./harness.js";

/**
 * The cart's total is at current prices, so a price raised after the cart was filled can take it
 * past 2^53 cents. Summed as a double, it was then a wrong amount: 1000 × 999999999999.99 EUR
 * showed 999999999999990.1 EUR (an amount EUR cannot even have) instead of 999999999999990.
 */
describe.each(backends)("GET /cart after a price rise ($name)", (backend) => {
  let s: Started;
  beforeAll(async () => {
    s = await backend.start();
  });
  afterAll(() => s?.stop());

  it("1000 × 999999999999.99 EUR → a total of 999999999999990 EUR, not 999999999999990.1", async () => {
    const api = client(s.url);
    const put = await api("/cart", { method: "PUT", json: { items: [{ productId: 1, quantity: 1000 }] } });
    expect(put.status).toBe(200);
    const patch = await api("/products/1", { method: "PATCH", json: { price: 999999999999.99 } });
    expect(patch.status).toBe(200);
    const cart = (await (await api("/cart")).json()) as { total: number };
    expect(cart.total).toBe(999999999999990);
  });
});
