import { expect } from "vitest";
import { countersApplied } from "./counters.js";
import { getJson, postJson, type TestApp } from "./server.js";

/** Helpers shared by the query, stats and retention tests: data goes in through POST /api/ingest only. */

export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

export const iso = (ms: number) => new Date(ms).toISOString();
export const floorHour = (ms: number) => Math.floor(ms / HOUR) * HOUR;

/**
 * Posts events in batches of at most 100; every batch must be accepted. Returns the summed response
 * once the deferred counters of the batches are applied, so the reads after it see all of them.
 */
export async function ingest(app: TestApp, apiKey: string, events: Record<string, unknown>[]) {
  const total = { count: 0, occurrences: 0, throttled: 0 };
  for (let i = 0; i < events.length; i += 100) {
    const r = await postJson(app, "/api/ingest", { errors: events.slice(i, i + 100) }, apiKey);
    expect(r.status, r.text).toBe(200);
    total.count += r.body.count;
    total.occurrences += r.body.occurrences;
    total.throttled += r.body.throttled;
  }
  await countersApplied(app.sql);
  return total;
}

/** `n` copies of an event; `traced` gives each its own trace_id so none is throttled. */
export function repeat(n: number, event: Record<string, unknown>, traced = false) {
  return Array.from({ length: n }, () => (traced ? { ...event, trace_id: crypto.randomUUID() } : { ...event }));
}

export function withQuery(pathname: string, params: Record<string, string | number | boolean> = {}) {
  const q = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]));
  const s = q.toString();
  return s ? `${pathname}?${s}` : pathname;
}

export const list = (app: TestApp, apiKey: string, params: Record<string, string | number | boolean> = {}) =>
  getJson(app, withQuery("/api/v1/errors", params), apiKey);

/** Fetches every page of a listing with the given page size; fails if the pages do not add up to `total`. */
export async function listAll(app: TestApp, apiKey: string, params: Record<string, string | number | boolean>, pageSize: number) {
  const rows: any[] = [];
  let total = -1;
  for (let offset = 0; ; offset += pageSize) {
    const r = await list(app, apiKey, { ...params, limit: pageSize, offset });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ limit: pageSize, offset });
    if (total === -1) total = r.body.total;
    expect(r.body.total).toBe(total);
    rows.push(...r.body.data);
    if (r.body.data.length < pageSize) break;
  }
  expect(rows.length).toBe(total);
  return rows;
}

/** A 400 with the one error body, naming the offending parameter in details. */
export function expectInvalidQuery(r: { status: number; body: any }, param: string) {
  expect(r.status).toBe(400);
  expect(r.body.error).toBe("invalid_query");
  expect(typeof r.body.message).toBe("string");
  expect(r.body.message.length).toBeGreaterThan(0);
  expect(r.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path: param, message: expect.any(String) })]));
}

export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Raw event ids are strings of a bigint: compare them as numbers. */
export const idDesc = (a: string, b: string) => (BigInt(a) > BigInt(b) ? -1 : BigInt(a) < BigInt(b) ? 1 : 0);
