/**
 * The one error body and the helpers every resource route uses: typed errors are mapped to
 * `{error, message, details?}` here, and a 500 never carries internals.
 */
import zlib from "node:zlib";
import { isDatabaseUnavailable } from "../db/client.js";
import type { BodyBudget, BodyHold } from "./body-budget.server";
import { log } from "../log/logger.js";

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
 * The headers of a Response made by `json()` as name/value pairs, while nothing has asked for its
 * Headers object (undefined after): the API dispatch writes them without building one.
 */
export const JSON_HEADERS = Symbol("json headers");

const JSON_TYPE = "application/json; charset=utf-8";

/**
 * A JSON Response that is never constructed as one until something needs it. On Node 20 undici's
 * Response constructor (its init conversions, its Headers, a body stream) costs more than the rest
 * of a refused API request, and the API dispatch only reads the status, the headers and the text.
 * So `instanceof Response` holds and `status`, `statusText`, `ok`, `type`, `url`, `redirected` and
 * `headers` answer from here (the Headers made on first use), and every other member (`body`, the
 * body readers, `bodyUsed`) from a full Response made on first use with the same status, headers
 * and text. Whatever reads it (Remix, a test, `clone()`) sees a plain Response.
 */
class JsonResponse {
  readonly status: number;
  readonly statusText: string;
  private readonly jsonText: string | undefined;
  /** headers given to json() as a plain object (written after content-type and cache-control are set) */
  private readonly extra: Record<string, string> | undefined;
  private made: Headers | undefined;
  private full: Response | undefined;

  constructor(text: string | undefined, status: number, extra: Record<string, string> | undefined) {
    this.jsonText = text;
    this.status = status;
    this.statusText = "";
    this.extra = extra;
  }

  get ok(): boolean {
    return this.status >= 200 && this.status <= 299;
  }
  get type(): ResponseType {
    return "default";
  }
  get url(): string {
    return "";
  }
  get redirected(): boolean {
    return false;
  }

  get headers(): Headers {
    if (!this.made) {
      const h = new Headers(this.extra);
      h.set("content-type", JSON_TYPE);
      h.set("cache-control", "no-store");
      this.made = h;
    }
    return this.made;
  }

  get [JSON_TEXT](): string | undefined {
    return this.full ? undefined : (this.jsonText ?? "");
  }

  get [JSON_HEADERS](): [string, string][] | undefined {
    if (this.made || this.full) return undefined;
    const out: [string, string][] = [
      ["content-type", JSON_TYPE],
      ["cache-control", "no-store"],
    ];
    if (this.extra) {
      for (const [name, value] of Object.entries(this.extra)) {
        const lower = name.toLowerCase();
        if (lower !== "content-type" && lower !== "cache-control") out.push([lower, value]);
      }
    }
    return out;
  }

  /** The Response as `new Response(text, init)` builds it. */
  response(): Response {
    return (this.full ??= new Response(this.jsonText, { status: this.status, statusText: this.statusText, headers: this.headers }));
  }

  get bodyUsed(): boolean {
    return this.full?.bodyUsed ?? false;
  }

  clone(): Response {
    if (this.bodyUsed) throw new TypeError("Response.clone: Body has already been consumed.");
    const copy = new JsonResponse(this.jsonText, this.status, undefined);
    copy.made = new Headers(this.headers);
    return copy as unknown as Response;
  }
}
Object.setPrototypeOf(JsonResponse.prototype, Response.prototype);
// body, the body readers and anything else a Response has answer from the full Response
for (const name of Reflect.ownKeys(Response.prototype)) {
  if (name === "constructor" || Object.hasOwn(JsonResponse.prototype, name)) continue;
  const d = Object.getOwnPropertyDescriptor(Response.prototype, name)!;
  if (d.get) {
    const get = d.get;
    Object.defineProperty(JsonResponse.prototype, name, { configurable: true, enumerable: d.enumerable, get(this: JsonResponse) { return get.call(this.response()); } });
  } else if (typeof d.value === "function") {
    const fn = d.value as (...args: unknown[]) => unknown;
    Object.defineProperty(JsonResponse.prototype, name, { configurable: true, writable: true, enumerable: d.enumerable, value(this: JsonResponse, ...args: unknown[]) { return fn.apply(this.response(), args); } });
  }
}

