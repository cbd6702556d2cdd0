import type { Representation } from "@svc/negotiate";
import PDFDocument from "pdfkit";

/** Who issues the invoices: the service's own trading name and address. */
export const SELLER = {
  name: "SVC Reference Store GmbH",
  address: ["Musterstraße 1", "10115 Berlin", "Germany"],
  vatId: "DE123456789",
} as const;

interface InvoiceLine {
  product?: unknown;
  sku?: unknown;
  quantity?: unknown;
  unitPrice?: unknown;
  amount?: unknown;
}

interface InvoiceData {
  invoiceNumber?: unknown;
  orderId?: unknown;
  status?: unknown;
  customer?: { id?: unknown; name?: unknown; email?: unknown; city?: unknown } | null;
  lines?: InvoiceLine[];
  total?: unknown;
  currency?: unknown;
  issuedAt?: unknown;
}

/**
 * The characters of Windows-1252 above U+00FF, the code page pdfkit's standard fonts (Helvetica)
 * encode: PDF 1.7 (ISO 32000-1) Annex D.2, WinAnsiEncoding.
 */
const WIN_ANSI_EXTRA = new Set("€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ");
const COMBINING_MARKS = /\p{M}/gu;

function winAnsi(ch: string): boolean {
  const code = ch.codePointAt(0) ?? 0;
  return (code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff) || WIN_ANSI_EXTRA.has(ch);
}

/**
 * Text a standard font can show. pdfkit writes each character of a standard-font string as its
 * code in hex, of whatever length: "Ł" (U+0141) became the three digits "141" and a tab the one
 * digit "9", so the hex string went out of step and every following character of the line printed
 * as another byte (ISO 32000-1 §7.3.4.3: a hexadecimal string is read two digits per byte). So a
 * character outside WinAnsiEncoding becomes its base letter when it has one (Ż → Z), else "?", one
 * per code point; a control character (tab, C1) a space, as a line of an invoice has no tabs.
 */
function printable(value: string): string {
  let out = "";
  for (const ch of value) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === "\n" || winAnsi(ch)) out += ch;
    else if (code < 0x20 || (code >= 0x7f && code < 0xa0)) out += " ";
    else {
      const base = ch.normalize("NFKD").replace(COMBINING_MARKS, "");
      out += base.length > 0 && [...base].every(winAnsi) ? base : "?";
    }
  }
  return out;
}

const text = (v: unknown) => (v === null || v === undefined ? "" : printable(String(v)));
const money = (v: unknown) => Number(v ?? 0).toFixed(2);

function isInvoice(data: unknown): data is InvoiceData {
  return (
    typeof data === "object" &&
    data !== null &&
    "orderId" in data &&
    Array.isArray((data as InvoiceData).lines)
  );
}

/**
 * Renders an invoice as a PDF with pdfkit. The document's dates come from the invoice itself, not
 * the clock, so the same invoice always gives the same bytes and its strong ETag stays valid.
 */
export function renderInvoicePdf(invoice: InvoiceData): Promise<Buffer> {
  const issued = new Date(text(invoice.issuedAt));
  const date = Number.isNaN(issued.getTime()) ? new Date(0) : issued;
  const currency = text(invoice.currency);
  const doc = new PDFDocument({
    size: "A4",
    margin: 50,
    info: {
      Title: `Invoice ${text(invoice.invoiceNumber)}`,
      Author: SELLER.name,
      Subject: `Order ${text(invoice.orderId)}`,
      Creator: "@svc/reference-server",
      Producer: "pdfkit",
      CreationDate: date,
      ModDate: date,
    },
  });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    doc.on("data", (c: Buffer) => chunks.push(c));
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
  });

  doc.font("Helvetica-Bold").fontSize(20).text("Invoice", { align: "right" });
  doc.font("Helvetica").fontSize(10);
  doc.text(`Invoice number: ${text(invoice.invoiceNumber)}`, { align: "right" });
  doc.text(`Invoice date: ${date.toISOString().slice(0, 10)}`, { align: "right" });
  doc.text(`Order: ${text(invoice.orderId)}`, { align: "right" });
  doc.text(`Status: ${text(invoice.status)}`, { align: "right" });
  doc.moveDown();

  const top = doc.y;
  doc.font("Helvetica-Bold").text("Seller", 50, top);
  doc.font("Helvetica").text(SELLER.name).text(SELLER.address.join("\n")).text(`VAT ID: ${SELLER.vatId}`);
  const afterSeller = doc.y;
  const c = invoice.customer;
  doc.font("Helvetica-Bold").text("Customer", 320, top);
  doc.font("Helvetica");
  if (c) {
    doc.text(text(c.name), 320).text(text(c.city), 320).text(text(c.email), 320);
    doc.text(`Customer number: ${text(c.id)}`, 320);
  } else {
    doc.text("(customer record deleted)", 320);
  }
  doc.y = Math.max(afterSeller, doc.y) + 20;

  // Columns: product (with SKU), quantity, unit price, amount.
  const cols = [
    { x: 50, w: 250, align: "left" as const },
    { x: 300, w: 50, align: "right" as const },
    { x: 360, w: 85, align: "right" as const },
    { x: 455, w: 90, align: "right" as const },
  ];
  const row = (cells: string[], bold = false) => {
    doc.font(bold ? "Helvetica-Bold" : "Helvetica");
    // Every cell starts at the row's top. A cell that crossed the bottom margin made pdfkit start a
    // page, and the next cell went to the old page's y on that new one (each cell a page of its
    // own), so a row that does not fit starts on the next page whole.
    let height = 0;
    cells.forEach((cell, i) => {
      const col = cols[i];
      if (col) height = Math.max(height, doc.heightOfString(cell, { width: col.w, align: col.align }));
    });
    if (doc.y + height > doc.page.height - doc.page.margins.bottom) doc.addPage();
    const y = doc.y;
    let bottom = y;
    cells.forEach((cell, i) => {
      const col = cols[i];
      if (!col) return;
      doc.text(cell, col.x, y, { width: col.w, align: col.align });
      bottom = Math.max(bottom, doc.y);
    });
    doc.y = bottom + 4;
    doc.x = 50;
  };
  row(["Item", "Qty", `Unit price (${currency})`, `Amount (${currency})`], true);
  doc.moveTo(50, doc.y).lineTo(545, doc.y).stroke();
  doc.y += 4;
  for (const line of invoice.lines ?? []) {
    const name = line.sku ? `${text(line.product)} (${text(line.sku)})` : text(line.product);
    row([name, text(line.quantity), money(line.unitPrice), money(line.amount)]);
  }
  doc.moveTo(50, doc.y).lineTo(545, doc.y).stroke();
  doc.y += 4;
  row(["Total", "", "", `${money(invoice.total)} ${currency}`], true);
  doc.end();
  return done;
}

/**
 * `application/pdf` for an order's invoice (spec part 1: "Other representations such as … PDF …
 * may be offered through content negotiation"). Shown inline with a file name for saving, as
 * RFC 6266 §4.2 describes.
 *
 * @example return reply(invoice, { add: [invoicePdf] })
 * @see https://www.rfc-editor.org/rfc/rfc8118
 */
export const invoicePdf: Representation = {
  mediaType: "application/pdf",
  canRepresent: isInvoice,
  serialize: (data) => renderInvoicePdf(data as InvoiceData),
  fields(data) {
    const id = text((data as InvoiceData).orderId).replace(/[^A-Za-z0-9_-]/g, "");
    return { "Content-Disposition": `inline; filename="invoice-${id}.pdf"` };
  },
};
