/**
 * Every action the audit log records, with what it says to a reader (docs/audit.md lists the same).
 * Project actions are in a project's log; instance actions (`account.*`, `instance_admin.*`,
 * `project.deleted`) in the instance's. Plain data: the pages read it in the browser too.
 */
export const PROJECT_ACTIONS = {
  "project.created": "Project created",
  "project.renamed": "Project renamed",
  "api_key.created": "API key created",
  "api_key.revoked": "API key revoked",
  "dsn_key.created": "DSN key created",
  "dsn_key.renamed": "DSN key renamed",
  "dsn_key.limit_changed": "DSN key rate limit changed",
  "dsn_key.revoked": "DSN key revoked",
  "member.added": "Member added",
  "member.role_changed": "Member's role changed",
  "member.removed": "Member removed",
  "alert_channel.created": "Alert channel created",
  "alert_channel.changed": "Alert channel changed",
  "alert_channel.enabled": "Alert channel enabled",
  "alert_channel.disabled": "Alert channel disabled",
  "alert_channel.deleted": "Alert channel deleted",
  "alert_rule.created": "Alert rule created",
  "alert_rule.changed": "Alert rule changed",
  "alert_rule.enabled": "Alert rule enabled",
  "alert_rule.disabled": "Alert rule disabled",
  "alert_rule.deleted": "Alert rule deleted",
  "economy_map.saved": "Currency map saved",
  "economy_map.reset": "Currency map reset to the default",
  "economy_threshold.set": "Anomaly threshold set",
  "economy_threshold.reset": "Anomaly threshold reset to the learned one",
  "open_cloud_key.saved": "Open Cloud key saved",
  "open_cloud_key.deleted": "Open Cloud key deleted",
  "share_link.created": "Share link created",
  "share_link.revoked": "Share link revoked",
  "grouping_rule.created": "Grouping rule created",
  "grouping_rule.changed": "Grouping rule changed",
  "grouping_rule.deleted": "Grouping rule deleted",
  "grouping_rule.reordered": "Grouping rules reordered",
  "issue.deleted": "Issue deleted",
  "project.two_factor_requirement_changed": "Two-factor requirement changed",
} as const;

export const INSTANCE_ACTIONS = {
  "account.created": "Account created",
  "account.password_changed": "Password changed",
  "account.password_reset": "Password reset by an operator",
  "account.two_factor_enabled": "Two-factor authentication turned on",
  "account.two_factor_disabled": "Two-factor authentication turned off",
  "account.two_factor_reset": "Two-factor authentication removed by an operator",
  "account.recovery_codes_replaced": "Recovery codes replaced",
  "account.identity_linked": "Sign-in provider linked",
  "account.identity_unlinked": "Sign-in provider unlinked",
  "account.sign_in_failed": "Sign-in failed",
  "account.sign_in_locked": "Sign-in locked for a while",
  "instance_admin.granted": "Instance admin granted",
  "instance_admin.revoked": "Instance admin taken back",
  "project.deleted": "Project deleted",
} as const;

const ALL: Record<string, string> = { ...PROJECT_ACTIONS, ...INSTANCE_ACTIONS };

/** A reader's words for an action; an action this list does not know yet reads as its name. */
export const actionLabel = (action: string) => ALL[action] ?? action;