/** A status the Response constructor accepts (it throws a RangeError for any other). */
const validStatus = (s: number) => Number.isInteger(s) && s >= 200 && s <= 599;

export function json(body: unknown, init: number | ResponseInit = 200): Response {
  const text = JSON.stringify(body) as string | undefined;
  const o = typeof init === "number" ? { status: init } : init;
  const status = o.status ?? 200;
  const headers = o.headers;
  const plainHeaders = headers === undefined || (Object.getPrototypeOf(headers) === Object.prototype && Object.values(headers).every((v) => typeof v === "string"));
  if (validStatus(status) && !o.statusText && plainHeaders) return new JsonResponse(text, status, headers as Record<string, string> | undefined) as unknown as Response;
  // anything else (a statusText, Headers or pairs, a status the constructor refuses) as the constructor takes it
  const full = new Response(text, o);
  full.headers.set("content-type", JSON_TYPE);
  full.headers.set("cache-control", "no-store");
  return full;
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
  const response = json({ error: "internal", message: "Something went wrong on our side; the request was not completed." }, 500);
  // The API dispatch logs the error with its request's id when it writes this answer (it takes it
  // from UNEXPECTED before this turn of the event loop ends); anything else that gets the answer
  // (Remix, a test) leaves it to be logged here, in the request's logging context.
  const claim = { err, logged: false };
  (response as Response & { [UNEXPECTED]?: typeof claim })[UNEXPECTED] = claim;
  setImmediate(() => {
    if (!claim.logged) log.error({ err }, "[api] unexpected error");
  });
  return response;
}

/**
 * On a 500 made by errorResponse: the error it answers for, not yet logged. Whoever logs it sets
 * `logged` (server/api-dispatch.ts, with the request's id).
 */
export const UNEXPECTED = Symbol("unexpected error");

/** Runs a route body and turns whatever it throws into the one error body. */
export async function handle(fn: () => Promise<Response>): Promise<Response> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof Response) return err;
    return errorResponse(err);
  }
}

/**
 * 413 past a body limit. The connection closes after it: the unread rest of the body is read and
 * discarded first, within a bound (server.ts, lingerOverUnreadBody), so the client reads the 413
 * instead of a reset connection.
 */
export const payloadTooLarge = (what: string, max: number) =>
  new ApiError(413, "payload_too_large", `The ${what} is larger than the ${max}-byte limit.`, undefined, { Connection: "close" });

/**
 * 503 when the process already holds as many body bytes as its budget allows (BODY_MEMORY_BYTES);
 * answered before the body is read, or as soon as the budget runs out while reading or decoding it.
 */
export const bodiesBusy = () =>
  new ApiError(503, "unavailable", "The server is reading as many request bodies as it can hold at once; retry shortly.", undefined, {
    "Retry-After": String(RETRY_AFTER_SECONDS),
    Connection: "close",
  });

/**
 * A Request made by the API dispatch (server/api-dispatch.ts) can hand over its body's bytes straight
 * from the socket, without the Fetch body stream: null when the body was already taken another way.
 * `take` is called with each chunk's size before it is kept; what it throws ends the read.
 */
export const NODE_BODY = Symbol("node body");
type NodeBodySource = { [NODE_BODY]?: (max: number, take: (bytes: number) => void) => Promise<Buffer> | null };

/**
 * A Request made by the API dispatch (server/api-dispatch.ts) can answer its request target (the
 * path and query it was sent with) when the query read from it is the query of its `url`: then
 * `queryOf` does not spell the address out (its host, protocol and port, then `new URL`), which
 * cost a Sentry request about 10 µs only for its `sentry_key`. Undefined when it cannot.
 */
export const NODE_TARGET = Symbol("node target");

