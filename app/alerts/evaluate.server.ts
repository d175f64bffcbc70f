import type { AlertGroup, RuleRow } from "../../db/alerts.js";

/** Pure rule logic: whether a group passes a rule's filters and whether its trigger holds now. */

// an alert that could not be evaluated for longer than this (jobs down) is dropped, not sent late
const STALE_MS = 24 * 3_600_000;

export function matchesFilters(
  rule: Pick<RuleRow, "levels" | "environments" | "message_contains" | "server_only" | "min_players">,
  g: Pick<AlertGroup, "level" | "environment" | "message" | "status" | "client_only" | "user_count">,
): boolean {
  if (g.status === "ignored") return false;
  // what only game clients reported (possibly an exploiter's text), and what too few players had
  if (rule.server_only && g.client_only) return false;
  if (rule.min_players > 0 && Number(g.user_count) < rule.min_players) return false;
  if (rule.levels.length > 0 && !rule.levels.includes(g.level)) return false;
  if (rule.environments.length > 0 && !rule.environments.includes(g.environment)) return false;
  if (rule.message_contains && !g.message.toLowerCase().includes(rule.message_contains.toLowerCase())) return false;
  return true;
}

/**
 * new_group: the group was created after the rule existed (and recently); regression: the group
 * reopened after the rule existed and is still open; frequency: the window count reached the
 * threshold. Whether the alert is actually sent is then decided by the conditional claim
 * (once per group for new_group, cooldown and newer regression otherwise).
 */
export function triggerHolds(
  rule: Pick<RuleRow, "trigger" | "created_at" | "threshold_count">,
  g: Pick<AlertGroup, "id" | "created_at" | "regressed_at" | "status">,
  windowCount: number | undefined,
  now = Date.now(),
): boolean {
  switch (rule.trigger) {
    case "new_group":
      return g.created_at.getTime() >= rule.created_at.getTime() && now - g.created_at.getTime() < STALE_MS;
    case "regression":
      return (
        g.status === "open" &&
        g.regressed_at !== null &&
        g.regressed_at.getTime() >= rule.created_at.getTime() &&
        now - g.regressed_at.getTime() < STALE_MS
      );
    case "frequency":
      return rule.threshold_count !== null && (windowCount ?? 0) >= rule.threshold_count;
    default:
      // economy triggers are evaluated by app/alerts/economy.server.ts, never on groups
      return false;
  }
}
