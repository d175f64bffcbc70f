/**
 * What people call each rule trigger, on the alerts page and in the alert messages. The API keeps
 * its values (`new_group`, `regression`, `frequency`); only these names are shown.
 */
export const TRIGGER_NAME = {
  new_group: "New issue",
  regression: "Regression",
  frequency: "Spike",
} as const satisfies Record<string, string>;

export type Trigger = keyof typeof TRIGGER_NAME;

export const triggerName = (t: string) => TRIGGER_NAME[t as Trigger] ?? t;
