import jsQRModule from "jsqr";
import { PNG } from "pngjs";
import { SaxesParser } from "saxes";
import { extractText, getDocumentProxy } from "unpdf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backends, client, type Started } from "./harness.js";

/** jsqr is CommonJS typed as an ES module: its default export may arrive wrapped once more. */
type Decode = typeof jsQRModule.default;
const jsQR: Decode =
  (jsQRModule as unknown as { default?: Decode }).default ?? (jsQRModule as unknown as Decode);

type Page = { _embedded: { orders: { id: number }[] } };
type Invoice = {
  orderId: number;
  status: string;
  customer: { name: string } | null;
  lines: { product: string; sku: string; quantity: number; unitPrice: number; amount: number }[];
  total: number;
  currency: string;
  issuedAt: string;
};

/** fetch() adds `Cache-Control: no-cache` to conditional requests unless told otherwise. */
const revalidate = { "cache-control": "max-age=0" };

async function pdfText(bytes: ArrayBuffer): Promise<string> {
  const pdf = await getDocumentProxy(new Uint8Array(bytes));
  const { text } = await extractText(pdf, { mergePages: true });
  return text.replace(/\s+/g, " ");
}

function wellFormedXml(source: string): void {
  const parser = new SaxesParser();
  parser.on("error", (e) => {
    throw e;
  });
  parser.write(source).close();
}

