/**
 * The one error body and the helpers every resource route uses: typed errors are mapped to
 * `{error, message, details?}` here, and a 500 never carries internals.
 */
import { promisify } from "node:util";
import zlib from "node:zlib";
import { isDatabaseUnavailable } from "../db/client.js";

export type ErrorDetail = { path: string; message: string };

export class ApiError extends Error {
  static is(err: unknown): err is ApiError {
    return err instanceof ApiError;
  }

  readonly status: number;
  readonly code: string;
  readonly details?: ErrorDetail[];
  readonly headers?: Record<string, string>;

  constructor(status: number, code: string, message: string, details?: ErrorDetail[], headers?: Record<string, string>) {
    // an answer to the client, not a fault: its stack is never read, and capturing one is the
    // largest cost of refusing a request
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.status = status;
    this.code = code;
    this.details = details;
    this.headers = headers;
  }
}

export const invalidPayload = (message: string, details?: ErrorDetail[]) =>
  new ApiError(400, "invalid_payload", message, details);
export const invalidQuery = (message: string, details?: ErrorDetail[]) =>
  new ApiError(400, "invalid_query", message, details);
export const unauthorized = (message = "A valid API key is required in the x-api-key header.") =>
  new ApiError(401, "unauthorized", message);
export const forbidden = (message: string) => new ApiError(403, "forbidden", message);
export const notFound = (message = "Not found.") => new ApiError(404, "not_found", message);
export const conflict = (message: string) => new ApiError(409, "conflict", message);
export const methodNotAllowed = (allowed: string[]) =>
  new ApiError(405, "method_not_allowed", `Use ${allowed.join(" or ")} on this path.`, undefined, {
    Allow: allowed.join(", "),
  });

/**
 * The serialized body of a Response made by `json()`, so the API dispatch (server/api-dispatch.ts)
 * can write that text itself; undefined once the body's stream has been handed out.
 */
export const JSON_TEXT = Symbol("json text");

/**
 * A JSON Response whose body stream is made only when something asks for it. On Node 20 a Response
 * with a body costs a web stream, more than the rest of an API answer; the API dispatch writes the
 * text instead. Whatever reads the Response (Remix, a test, `clone()`) sees the same body: `body`,
 * the body readers, `bodyUsed` and `clone()` answer from a full Response made on first use.
 */
class JsonResponse extends Response {
  private readonly jsonText: string;
  private full: Response | undefined;

  constructor(text: string, init: ResponseInit) {
    super(null, init);
    this.jsonText = text;
  }

  get [JSON_TEXT](): string | undefined {
    return this.full ? undefined : this.jsonText;
  }

  private response(): Response {
    return (this.full ??= new Response(this.jsonText, { status: this.status, statusText: this.statusText, headers: this.headers }));
  }

  override get body() {
    return this.response().body;
  }
  override get bodyUsed() {
    return this.full?.bodyUsed ?? false;
  }
  override text() {
    return this.response().text();
  }
  override json() {
    return this.response().json();
  }
  override arrayBuffer() {
    return this.response().arrayBuffer();
  }
  override blob() {
    return this.response().blob();
  }
  override formData() {
    return this.response().formData();
  }
  override clone(): Response {
    if (this.bodyUsed) throw new TypeError("Response.clone: Body has already been consumed.");
    return new JsonResponse(this.jsonText, { status: this.status, statusText: this.statusText, headers: this.headers });
  }
}

export function json(body: unknown, init: number | ResponseInit = 200): Response {
  const response = new JsonResponse(JSON.stringify(body), typeof init === "number" ? { status: init } : init);
  response.headers.set("content-type", "application/json; charset=utf-8");
  response.headers.set("cache-control", "no-store");
  return response;
}

export const RETRY_AFTER_SECONDS = 5;

/** 503 with Retry-After, which every retrying client (our SDK, Sentry's) understands. */
export const databaseUnavailable = () =>
  new ApiError(503, "unavailable", "The database did not answer in time; retry later.", undefined, {
    "Retry-After": String(RETRY_AFTER_SECONDS),
  });

