import type { Representation } from "@svc/negotiate";
import QRCode from "qrcode";

/**
 * Error correction level M (ISO/IEC 18004 §6.5.1: about 15 % of the symbol may be damaged) keeps a
 * printed label readable without making the symbol much denser than level L.
 */
const QR_OPTIONS = { errorCorrectionLevel: "M", margin: 4 } as const;

/**
 * `image/png` and `image/svg+xml` QR codes of one URL, e.g. a tracking resource's externally
 * visible address, so a phone camera opens it directly.
 *
 * @example return reply(tracking, { add: qrCodes(href(`/orders/${id}/tracking`)) })
 * @see https://www.iso.org/standard/62021.html
 */
export function qrCodes(url: string): Representation[] {
  return [
    {
      mediaType: "image/png",
      serialize: () => QRCode.toBuffer(url, { ...QR_OPTIONS, type: "png", scale: 8 }),
    },
    {
      mediaType: "image/svg+xml",
      serialize: () => QRCode.toString(url, { ...QR_OPTIONS, type: "svg" }),
    },
  ];
}