/** The raw body (empty when there is none), refused with 413 as soon as it passes `max` bytes (declared or streamed). */
export async function readBody(request: Request, max: number, hold?: BodyHold): Promise<Buffer> {
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > max) throw payloadTooLarge("body", max);
  // each chunk is held against the process's budget as it arrives: a client that declares a large
  // body and sends it slowly holds only what it has sent
  const take = (bytes: number) => {
    if (hold && !hold.grow(bytes)) throw bodiesBusy();
  };
  const direct = (request as Request & NodeBodySource)[NODE_BODY]?.(max, take);
  if (direct) return direct;
  if (!request.body) return Buffer.alloc(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    try {
      if (size > max) throw payloadTooLarge("body", max);
      take(value.byteLength);
    } catch (err) {
      // cancel() would destroy the socket before the answer is written: stop reading instead
      reader.releaseLock();
      throw err;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** The content-codings the body readers remove: one per request. */
export type ContentCoding = "gzip" | "deflate" | "br";
const CODINGS: Record<string, ContentCoding> = { gzip: "gzip", "x-gzip": "gzip", deflate: "deflate", br: "br" };

/**
 * The request's content-coding, judged on the header alone so a refusal costs nothing: none (or
 * `identity`), or exactly one of gzip, x-gzip, deflate, br. Two or more (`gzip, gzip`) are a 415,
 * as nginx and Sentry's Relay decode one: each layer could inflate to the whole limit again, and
 * no client stacks them.
 */
export function contentCoding(request: Request): ContentCoding | undefined {
  const header = request.headers.get("content-encoding");
  if (!header) return undefined;
  const codings = header
    .split(",")
    .map((e) => e.trim().toLowerCase())
    .filter((e) => e !== "" && e !== "identity");
  if (codings.length === 0) return undefined;
  if (codings.length > 1) {
    throw new ApiError(415, "unsupported_media_type", "Send the body with one Content-Encoding (gzip, deflate or br), not several stacked.");
  }
  const coding = CODINGS[codings[0]];
  if (!coding) {
    const name = codings[0].slice(0, 40).replace(/[^\x21-\x7e]/g, "?");
    throw new ApiError(415, "unsupported_media_type", `Content-Encoding ${name} is not supported; send gzip, deflate, br or none.`);
  }
  return coding;
}

const DECODE_CHUNK_BYTES = 64 * 1024;

function decoderFor(coding: ContentCoding, body: Buffer): zlib.Gunzip | zlib.Inflate | zlib.InflateRaw | zlib.BrotliDecompress {
  const opts = { chunkSize: DECODE_CHUNK_BYTES };
  if (coding === "gzip") return zlib.createGunzip(opts);
  if (coding === "br") return zlib.createBrotliDecompress(opts);
  // HTTP's "deflate" is zlib-wrapped (RFC 1950: CM 8 and a header that is a multiple of 31), but
  // some clients send raw deflate
  const zlibWrapped = body.length >= 2 && (body[0] & 0x0f) === 8 && ((body[0] << 8) | body[1]) % 31 === 0;
  return zlibWrapped ? zlib.createInflate(opts) : zlib.createInflateRaw(opts);
}

/**
 * Inflates with an output cap, streaming: each chunk is held against the process's budget as zlib
 * produces it, and decoding stops as soon as the output would pass `max` bytes (413) or the budget
 * has no room (503). A decompression bomb so costs at most `max` bytes, and a crowd of them at
 * most the budget.
 */
export function decodeBody(body: Buffer, coding: ContentCoding, max: number, hold?: BodyHold): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const stream = decoderFor(coding, body);
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      stream.destroy();
      reject(err);
    };
    stream.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) return fail(payloadTooLarge("decompressed body", max));
      if (hold && !hold.grow(chunk.length)) return fail(bodiesBusy());
      chunks.push(chunk);
    });
    stream.on("error", () => fail(invalidPayload(`The body is not valid ${coding} data.`)));
    stream.on("end", () => {
      if (settled) return;
      settled = true;
      if (chunks.length === 1) return resolve(chunks[0]);
      // the joined copy is held too, until the whole hold is released
      if (hold && !hold.grow(size)) return reject(bodiesBusy());
      resolve(Buffer.concat(chunks, size));
    });
    stream.end(body);
  });
}

/**
 * Reads the body and removes its one content-coding, both within `max` bytes, and hands it to `use`
 * while its bytes are held against the process's budget (Services.bodies); they are given back when `use` is done,
 * also when anything fails or the client goes away. 503 unread when the budget is already spent.
 */