export function errorResponse(err: unknown): Response {
  // a lost connection, a statement or lock wait past DB_TIMEOUT_MS, a write given up at its deadline
  if (!ApiError.is(err) && isDatabaseUnavailable(err)) err = databaseUnavailable();
  if (ApiError.is(err)) {
    const body: Record<string, unknown> = { error: err.code, message: err.message };
    if (err.details?.length) body.details = err.details;
    return json(body, { status: err.status, headers: err.headers });
  }
  console.error("[api] unexpected error:", err);
  return json({ error: "internal", message: "Something went wrong on our side; the request was not completed." }, 500);
}

/** Runs a route body and turns whatever it throws into the one error body. */
export async function handle(fn: () => Promise<Response>): Promise<Response> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof Response) return err;
    return errorResponse(err);
  }
}

/** 413 past a body limit; the connection closes after it, so the unread rest of the body is not drained. */
export const payloadTooLarge = (what: string, max: number) =>
  new ApiError(413, "payload_too_large", `The ${what} is larger than the ${max}-byte limit.`, undefined, { Connection: "close" });

/**
 * A Request made by the API dispatch (server/api-dispatch.ts) can hand over its body's bytes straight
 * from the socket, without the Fetch body stream: null when the body was already taken another way.
 */
export const NODE_BODY = Symbol("node body");
type NodeBodySource = { [NODE_BODY]?: (max: number) => Promise<Buffer> | null };

/** The raw body (empty when there is none), refused with 413 as soon as it passes `max` bytes (declared or streamed). */
export async function readBody(request: Request, max: number): Promise<Buffer> {
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > max) throw payloadTooLarge("body", max);
  const direct = (request as Request & NodeBodySource)[NODE_BODY]?.(max);
  if (direct) return direct;
  if (!request.body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      // cancel() would destroy the socket before the 413 is written: stop reading instead
      reader.releaseLock();
      throw payloadTooLarge("body", max);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);
const inflateRaw = promisify(zlib.inflateRaw);
const brotli = promisify(zlib.brotliDecompress);

const isTooLarge = (err: unknown) => (err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE" || err instanceof RangeError;

/**
 * Inflates with an output cap: zlib stops as soon as the output would pass `max` bytes, so a
 * decompression bomb costs at most `max` bytes of memory before its 413.
 */
export async function decodeBody(buf: Buffer, encoding: string, max: number): Promise<Buffer> {
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
export async function readDecodedBody(request: Request, max: number): Promise<Buffer> {
  let body = await readBody(request, max);
  const encodings = (request.headers.get("content-encoding") ?? "")
    .split(",")
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== "" && e !== "identity");
  // encodings are listed in the order they were applied
  for (const e of encodings.reverse()) body = await decodeBody(body, e, max);
  return body;
}

/**
 * Reads a JSON body with a size limit: 415 for another content type or an unknown
 * Content-Encoding, 413 past the limit (checked on Content-Length, while streaming, and on the
 * decompressed size), 400 for text that is not JSON or a body that does not decompress.
 */
export async function readJson(request: Request, maxBytes: number): Promise<unknown> {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/([\w.+-]+\+)?json\b/i.test(type.trim())) {
    throw new ApiError(415, "unsupported_media_type", "Send the body as JSON with content-type: application/json.");
  }
  const text = (await readDecodedBody(request, maxBytes)).toString("utf8");
  if (text.trim() === "") throw invalidPayload("The request body is empty; send a JSON object.");
  try {
    return JSON.parse(text);
  } catch {
    throw invalidPayload("The request body is not valid JSON.");
  }
}

/** zod issue paths as `errors[3].level`. */
export function issuePath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const p of path) {
    if (typeof p === "number") out += `[${p}]`;
    else out += out === "" ? String(p) : `.${String(p)}`;
  }
  return out || "(body)";
}

/** For resource routes that only read: any other method is a 405 with the error body. */
export const getOnly = () =>
  handle(async () => {
    throw methodNotAllowed(["GET"]);
  });
