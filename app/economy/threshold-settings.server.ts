/**
 * Per-project, per-currency overrides of the anomaly thresholds (Team API and Economy → Settings):
 * any member reads them, owners and admins change them.
 */
import { data } from "@remix-run/node";
import { recordAudit } from "../../db/audit.js";
import type { Sql } from "../../db/client.js";
import { deleteThresholdOverride, putThresholdOverride } from "../../db/economy-thresholds.js";
import type { Config } from "~/env.server";
import { ApiError, invalidPayload, notFound, type ErrorDetail } from "~/http.server";
import { authorize, EVERYONE, MANAGERS, type Actor } from "~/team/access.server";
import { loadMap } from "./map.server";
import { thresholdViews, type ThresholdView } from "./thresholds.server";

type Defaults = Pick<Config, "economyAnomalyFactor" | "economyAnomalyMinAmount">;

/** The largest factor an override may set (a rise multiplying a balance a million times is found at any setting). */
export const MAX_FACTOR = 1_000_000;
const MAX_AMOUNT_DIGITS = 60;

export type OverrideInput = { factor: number | null; min_amount: string | null; off: boolean };

/** Reads a PUT body; every problem is a detail naming its field, and nothing is written when there is one. */
export function parseOverride(body: unknown): OverrideInput {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidPayload("Send an object with any of `factor`, `min_amount` and `off`.");
  }
  const input = body as Record<string, unknown>;
  const details: ErrorDetail[] = [];
  for (const k of Object.keys(input)) {
    if (!["factor", "min_amount", "off"].includes(k)) details.push({ path: k, message: "is not a field of a threshold (factor, min_amount, off)" });
  }
  let factor: number | null = null;
  if (input.factor !== undefined && input.factor !== null) {
    const f = typeof input.factor === "string" && /^\d+(\.\d+)?$/.test(input.factor.trim()) ? Number(input.factor) : input.factor;
    if (typeof f !== "number" || !Number.isFinite(f)) details.push({ path: "factor", message: "must be a number or null" });
    else if (f <= 1) details.push({ path: "factor", message: "must be greater than 1" });
    else if (f > MAX_FACTOR) details.push({ path: "factor", message: `must be at most ${MAX_FACTOR.toLocaleString("en-US")}` });
    else factor = f;
  }
  let minAmount: string | null = null;
  if (input.min_amount !== undefined && input.min_amount !== null) {
    const m = input.min_amount;
    const raw = typeof m === "number" ? (Number.isFinite(m) ? String(m) : "") : typeof m === "string" ? m.trim() : undefined;
    if (raw === undefined) details.push({ path: "min_amount", message: "must be a number, a decimal string or null" });
    else if (/^-/.test(raw) || (typeof m === "number" && m < 0)) details.push({ path: "min_amount", message: "must be at least 0" });
    else if (!/^\d+(\.\d+)?(e[+-]?\d+)?$/i.test(raw) || raw.length > MAX_AMOUNT_DIGITS || !Number.isFinite(Number(raw))) {
      details.push({ path: "min_amount", message: `must be a decimal amount (at most ${MAX_AMOUNT_DIGITS} characters)` });
    } else minAmount = raw;
  }
  if (input.off !== undefined && typeof input.off !== "boolean") details.push({ path: "off", message: "must be true or false" });
  if (details.length > 0) throw invalidPayload(`The threshold has ${details.length === 1 ? "a problem" : `${details.length} problems`}: ${details.map((d) => `${d.path} ${d.message}`).join("; ")}.`, details);
  return { factor, min_amount: minAmount, off: input.off === true };
}

async function currencyOf(sql: Sql, projectId: string, param: string | undefined) {
  const { map } = await loadMap(sql, projectId);
  const key = (param ?? "").toLowerCase();
  if (!map.currencies.some((c) => c.key === key)) {
    throw notFound(`No currency "${(param ?? "").slice(0, 40)}" in this project's map (${map.currencies.map((c) => c.key).join(", ")}).`);
  }
  return { map, key };
}

export async function getThresholdsFor(sql: Sql, config: Defaults, user: Actor, projectIdParam: string | undefined): Promise<{ currencies: ThresholdView[] }> {
  const { projectId } = await authorize(sql, user, projectIdParam, EVERYONE, "view the anomaly thresholds");
  const { map } = await loadMap(sql, projectId);
  return { currencies: await thresholdViews(sql, projectId, map, config) };
}

/** PUT: replaces the currency's override (a null figure keeps the learned one); answers the currency's view. */
export async function putThresholdFor(sql: Sql, config: Defaults, user: Actor, projectIdParam: string | undefined, currency: string | undefined, body: unknown) {
  const { projectId } = await authorize(sql, user, projectIdParam, MANAGERS, "change the anomaly thresholds");
  const { map, key } = await currencyOf(sql, projectId, currency);
  const input = parseOverride(body);
  await putThresholdOverride(sql, projectId, key, input, user.id);
  await recordAudit(sql, { projectId, actorId: user.id, action: "economy_threshold.set", target: key, details: { ...input } });
  return (await thresholdViews(sql, projectId, map, config)).find((v) => v.key === key)!;
}

/** DELETE: back to the learned threshold (or the default). */
export async function deleteThresholdFor(sql: Sql, config: Defaults, user: Actor, projectIdParam: string | undefined, currency: string | undefined) {
  const { projectId } = await authorize(sql, user, projectIdParam, MANAGERS, "change the anomaly thresholds");
  const { map, key } = await currencyOf(sql, projectId, currency);
  await deleteThresholdOverride(sql, projectId, key);
  await recordAudit(sql, { projectId, actorId: user.id, action: "economy_threshold.reset", target: key });
  return (await thresholdViews(sql, projectId, map, config)).find((v) => v.key === key)!;
}

/** The settings page's threshold forms: `threshold-save` and `threshold-reset`, one currency each. */
export async function thresholdFormAction(sql: Sql, config: Defaults, user: Actor, projectIdParam: string | undefined, intent: string, form: FormData) {
  const currency = String(form.get("currency") ?? "");
  const field = (k: string) => {
    const v = form.get(k);
    return typeof v === "string" && v.trim() !== "" ? v.trim() : null;
  };
  try {
    if (intent === "threshold-reset") {
      const v = await deleteThresholdFor(sql, config, user, projectIdParam, currency);
      return { ok: true as const, message: `${v.name}: back to the ${v.effective.source} threshold.`, currency: v.key };
    }
    const v = await putThresholdFor(sql, config, user, projectIdParam, currency, {
      factor: field("factor"),
      min_amount: field("min_amount"),
      off: form.get("off") === "on",
    });
    return { ok: true as const, message: `${v.name}: the threshold is saved.`, currency: v.key };
  } catch (err) {
    // the page shows the message on top and each field's problem under its form
    if (!ApiError.is(err)) throw err;
    return data({ ok: false as const, error: `Nothing was saved. ${err.message}`, details: err.details ?? [], currency }, { status: err.status });
  }
}
