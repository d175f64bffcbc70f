import { data, redirect, type HeadersFunction } from "@remix-run/node";
import { ApiError, type ErrorDetail } from "~/http.server";

/**
 * The dashboard's side of error mapping: the same typed errors the Team API turns into JSON bodies
 * become an error page (loaders) or a message next to the form (actions). 5xx stay opaque. A project
 * that requires a second factor the user has not turned on sends them to turn it on.
 */
export async function pageLoad<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ApiError && err.code === "second_factor_required") throw redirect("/account/two-factor?required=1");
    if (err instanceof ApiError) throw data({ code: err.code, message: err.message }, { status: err.status, headers: err.headers });
    throw err;
  }
}

export type ActionError = { ok: false; error: string; details?: ErrorDetail[]; intent?: string };

/**
 * `fields` names a form's fields the way its labels do ({ new_password: "New password" }): a 400 about
 * one of them then reads "New password must be at least 8 characters." instead of the API's
 * "The request body is invalid: new_password must be at least 8 characters.".
 */
export async function pageAct<T>(intent: string | undefined, fn: () => Promise<T>, fields: Record<string, string> = {}) {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ApiError) {
      const first = err.code === "invalid_payload" ? err.details?.[0] : undefined;
      const error = first && Object.hasOwn(fields, first.path) ? `${fields[first.path]} ${first.message}.` : err.message;
      const body: ActionError = { ok: false, error, details: err.details, intent };
      return data(body, { status: err.status, headers: err.headers });
    }
    throw err;
  }
}

/** A form as a plain object (repeated names become arrays), for the same zod checks as the Team API. */
export function formObject(form: FormData, arrays: string[] = []): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of new Set(form.keys())) {
    const values = form.getAll(key).map((v) => (typeof v === "string" ? v : ""));
    out[key] = arrays.includes(key) ? values : values[0];
  }
  return out;
}

/** A `next` target that stays on this site (and that a Location header can carry: no control characters). */
export const safeNext = (next: string | null | undefined, fallback = "/projects") =>
  next && next.startsWith("/") && !next.startsWith("//") && !next.startsWith("/\\") && !/[\u0000-\u001f\u007f]/.test(next) ? next : fallback;

/**
 * A page's `headers`: a refused action's Retry-After reaches the browser with its 429 (Remix drops an
 * action's headers from a document response unless the route passes them on).
 */
export const retryAfterHeaders: HeadersFunction = ({ actionHeaders, parentHeaders }) => {
  const h = new Headers(parentHeaders);
  const retry = actionHeaders.get("Retry-After");
  if (retry) h.set("Retry-After", retry);
  return h;
};
