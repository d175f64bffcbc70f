import type { Sql } from "../../db/client.js";
import { lockPlayers } from "../../db/economy.js";
import { writeFlowsTx, type Flow } from "../../db/economy-flows.js";
import { claimPushKey, recordPush } from "../../db/idempotency.js";
import { transaction } from "../../db/transaction.js";
import type { Config } from "~/env.server";
import { conflict, invalidPayload, type ErrorDetail } from "~/http.server";
import { withinWriteDeadline } from "~/db-deadline.server";
import { bodyHash } from "~/ingest/idempotency.server";
import { clipNesting, isStorable, tooDeep } from "~/text.server";
import type { CurrencyMap } from "./currency-map.server";
import { loadMap } from "./map.server";
import { numberToDecimal, parseUserId } from "./profile.server";

export const MAX_FLOWS = 1000;
export const MAX_SOURCE = 64;
export const MAX_ITEM = 128;
/** at most this many skipped flows are listed in an answer */
const MAX_REASONS = 50;
/** a decimal string amount: at most 100 digits before and after the point */
const DECIMAL = /^([+-]?)(\d{1,100})(?:\.(\d{1,100}))?$/;
const ISO_TIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:[Zz]|[+-]\d{2}:?\d{2})$/;

export type FlowsAnswer = { stored: number; skipped: number; skipped_reasons: { index: number; reason: string }[] };

/** The amount as an exact decimal string, or why it is not one. */
function parseAmount(v: unknown): string {
  let s: string | null;
  if (typeof v === "number") s = numberToDecimal(v);
  else if (typeof v === "string") {
    const m = DECIMAL.exec(v.trim());
    s = m ? `${m[1] === "-" ? "-" : ""}${m[2]}${m[3] ? `.${m[3]}` : ""}` : null;
  } else s = null;
  if (s === null) throw "amount must be a finite number or a decimal string";
  if (!/[1-9]/.test(s)) throw "amount must not be zero";
  return s;
}

/** One flow read against the project's map, or the reason it is skipped. */
export function parseFlow(item: unknown, currencies: Set<string>): Flow | string {
  try {
    if (typeof item !== "object" || item === null || Array.isArray(item)) return "must be an object with user_id, currency, amount and source";
    const f = item as Record<string, unknown>;
    const userId = parseUserId(f.user_id);
    if (!userId) return "user_id must be a positive integer or a string of digits";
    if (typeof f.currency !== "string") return "currency must be a string";
    const currency = f.currency.trim().toLowerCase();
    if (!currencies.has(currency)) return `currency must be a key of the project's currency map (${[...currencies].join(", ")})`;
    const amount = parseAmount(f.amount);
    if (typeof f.source !== "string") return "source must be a string";
    const source = f.source.trim().toLowerCase();
    if (source.length === 0 || source.length > MAX_SOURCE) return `source must be 1 to ${MAX_SOURCE} characters`;
    if (!isStorable(source)) return "source must not contain NUL characters or unpaired surrogates";
    let item_: string | null = null;
    if (f.item !== undefined && f.item !== null) {
      if (typeof f.item !== "string") return "item must be a string";
      item_ = f.item.trim() || null;
      if (item_ && item_.length > MAX_ITEM) return `item must be at most ${MAX_ITEM} characters`;
      if (item_ && !isStorable(item_)) return "item must not contain NUL characters or unpaired surrogates";
    }
    let occurredAt: Date | null = null;
    if (f.at !== undefined && f.at !== null) {
      const at = typeof f.at === "string" ? f.at.trim() : "";
      const t = ISO_TIME.test(at) ? new Date(at) : null;
      const year = t?.getUTCFullYear();
      if (!t || Number.isNaN(t.getTime()) || year! < 1970 || year! > 9999) return "at must be an ISO 8601 time such as 2026-11-29T10:00:00.000Z";
      occurredAt = t;
    }
    return { userId, currency, amount, source, item: item_, occurredAt };
  } catch (reason) {
    if (typeof reason === "string") return reason;
    throw reason;
  }
}

export type ParsedFlows = { flows: Flow[]; skipped: { index: number; reason: string }[] };

