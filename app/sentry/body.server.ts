import { promisify } from "node:util";
import zlib from "node:zlib";
import { ApiError, invalidPayload, payloadTooLarge, readBody } from "~/http.server";

const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);
const inflateRaw = promisify(zlib.inflateRaw);
const brotli = promisify(zlib.brotliDecompress);

const isTooLarge = (err: unknown) => (err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE" || err instanceof RangeError;

/**
 * Inflates with an output cap: zlib stops as soon as the output would pass `max` bytes, so a
 * decompression bomb costs at most `max` bytes of memory before its 413.
 */
async function decode(buf: Buffer, encoding: string, max: number): Promise<Buffer> {
  const opts = { maxOutputLength: max };
  try {
    switch (encoding) {
      case "gzip":
      case "x-gzip":
        return await gunzip(buf, opts);
      case "deflate":
        // HTTP's "deflate" is zlib-wrapped, but some clients send raw deflate
        try {
          return await inflate(buf, opts);
        } catch (err) {
          if (isTooLarge(err)) throw err;
          return await inflateRaw(buf, opts);
        }
      case "br":
        return await brotli(buf, opts);
      default:
        throw new ApiError(415, "unsupported_media_type", `Content-Encoding ${encoding} is not supported; send gzip, deflate, br or none.`);
    }
  } catch (err) {
    if (ApiError.is(err)) throw err;
    if (isTooLarge(err)) throw payloadTooLarge("decompressed body", max);
    throw invalidPayload(`The body is not valid ${encoding} data.`);
  }
}

/** The body with its Content-Encoding removed, within `max` bytes before and after decompression. */
export async function readSentryBody(request: Request, max: number): Promise<Buffer> {
  let body = await readBody(request, max);
  const encodings = (request.headers.get("content-encoding") ?? "")
    .split(",")
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== "" && e !== "identity");
  // encodings are listed in the order they were applied
  for (const e of encodings.reverse()) body = await decode(body, e, max);
  return body;
}

/**
 * A `/store/` body: JSON, or the legacy form of older clients (raven): base64 of zlib-deflated
 * JSON, sent as application/octet-stream.
 */
export async function storeBodyJson(body: Buffer, max: number): Promise<unknown> {
  let text = body.toString("utf8").trim();
  if (text === "") throw invalidPayload("The request body is empty; send a Sentry event.");
  if (!text.startsWith("{") && /^[A-Za-z0-9+/=\s_-]+$/.test(text)) {
    const packed = Buffer.from(text, "base64");
    text = (await decode(packed, "deflate", max)).toString("utf8");
  }
  try {
    return JSON.parse(text);
  } catch {
    throw invalidPayload("The body is not a JSON Sentry event.");
  }
}

export function parseJsonPayload(payload: Buffer, what: string): unknown {
  try {
    return JSON.parse(payload.toString("utf8"));
  } catch {
    throw invalidPayload(`The ${what} is not valid JSON.`);
  }
}
