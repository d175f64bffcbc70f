/**
 * What people call each rule trigger, on the alerts page and in the alert messages. The API keeps
 * its values (`new_group`, `regression`, `frequency`, `economy_anomaly`, `supply_growth`); only these
 * names are shown.
 */
export const TRIGGER_NAME = {
  new_group: "New issue",
  regression: "Regression",
  frequency: "Spike",
  economy_anomaly: "Economy anomaly",
  supply_growth: "Money supply growth",
} as const satisfies Record<string, string>;

export type Trigger = keyof typeof TRIGGER_NAME;

export const triggerName = (t: string) => TRIGGER_NAME[t as Trigger] ?? t;

/** Triggers about the economy rather than error groups: their rules have economy fields, not error filters. */
export const isEconomyTrigger = (t: string): t is "economy_anomaly" | "supply_growth" => t === "economy_anomaly" || t === "supply_growth";
