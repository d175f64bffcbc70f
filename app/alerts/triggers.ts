/**
 * What people call each rule trigger, on the alerts page and in the alert messages. The API keeps
 * its values (`new_group`, `regression`, `frequency`, `economy_anomaly`, `supply_growth`, and the health triggers); only these
 * names are shown.
 */
export const TRIGGER_NAME = {
  new_group: "New issue",
  regression: "Regression",
  frequency: "Spike",
  economy_anomaly: "Economy anomaly",
  supply_growth: "Money supply growth",
  error_rate: "Error rate",
  error_free_sessions: "Error-free sessions",
  server_memory: "Server memory",
  server_heartbeat: "Server heartbeat",
  out_of_memory: "Out-of-memory closes",
  servers_drop: "Live servers drop",
} as const satisfies Record<string, string>;

export type Trigger = keyof typeof TRIGGER_NAME;

export const triggerName = (t: string) => TRIGGER_NAME[t as Trigger] ?? t;

/** Triggers about the economy rather than error groups: their rules have economy fields, not error filters. */
export const isEconomyTrigger = (t: string): t is "economy_anomaly" | "supply_growth" => t === "economy_anomaly" || t === "supply_growth";

export const HEALTH_TRIGGER_LIST = ["error_rate", "error_free_sessions", "server_memory", "server_heartbeat", "out_of_memory", "servers_drop"] as const;
export type HealthTriggerName = (typeof HEALTH_TRIGGER_LIST)[number];

/** Triggers about release health (issue 41): their rules have health thresholds, and fire and recover. */
export const isHealthTrigger = (t: string): t is HealthTriggerName => (HEALTH_TRIGGER_LIST as readonly string[]).includes(t);