/** The flows of a request, or a 400 when `flows` is not an array of at most 1000 entries. */
export function flowsArray(value: unknown, path = "flows"): unknown[] {
  if (!Array.isArray(value)) throw invalidPayload("`flows` must be an array of {user_id, currency, amount, source} entries.", [{ path, message: "must be an array" }]);
  if (value.length > MAX_FLOWS) {
    throw invalidPayload(`The request holds ${value.length} flows; send at most ${MAX_FLOWS} per request.`, [
      { path, message: `must have at most ${MAX_FLOWS} flows` },
    ]);
  }
  return value;
}

/** Each entry read; the bad ones skipped with their reason (never a 400 on their own). */
export function parseFlows(entries: unknown[], map: CurrencyMap): ParsedFlows {
  const currencies = new Set(map.currencies.map((c) => c.key));
  const flows: Flow[] = [];
  const skipped: ParsedFlows["skipped"] = [];
  entries.forEach((e, index) => {
    const r = parseFlow(e, currencies);
    if (typeof r === "string") skipped.push({ index, reason: r });
    else flows.push(r);
  });
  return { flows, skipped };
}

export const flowDetails = (p: ParsedFlows): ErrorDetail[] => p.skipped.map((s) => ({ path: `flows[${s.index}]`, message: s.reason }));

export const flowsAnswer = (p: ParsedFlows): FlowsAnswer => ({
  stored: p.flows.length,
  skipped: p.skipped.length,
  skipped_reasons: p.skipped.slice(0, MAX_REASONS),
});

export type FlowDeps = { sql: Sql; config: Pick<Config, "dbTimeoutMs"> };

/**
 * POST /api/economy/flows: `{flows: [...]}` with 1..1000 entries. Bad entries are skipped with a
 * reason; a 400 (nothing written) only when none is valid. With an Idempotency-Key the answer is
 * recorded with the write, as for a push: a retry of the same body answers it and writes nothing.
 */
export async function postFlows(deps: FlowDeps, projectId: string, body: unknown, key: string | null = null): Promise<FlowsAnswer> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidPayload("Send an object with a `flows` array of {user_id, currency, amount, source} entries.");
  }
  const entries = flowsArray((body as { flows?: unknown }).flows);
  if (entries.length === 0) throw invalidPayload("The request holds no flows; send 1 to 1000.", [{ path: "flows", message: "must not be empty" }]);
  const { cut } = clipNesting(body);
  if (cut) throw tooDeep(cut);
  return withinWriteDeadline(deps, write(deps, projectId, body, entries, key));
}

async function write(deps: FlowDeps, projectId: string, body: unknown, entries: unknown[], key: string | null): Promise<FlowsAnswer> {
  const deadline = Date.now() + deps.config.dbTimeoutMs;
  const { map } = await loadMap(deps.sql, projectId);
  const parsed = parseFlows(entries, map);
  if (parsed.flows.length === 0) {
    const details = flowDetails(parsed);
    throw invalidPayload(`No entry is a valid flow: ${details[0].path} ${details[0].message}.`, details.slice(0, MAX_REASONS));
  }
  const answer = flowsAnswer(parsed);
  // the same body sent to the push endpoint is another request: its hash differs
  const hash = key === null ? null : bodyHash({ flows_endpoint: body });
  return transaction(
    deps.sql,
    async (tx) => {
      const recorded = key !== null && hash && (await claimPushKey(tx, projectId, key, hash));
      if (recorded && !recorded.sameBody) throw conflict("This Idempotency-Key was already used with a different body; send new flows with a new key.");
      if (recorded) return recorded.answer as FlowsAnswer;
      await lockPlayers(tx, projectId, parsed.flows.map((f) => f.userId));
      // received once the players are locked: a push of one of them that is being written now has
      // read the flows it reconciles with, and this flow counts for the player's next push
      await writeFlowsTx(tx, projectId, parsed.flows, new Date());
      if (key !== null && hash) await recordPush(tx, projectId, key, hash, answer);
      return answer;
    },
    { deadline, attempts: 3 },
  );
}
