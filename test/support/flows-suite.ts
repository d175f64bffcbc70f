import { afterAll, beforeAll, beforeEach } from "vitest";
import { sdkSuite } from "./sdk-suite.js";
import { scriptedProxy, type Scripted } from "./scripted-proxy.js";
import type { SentRequest } from "./roblox.js";

/**
 * The flows suites' common ground (test/integration/sdk-roblox-flows*.test.ts): an SDK suite whose
 * `POST /api/economy/ingest` is answered as the service's flows contract says (docs/economy.md,
 * "Flows"): `players` and `flows` side by side, a bad flow skipped with a reason, `flows: {stored,
 * skipped, skipped_reasons}` beside the push's answer. Errors and loss reports go on to the real
 * service, which stores the reported losses. The suites are two files because each test file's
 * simulated servers share one fixed wasm memory (test/support/roblox.ts).
 */

/** The currencies of the project's map, as the contract server knows them. */
const CURRENCIES = new Set(["coins", "gems"]);
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export type Flow = { user_id: number; currency: string; amount: number | string; source: string; item?: string; at?: string };

/** Why the contract skips a flow, or null when it takes it. */
function flowProblem(f: any): string | null {
  if (typeof f !== "object" || f === null) return "must be an object";
  if (!Number.isSafeInteger(f.user_id) || f.user_id <= 0) return "user_id must be a positive integer";
  if (typeof f.currency !== "string" || !CURRENCIES.has(f.currency.toLowerCase())) return "currency is not in the project's currency map";
  const amount = Number(f.amount);
  if (!Number.isFinite(amount) || amount === 0) return "amount must be a finite number other than 0";
  if (typeof f.source !== "string" || f.source.trim().length < 1 || f.source.trim().length > 64) return "source must be 1 to 64 characters";
  if (f.item !== undefined && (typeof f.item !== "string" || f.item.length > 128)) return "item must be at most 128 characters";
  if (f.at !== undefined && Number.isNaN(Date.parse(f.at))) return "at must be an ISO time";
  return null;
}

/** The service's answer to an economy request as the contract has it (every player stored). */
function contractAnswer(body: any): Scripted {
  const players: unknown[] = Array.isArray(body?.players) ? body.players : [];
  const flows: unknown[] | undefined = Array.isArray(body?.flows) ? body.flows : undefined;
  if (players.length === 0 && (flows?.length ?? 0) === 0)
    return { status: 400, body: { error: "invalid_payload", message: "Send players or flows." } };
  if (players.length > 100 || (flows?.length ?? 0) > 1000)
    return { status: 400, body: { error: "invalid_payload", message: "Too many entries." } };
  const answer: Record<string, unknown> = { stored: players.length, skipped: 0, skipped_values: 0, skipped_reasons: [] };
  if (flows) {
    const reasons = flows.flatMap((f, index) => {
      const reason = flowProblem(f);
      return reason ? [{ index, reason }] : [];
    });
    answer.flows = { stored: flows.length - reasons.length, skipped: reasons.length, skipped_reasons: reasons.slice(0, 50) };
  }
  return { status: 200, body: answer };
}

/** One flows suite: call at the top of a test file. */
export function flowsSuite() {
  const t = sdkSuite();
  /** Answers an economy request differently for one test (undefined: as the contract says). */
  let economyAnswer: (body: any) => Scripted = () => undefined;
  let proxy: Awaited<ReturnType<typeof scriptedProxy>>;

  beforeAll(async () => {
    proxy = await scriptedProxy(
      () => t.app.url,
      (path, body) => (path === "/api/economy/ingest" ? (economyAnswer(body) ?? contractAnswer(body)) : undefined),
    );
    t.proxyUrl = proxy.url;
  });
  afterAll(async () => {
    await proxy?.close();
  });
  beforeEach(() => {
    economyAnswer = () => undefined;
  });

  const economyRequests = () => t.rbx.requests.filter((r) => r.url.endsWith("/api/economy/ingest"));
  const bodyOf = (r: SentRequest) => JSON.parse(r.body) as { players?: { user_id: number; profile: any }[]; flows?: Flow[] };
  return {
    t,
    /** Answers the economy requests of the running test differently (undefined: as the contract says). */
    answerEconomy: (f: (body: any) => Scripted) => {
      economyAnswer = f;
    },
    economyRequests,
    bodyOf,
    /** The flows the service took (2xx), in the order it received them. */
    receivedFlows: () => economyRequests().filter((r) => r.status === 200).flatMap((r) => bodyOf(r).flows ?? []),
    /** status().dropped (an empty table is encoded as `[]`). */
    dropped: async () => {
      const counts = JSON.parse((await t.rbx.run(`return game:GetService("HttpService"):JSONEncode(Monitor.status().dropped)`)) as string);
      return Array.isArray(counts) && counts.length === 0 ? {} : counts;
    },
  };
}
