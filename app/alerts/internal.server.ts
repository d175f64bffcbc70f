import { createHash, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import type { Config } from "~/env.server";
import { parseOr400 } from "~/input.server";
import { unauthorized } from "~/http.server";
import { dispatchAlerts, type AlertDeps, type DispatchResult } from "./dispatch.server";

/**
 * POST /api/notifications/dispatch: the internal trigger. The key is compared in constant time
 * (both sides hashed first, so neither the length nor a prefix leaks through timing).
 */
export function checkInternalKey(deps: { config: Pick<Config, "notificationSecret"> }, given: string | null): void {
  const a = createHash("sha256").update(given ?? "").digest();
  const b = createHash("sha256").update(deps.config.notificationSecret).digest();
  if (!given || !timingSafeEqual(a, b)) throw unauthorized("A valid internal key is required in the x-internal-key header.");
}

const DispatchInput = z.object({
  project_id: z.uuid({ error: "must be a UUID" }).transform((s) => s.toLowerCase()),
  // an empty list is a valid no-op ({sent: 0, failed: 0}), so callers need not special-case it
  fingerprints: z.array(z.string().min(1).max(200)).max(1000, "must hold at most 1000 fingerprints"),
});

export async function dispatchFromRequest(deps: AlertDeps, input: unknown): Promise<DispatchResult> {
  const { project_id, fingerprints } = parseOr400(DispatchInput, input);
  return dispatchAlerts(deps, project_id, fingerprints);
}