export async function withBody<T>(request: Request, max: number, budget: BodyBudget, use: (body: Buffer, hold: BodyHold) => T | Promise<T>): Promise<T> {
  const coding = contentCoding(request);
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > max) throw payloadTooLarge("body", max);
  const hold = budget.reserve(0);
  // a body whose declared bytes the budget cannot hold now is refused before a byte of it is read
  if (!hold || (Number.isFinite(declared) && !hold.grow(declared))) {
    hold?.release();
    throw bodiesBusy();
  }
  try {
    // the declaration was a check, not a claim: the chunks are held as they come
    hold.shrinkTo(0);
    const raw = await readBody(request, max, hold);
    const body = coding ? await decodeBody(raw, coding, max, hold) : raw;
    return await use(body, hold);
  } finally {
    hold.release();
  }
}

/**
 * Reads a JSON body with a size limit: 415 for another content type or a Content-Encoding that is
 * not one of gzip, deflate, br, 413 past the limit (checked on Content-Length, while streaming, and
 * on the decompressed size), 400 for text that is not JSON or a body that does not decompress, 503
 * past the process's body budget.
 */
export async function readJson(request: Request, max: number, budget: BodyBudget): Promise<unknown> {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/([\w.+-]+\+)?json\b/i.test(type.trim())) {
    throw new ApiError(415, "unsupported_media_type", "Send the body as JSON with content-type: application/json.");
  }
  return withBody(request, max, budget, (body) => {
    const text = body.toString("utf8");
    if (text.trim() === "") throw invalidPayload("The request body is empty; send a JSON object.");
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw invalidPayload("The request body is not valid JSON.");
    }
  });
}

/**
 * The limit of a page's form post that anyone may send (sign-in, first-run setup, a share link's
 * status): an email, a password and its confirmation of 1,024 characters each, percent-encoded.
 */
export const OPEN_FORM_MAX_BYTES = 32 * 1024;
const OPEN_FORM_PAGES = /^\/(login|setup|share\/[^/]+)\/?$/i;
/** Economy settings take a pasted profile to preview: as large as a push may carry one. */
const ECONOMY_SETTINGS_PAGE = /^\/projects\/[^/]+\/economy\/settings\/?$/i;

/**
 * Admits a page's form post before Remix reads it (`request.formData()` reads the whole body and
 * removes no Content-Encoding): 415 for a Content-Encoding (browsers never send one on a form),
 * 411 without a Content-Length (browsers always send one), 413 past OPEN_FORM_MAX_BYTES on the
 * pages anyone may post to, past ECONOMY_MAX_BODY_BYTES on economy settings (a pasted profile to
 * preview) and past MAX_BODY_BYTES elsewhere, 503 when the process's body budget
 * cannot hold the declared bytes. The hold returned is to be released when the response ends.
 */
export function admitPageForm(
  pathname: string,
  headers: { "content-encoding"?: string; "content-length"?: string; "transfer-encoding"?: string },
  limits: { maxBodyBytes: number; economyMaxBodyBytes: number },
  budget: BodyBudget,
): BodyHold | undefined {
  const codings = (headers["content-encoding"] ?? "").split(",").filter((e) => !/^\s*(identity)?\s*$/i.test(e));
  if (codings.length > 0) {
    throw new ApiError(415, "unsupported_media_type", "Send the form without a Content-Encoding.", undefined, { Connection: "close" });
  }
  const declared = headers["content-length"];
  if (declared === undefined) {
    if (headers["transfer-encoding"] === undefined) return undefined;
    throw new ApiError(411, "length_required", "Send the form with a Content-Length.", undefined, { Connection: "close" });
  }
  const length = Number(declared);
  // a form posted from a hydrated page goes to the page's `.data` path
  const page = pathname.replace(/\.data$/i, "");
  const max = OPEN_FORM_PAGES.test(page)
    ? OPEN_FORM_MAX_BYTES
    : ECONOMY_SETTINGS_PAGE.test(page)
      ? limits.economyMaxBodyBytes
      : limits.maxBodyBytes;
  if (length > max) throw payloadTooLarge("form", max);
  const hold = budget.reserve(length);
  if (!hold) throw bodiesBusy();
  return hold;
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
