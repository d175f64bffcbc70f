import { decodeBody, invalidPayload } from "~/http.server";
import type { BodyHold } from "~/body-budget.server";

/**
 * A `/store/` body: JSON, or the legacy form of older clients (raven): base64 of zlib-deflated
 * JSON, sent as application/octet-stream, inflated within the same event limit and body hold.
 */
export async function storeBodyJson(body: Buffer, max: number, hold?: BodyHold): Promise<unknown> {
  let text = body.toString("utf8").trim();
  if (text === "") throw invalidPayload("The request body is empty; send a Sentry event.");
  if (!text.startsWith("{") && /^[A-Za-z0-9+/=\s_-]+$/.test(text)) {
    const packed = Buffer.from(text, "base64");
    text = (await decodeBody(packed, "deflate", max, hold)).toString("utf8");
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
