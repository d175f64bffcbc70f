import { Form } from "@remix-run/react";
import { ActionMessage, Submit } from "./ui";

const CHOICES = [
  { value: "off", label: "Not required" },
  { value: "owners_admins", label: "Required for owners and admins" },
  { value: "everyone", label: "Required for everyone" },
] as const;

/** The Settings page's two-factor requirement: read by every member, set by owners and admins. */
export function TwoFactorRequirementPanel({ value, manager, result }: { value: string; manager: boolean; result: unknown }) {
  const current = CHOICES.find((c) => c.value === value)?.label ?? value;
  return (
    <section className="panel" data-testid="two-factor-requirement">
      <h2 style={{ marginTop: 0 }}>Two-factor authentication</h2>
      <ActionMessage data={result} intent="two-factor-required" />
      {manager ? (
        <Form method="post" className="row">
          <input type="hidden" name="intent" value="two-factor-required" />
          <label htmlFor="two_factor_required">Requirement</label>
          <select id="two_factor_required" name="two_factor_required" defaultValue={value}>
            {CHOICES.map((c) => <option key={c.value} value={c.value}>{c.label}</option>)}
          </select>
          <Submit pending="Saving…">Save</Submit>
        </Form>
      ) : (
        <p>{current}.</p>
      )}
      <p className="muted small">
        Members whose role it covers must turn on two-factor authentication (Account page) before they can open this project or use it through the Team API.
      </p>
    </section>
  );
}