describe.each(backends)("PDF invoices and QR tracking codes on $name (part 1)", (backend) => {
  let s: Started;
  let api: ReturnType<typeof client>;
  let shipped: number;
  let paid: number;
  beforeAll(async () => {
    s = await backend.start();
    api = client(s.url);
    const first = async (status: string) =>
      ((await (await api(`/orders?status=${status}&size=1`)).json()) as Page)._embedded.orders[0]?.id ?? 0;
    shipped = await first("SHIPPED");
    paid = await first("PAID");
  });
  afterAll(() => s.stop());

  it("Accept: application/pdf on a SHIPPED order's invoice → a PDF with id, status, lines and total", async () => {
    const data = (await (await api(`/orders/${shipped}/invoice`)).json()) as Invoice;
    expect(data.lines.length).toBeGreaterThan(0);
    const res = await api(`/orders/${shipped}/invoice`, { headers: { accept: "application/pdf" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/pdf");
    expect(res.headers.get("content-disposition")).toBe(`inline; filename="invoice-${shipped}.pdf"`);
    expect(res.headers.get("vary")).toMatch(/Accept\b/);
    const bytes = await res.arrayBuffer();
    expect(Buffer.from(bytes).subarray(0, 5).toString("latin1")).toBe("%PDF-");
    const text = await pdfText(bytes);
    expect(text).toContain(`Order: ${shipped}`);
    expect(text).toContain("Status: SHIPPED");
    expect(text).toContain(`Invoice date: ${data.issuedAt.slice(0, 10)}`);
    expect(text).toContain("SVC Reference Store");
    expect(text).toContain(data.customer?.name ?? "missing customer");
    for (const line of data.lines) {
      expect(text).toContain(`${line.product} (${line.sku}) ${line.quantity} ${line.unitPrice.toFixed(2)}`);
      expect(text).toContain(line.amount.toFixed(2));
    }
    expect(text).toContain(`Total ${data.total.toFixed(2)} ${data.currency}`);
  });

  it("an invoice names a status and a customer that change: Cache-Control private, no-cache (RFC 9111 §5.2.2.4)", async () => {
    // Shipping the order or editing the customer changes the invoice: a cache may keep it, but
    // must revalidate it (its ETag makes that a 304), never serve it unchecked for an hour.
    for (const accept of ["application/json", "application/pdf"]) {
      const res = await api(`/orders/${paid}/invoice`, { headers: { accept } });
      await res.arrayBuffer();
      expect(res.status).toBe(200);
      expect(res.headers.get("cache-control")).toBe("private, no-cache");
      const again = await api(`/orders/${paid}/invoice`, {
        headers: { accept, "if-none-match": res.headers.get("etag") ?? "", ...revalidate },
      });
      expect(again.status).toBe(304);
    }
  });

  it("Accept: application/pdf on a PAID order's invoice → a PDF saying PAID", async () => {
    const res = await api(`/orders/${paid}/invoice`, { headers: { accept: "application/pdf" } });
    expect(res.status).toBe(200);
    expect(await pdfText(await res.arrayBuffer())).toContain("Status: PAID");
  });

  it("a customer named outside Latin-1 (Ł, Hebrew, emoji, a tab) → the PDF garbles no other character", async () => {
    // pdfkit's standard fonts write each character as its code in hex, of any length: "Ł" (U+0141)
    // became "141" and a tab "9", and the odd digits shifted every following byte of the line.
    const name = "Łukasz Żółć \u05e9\u05dc\u05d5\u05dd 😀 Ada\tLovelace";
    const customer = await api("/customers", {
      method: "POST",
      json: { name, email: "lukasz.pdf@example.com", city: "Kraków" },
    });
    expect(customer.status).toBe(201);
    const { id: customerId } = (await customer.json()) as { id: number };
    const products = (await (await api("/products?size=1")).json()) as {
      _embedded: { products: { id: number }[] };
    };
    const productId = products._embedded.products[0]?.id ?? 0;
    const order = await api("/orders", {
      method: "POST",
      json: { customerId, items: [{ productId, quantity: 1 }] },
    });
    const { id, total } = (await order.json()) as { id: number; total: number };
    const paying = await api("/payments", {
      method: "POST",
      headers: { "idempotency-key": `pdf-latin1-${id}` },
      json: { orderId: id, amount: total, method: "card" },
    });
    expect(paying.status).toBe(201);
    const res = await api(`/orders/${id}/invoice`, { headers: { accept: "application/pdf" } });
    expect(res.status).toBe(200);
    const text = await pdfText(await res.arrayBuffer());
    // What the font has is printed as is; what it has not is "?" (or its base letter), never a
    // byte of something else.
    expect(text).toContain("?ukasz Zó?c ???? ? Ada Lovelace");
    expect(text).toContain("Kraków");
  });

  it("an invoice of 60 lines that wrap → a few pages, each line whole on one page", async () => {
    // A cell drawn past the page's bottom margin made pdfkit start a new page, and the row's next
    // cell went to the old page's y on that new page: 60 lines gave over 150 pages, one cell each.
    const items: { productId: number; quantity: number }[] = [];
    for (let i = 0; i < 60; i++) {
      const created = await api("/products", {
        method: "POST",
        json: {
          name: `Widget ${i} with a long descriptive name that wraps onto a second line`,
          sku: `PDF-ROWS-${i}`,
          categoryId: 1,
          price: 1,
          stock: 10,
        },
      });
      expect(created.status).toBe(201);
      items.push({ productId: ((await created.json()) as { id: number }).id, quantity: 1 });
    }
    const order = await api("/orders", { method: "POST", json: { customerId: 1, items } });
    expect(order.status).toBe(201);
    const { id, total } = (await order.json()) as { id: number; total: number };
    const paying = await api("/payments", {
      method: "POST",
      headers: { "idempotency-key": `pdf-rows-${id}` },
      json: { orderId: id, amount: total, method: "card" },
    });
    expect(paying.status).toBe(201);
    const res = await api(`/orders/${id}/invoice`, { headers: { accept: "application/pdf" } });
    expect(res.status).toBe(200);
    const pdf = await getDocumentProxy(new Uint8Array(await res.arrayBuffer()));
    expect(pdf.numPages).toBeLessThanOrEqual(4);
    const { text } = await extractText(pdf, { mergePages: true });
    const flat = text.replace(/\s+/g, " ");
    for (let i = 0; i < 60; i++) expect(flat).toContain(`second line (PDF-ROWS-${i}) 1 1.00 1.00`);
    expect(flat).toContain("Total 60.00 EUR");
  });

  it.each([
    ["application/json", /^application\/json/],
    ["application/hal+json", /^application\/hal\+json/],
    ["application/xml", /^application\/xml/],
  ])("Accept: %s on the invoice → still that representation", async (accept, type) => {
    const res = await api(`/orders/${shipped}/invoice`, { headers: { accept } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(type);
    expect(res.headers.get("content-disposition")).toBeNull();
  });

  it("Accept: application/pdf with If-None-Match of the current ETag → 304", async () => {
    const headers = { accept: "application/pdf" };
    const first = await api(`/orders/${shipped}/invoice`, { headers });
    const etag = first.headers.get("etag") ?? "";
    expect(etag).toMatch(/^"[^"]+"$/);
    const again = await api(`/orders/${shipped}/invoice`, {
      headers: { ...headers, ...revalidate, "if-none-match": etag },
    });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
  });

  it.each([
    [`/orders/:shipped/invoice`, "application/pdf"],
    [`/orders/:shipped/tracking`, "image/png"],
  ])("GET %s as %s with Accept-Encoding: gzip → no Content-Encoding", async (path, accept) => {
    const res = await api(path.replace(":shipped", String(shipped)), {
      headers: { accept, "accept-encoding": "gzip, br" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe(accept);
    expect(res.headers.get("content-encoding")).toBeNull();
    expect(Number(res.headers.get("content-length"))).toBe((await res.arrayBuffer()).byteLength);
  });

  it("Accept: image/png on tracking → a QR code that decodes to the tracking URL", async () => {
    const res = await api(`/orders/${shipped}/tracking`, { headers: { accept: "image/png" } });
    expect(res.status).toBe(200);
    const png = PNG.sync.read(Buffer.from(await res.arrayBuffer()));
    const code = jsQR(new Uint8ClampedArray(png.data), png.width, png.height);
    expect(code?.data).toBe(`${s.url}/orders/${shipped}/tracking`);
  });

  it("Accept: image/png behind a trusted proxy → the QR code carries the external URL", async () => {
    const proxied = await backend.start({ TRUST_PROXY: "loopback" });
    try {
      const headers = {
        "x-forwarded-host": "shop.example",
        "x-forwarded-proto": "https",
        accept: "image/png",
      };
      const call = client(proxied.url);
      const page = (await (await call("/orders?status=SHIPPED&size=1")).json()) as Page;
      const id = page._embedded.orders[0]?.id ?? 0;
      const res = await call(`/orders/${id}/tracking`, { headers });
      expect(res.status).toBe(200);
      const png = PNG.sync.read(Buffer.from(await res.arrayBuffer()));
      expect(jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data).toBe(
        `https://shop.example/orders/${id}/tracking`,
      );
    } finally {
      await proxied.stop();
    }
  });

  it("Accept: image/svg+xml on tracking → a well-formed SVG", async () => {
    const res = await api(`/orders/${shipped}/tracking`, { headers: { accept: "image/svg+xml" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^image\/svg\+xml/);
    const svg = await res.text();
    expect(svg.startsWith("<svg")).toBe(true);
    expect(() => wellFormedXml(svg)).not.toThrow();
    expect(svg).toContain('xmlns="http://www.w3.org/2000/svg"');
  });

  it("Accept: image/png with If-None-Match of the current ETag → 304", async () => {
    const headers = { accept: "image/png" };
    const etag = (await api(`/orders/${shipped}/tracking`, { headers })).headers.get("etag") ?? "";
    expect(etag).toMatch(/^"[^"]+"$/);
    const again = await api(`/orders/${shipped}/tracking`, {
      headers: { ...headers, ...revalidate, "if-none-match": etag },
    });
    expect(again.status).toBe(304);
  });

  it.each([
    ["/orders/:shipped/tracking", "application/xml, text/plain, text/html, image/png, image/svg+xml"],
    ["/employees/1", "application/json, application/hal+json, application/xml, text/plain, text/html"],
  ])("Accept: application/pdf on %s → 406 listing what it offers", async (path, offers) => {
    const res = await api(path.replace(":shipped", String(shipped)), {
      headers: { accept: "application/pdf" },
    });
    expect(res.status).toBe(406);
    const { message } = (await res.json()) as { message: string };
    expect(message).toContain(offers);
    expect(message).not.toContain("application/pdf");
  });

  it("Accept: image/png on the invoice → 406 naming application/pdf among the offers", async () => {
    const res = await api(`/orders/${shipped}/invoice`, { headers: { accept: "image/png" } });
    expect(res.status).toBe(406);
    const { message } = (await res.json()) as { message: string };
    expect(message).toMatch(/application\/json.*application\/xml.*application\/pdf$/);
  });

  it("the OpenAPI document lists application/pdf, image/png and image/svg+xml", async () => {
    const doc = (await (await api("/openapi.json")).json()) as {
      paths: Record<string, { get: { responses: { "200": { content: Record<string, unknown> } } } }>;
    };
    expect(Object.keys(doc.paths["/orders/{id}/invoice"]?.get.responses["200"].content ?? {})).toContain(
      "application/pdf",
    );
    expect(Object.keys(doc.paths["/orders/{id}/tracking"]?.get.responses["200"].content ?? {})).toEqual(
      expect.arrayContaining(["image/png", "image/svg+xml"]),
    );
  });
});
