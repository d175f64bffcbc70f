import { isIP } from "node:net";
import type { Sql } from "../../db/client.js";
import { firstGroupId } from "../../db/onboarding.js";

/** Why a Roblox server could not reach `url`, or null when it looks reachable. */
export type UrlProblem = "unset" | "loopback" | "private" | null;

const PRIVATE_V4 = [/^10\./, /^192\.168\./, /^172\.(1[6-9]|2\d|3[01])\./, /^169\.254\./, /^100\.(6[4-9]|[7-9]\d|1[01]\d|12[0-7])\./];

/** Roblox game servers run in Roblox's data centres: loopback and private addresses are out of their reach. */
export function urlProblem(url: string, publicUrlSet: boolean): UrlProblem {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost") || /^127\./.test(host) || host === "::1" || host === "0.0.0.0") return "loopback";
  if ((isIP(host) === 4 && PRIVATE_V4.some((r) => r.test(host))) || /^f[cd]/.test(host) || /^fe80:/.test(host) || host.endsWith(".local")) return "private";
  return publicUrlSet ? null : "unset";
}

/** What the onboarding panel shows: the URL to paste, what is wrong with it, and the first issue once there is one. */
export async function onboardingData(sql: Sql, projectId: string, base: string, publicUrlSet: boolean) {
  return { url: base, problem: urlProblem(base, publicUrlSet), firstIssueId: await firstGroupId(sql, projectId) };
}
