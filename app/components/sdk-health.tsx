import type { SdkHealth } from "../../db/client-reports.js";
import { num } from "./format";
import { Ago } from "./time";

/** What each reason of the Luau SDK means (docs/api.md, "Client reports"); others show their name. */
const REASONS: Record<string, string> = {
  sample_rate: "Sampled out (sampleRate)",
  ignored: "Ignored (ignoreErrors)",
  before_send: "Dropped by beforeSend",
  queue_overflow: "Queue full",
  too_large: "Too large to send",
  refused: "Refused by the service",
  retry_expired: "Retries gave up (maxRetryTime)",
  rate_limited: "Client relay rate limit",
  client_throttled: "Client's own throttle",
  client_invalid: "Malformed client payload",
  internal_sdk_error: "SDK internal error",
};
const CATEGORIES: Record<string, string> = { error: "Errors", economy: "Economy", economy_flow: "Flows" };
const KNOWN_ORDER = Object.keys(CATEGORIES);

/**
 * The overview's SDK health panel: what the project's SDKs dropped before it reached the service,
 * a total per reason and category over the panel's days, and the SDK's last warning.
 */
export function SdkHealthPanel({ health, days, now }: { health: SdkHealth; days: number; now: Date | string }) {
  const categories = [...new Set(health.totals.map((t) => t.category))].sort(
    (a, b) => (KNOWN_ORDER.indexOf(a) + 1 || 99) - (KNOWN_ORDER.indexOf(b) + 1 || 99) || a.localeCompare(b),
  );
  const reasons = [...new Set(health.totals.map((t) => t.reason))];
  const quantity = (reason: string, category: string) => health.totals.find((t) => t.reason === reason && t.category === category)?.quantity ?? 0;
  const lost = health.totals.reduce((n, t) => n + t.quantity, 0);
  return (
    <section className="panel" aria-labelledby="sdk-health-title" data-testid="sdk-health">
      <h2 id="sdk-health-title" style={{ marginTop: 0 }}>
        SDK health <span className="muted small">(last {days} days, UTC)</span>
      </h2>
      <p className="muted small" style={{ marginTop: 0 }}>
        Errors, warnings, messages, economy snapshots and flows your game raised that the SDK dropped before they reached this
        service, by reason, as the SDK reports them with its next request. What was still queued when a server shut
        down cannot be reported: the SDK's <code>status()</code> counts it.
      </p>
      {lost === 0 ? (
        <p data-testid="sdk-health-none">
          <strong>Nothing lost.</strong> <span className="muted">The SDK reported no dropped events in the last {days} days.</span>
        </p>
      ) : (
        <div className="table-wrap">
          <table className="compact" data-testid="sdk-health-table">
            <thead>
              <tr>
                <th>Reason</th>
                {categories.map((c) => (
                  <th key={c} className="num">{CATEGORIES[c] ?? c}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {reasons.map((r) => (
                <tr key={r}>
                  <td>
                    {REASONS[r] ? (
                      <>
                        {REASONS[r]} <code className="muted small hide-narrow">{r}</code>
                      </>
                    ) : (
                      <code>{r}</code>
                    )}
                  </td>
                  {categories.map((c) => (
                    <td key={c} className="num">{quantity(r, c) ? num(quantity(r, c)) : <span className="muted">0</span>}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <p className="small" style={{ marginBottom: 0 }} data-testid="sdk-health-warning">
        {health.last_warning ? (
          <>
            <span className="muted">Last SDK warning, <Ago d={health.last_warning.at} now={now} />:</span>{" "}
            <span className="msg">{health.last_warning.message}</span>
          </>
        ) : (
          <span className="muted">No SDK warning reported.</span>
        )}
      </p>
    </section>
  );
}
