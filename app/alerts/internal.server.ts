import { z } from "zod";
import type { Config } from "~/env.server";
import { parseOr400 } from "~/input.server";
import { unauthorized } from "~/http.server";
import { internalKeyMatches } from "~/auth/internal-key.server";
import { dispatchAlerts, type AlertDeps, type DispatchResult } from "./dispatch.server";

/** POST /api/notifications/dispatch: the internal trigger, for callers with the internal key. */
export function checkInternalKey(deps: { config: Pick<Config, "notificationSecret"> }, given: string | null): void {
  if (!given || !internalKeyMatches(given, deps.config.notificationSecret)) {
    throw unauthorized("A valid internal key is required in the x-internal-key header.");
  }
}

export const DispatchInput = z.object({
  project_id: z.uuid({ error: "must be a UUID" }).transform((s) => s.toLowerCase()),
  // an empty list is a valid no-op ({sent: 0, failed: 0}), so callers need not special-case it
  fingerprints: z.array(z.string().min(1).max(200)).max(1000, "must hold at most 1000 fingerprints"),
});

export async function dispatchFromRequest(deps: AlertDeps, input: unknown): Promise<DispatchResult> {
  const { project_id, fingerprints } = parseOr400(DispatchInput, input);
  return dispatchAlerts(deps, project_id, fingerprints);
}
