import { Form } from "@remix-run/react";
import { plural } from "~/components/format";
import { amount } from "./charts";

type View = {
  key: string;
  name: string;
  learned: { factor: number; min_amount: string; rises: number; window_days: number; computed_at: string | Date } | null;
  override: { factor: number | null; min_amount: string | null; off: boolean } | null;
  effective: { factor: number; min_amount: string; off: boolean; source: string };
  rises: number;
};

type Answer = { ok: boolean; currency?: string; error?: string; details?: { path: string; message: string }[] } | null | undefined;

const SOURCE: Record<string, string> = { learned: "learned", override: "overridden here", default: "default (too few rises to learn from)" };

const rule = (factor: number, minAmount: string) => `over ${+factor.toFixed(2)}× and by more than ${amount(minAmount)}`;

/**
 * Economy → Settings: each currency's anomaly threshold as learned from its own rises, the one in
 * use, and the override form (factor, minimum, off). Owners and admins only, as the whole page.
 */
export function ThresholdSettings({ currencies, minRises, busy, answer }: { currencies: View[]; minRises: number; busy: boolean; answer: Answer }) {
  return (
    <section className="panel" id="thresholds" aria-labelledby="thresholds-title" data-testid="thresholds">
      <h3 id="thresholds-title" style={{ marginTop: 0 }}>Anomaly thresholds</h3>
      <p className="muted small">
        Each currency is watched on its own. A rise between two observations of a player is an anomaly when it is larger than the
        currency&rsquo;s minimum and multiplies the balance by more than its factor (a rise from zero or debt needs only the minimum).
        Both are learned every hour from the currency&rsquo;s rises of the last 30 days; an override here replaces either, or turns the
        currency&rsquo;s detection and its alerts off. Leave a field empty to keep the learned figure.
      </p>
      {currencies.map((c) => {
        const errors = answer && !answer.ok && answer.currency === c.key ? (answer.details ?? []) : [];
        const errorOf = (path: string) => errors.find((d) => d.path === path)?.message;
        return (
          <div key={c.key} className="threshold" data-testid={`threshold-${c.key}`}>
            <h4>
              {c.name} <span className="muted small">{c.key}</span>
            </h4>
            <p className="small" data-testid={`threshold-learned-${c.key}`}>
              Learned:{" "}
              {c.learned
                ? `${rule(c.learned.factor, c.learned.min_amount)}, from ${plural(c.learned.rises, "rise")} of the last ${c.learned.window_days} days`
                : `not yet: ${plural(c.rises, "rise")} in the last 30 days, ${minRises} needed`}
            </p>
            <p className="small" data-testid={`threshold-effective-${c.key}`}>
              In use: <strong>{c.effective.off ? "off (no anomalies, no alerts)" : rule(c.effective.factor, c.effective.min_amount)}</strong>{" "}
              <span className="muted">({SOURCE[c.effective.source] ?? c.effective.source})</span>
            </p>
            <Form method="post" className="row threshold-form" key={JSON.stringify(c.override)}>
              <input type="hidden" name="currency" value={c.key} />
              <label className="small">
                Factor
                <input name="factor" inputMode="decimal" size={6} placeholder={String(c.learned?.factor ?? c.effective.factor)} defaultValue={c.override?.factor ?? ""} aria-invalid={errorOf("factor") ? true : undefined} />
              </label>
              <label className="small">
                Minimum rise
                <input name="min_amount" inputMode="decimal" size={10} placeholder={c.learned?.min_amount ?? c.effective.min_amount} defaultValue={c.override?.min_amount ?? ""} aria-invalid={errorOf("min_amount") ? true : undefined} />
              </label>
              <label className="small">
                <input type="checkbox" name="off" defaultChecked={c.override?.off ?? false} /> Off
              </label>
              <button type="submit" name="intent" value="threshold-save" disabled={busy}>Save</button>
              {c.override ? (
                <button type="submit" name="intent" value="threshold-reset" disabled={busy}>Back to learned</button>
              ) : null}
            </Form>
            {errors.length > 0 ? (
              <ul className="threshold-errors small" role="alert">
                {errors.map((d, i) => <li key={i}>{d.path === "min_amount" ? "Minimum rise" : d.path === "factor" ? "Factor" : d.path} {d.message}</li>)}
              </ul>
            ) : null}
          </div>
        );
      })}
    </section>
  );
}
