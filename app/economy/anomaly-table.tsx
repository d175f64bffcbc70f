import { Link } from "@remix-run/react";
import { plural } from "~/components/format";
import { PlayerLink, type NamedPlayer } from "./player-link";
import { amount, factor, shortAmount } from "./charts";

type Row = NamedPlayer & {
  currency: string;
  from_amount: string;
  to_amount: string;
  factor: number | null;
  to_observed_at: string | Date;
  source: string;
  threshold: { factor: number; min_amount: string; source: string };
};

type Thresholds = Record<string, { factor: number; min_amount: string; off: boolean; source: string; rises: number }>;

const SOURCES: Record<string, string> = { learned: "learned", override: "set in settings", default: "default", request: "asked for" };

/** "over 5× and +290" */
const rule = (t: { factor: number; min_amount: string }) => `over ${+t.factor.toFixed(2)}× and +${shortAmount(t.min_amount)}`;

/**
 * The overview's anomalies: every currency's, each found under its own threshold and named, newest
 * first; under the table, each currency's threshold and where it comes from.
 */
export function AnomalyTable({
  base,
  anomalies,
  currencies,
  canManage,
}: {
  base: string;
  anomalies: { data: unknown[]; total: number; thresholds: Thresholds };
  currencies: { key: string; name: string }[];
  canManage: boolean;
}) {
  const name = (key: string) => currencies.find((c) => c.key === key)?.name ?? key;
  const rows = anomalies.data as Row[];
  const thresholds = Object.entries(anomalies.thresholds);
  return (
    <section className="panel" data-testid="anomalies-panel">
      <h3 style={{ marginTop: 0 }}>
        Anomalies <span className="muted small">(each currency on its own, last 30 days{anomalies.total > rows.length ? `: latest ${rows.length} of ${anomalies.total.toLocaleString("en-US")}` : ""})</span>
      </h3>
      {rows.length === 0 ? (
        <p className="muted" data-testid="anomalies-none">None found in any currency.</p>
      ) : (
        <table data-testid="anomalies">
          <thead>
            <tr><th>Player</th><th>Currency</th><th className="num">From</th><th className="num">To</th><th className="num">Factor</th><th>When (UTC)</th><th>Source</th></tr>
          </thead>
          <tbody>
            {rows.map((a, i) => (
              <tr key={i}>
                <td><PlayerLink base={base} player={a} /></td>
                <td title={`Threshold: ${rule(a.threshold)} (${SOURCES[a.threshold.source] ?? a.threshold.source})`}>{name(a.currency)}</td>
                <td className="num">{amount(a.from_amount)}</td>
                <td className="num">{amount(a.to_amount)}</td>
                <td className="num" title={a.factor === null ? undefined : `${a.factor}×`}>{a.factor === null ? "from ≤ 0" : factor(Number(a.factor))}</td>
                <td>{new Date(a.to_observed_at).toISOString().slice(0, 16).replace("T", " ")}</td>
                <td>{a.source}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p className="muted small" data-testid="anomaly-thresholds">
        A rise is an anomaly when it is larger than the currency&rsquo;s minimum and multiplies the balance by more than its factor:{" "}
        {thresholds.map(([key, t], i) => (
          <span key={key}>
            {i > 0 ? " · " : ""}
            <strong>{name(key)}</strong> {t.off ? "off" : rule(t)} ({SOURCES[t.source] ?? t.source}
            {t.source === "learned" ? ` from ${plural(t.rises, "rise")}` : ""})
          </span>
        ))}
        {canManage ? (
          <>
            {" "}· <Link to={`${base}/settings#thresholds`}>Change thresholds</Link>
          </>
        ) : null}
      </p>
    </section>
  );
}
