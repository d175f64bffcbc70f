import { plural } from "~/components/format";
import { PlayerLink, type NamedPlayer } from "./player-link";
import { amount, shortAmount } from "./charts";

type SourceRow = { source: string; gained: string; spent: string; flows: number };
type CurrencyFlows = { currency: string; name: string; sources: SourceRow[]; totals: { gained: string; spent: string; flows: number } };
type Unexplained = NamedPlayer & {
  id: string;
  currency: string;
  from_amount: string;
  to_amount: string;
  explained: string;
  unexplained: string;
  to_observed_at: string | Date;
};
export type FlowsPanelProps = {
  enabled: boolean;
  currency: string;
  days: number;
  currencies: CurrencyFlows[];
  unexplained: { data: unknown[]; total: number };
};

const gained = (v: string) => (Number(v) > 0 ? `+${shortAmount(v)}` : "—");
const spent = (v: string) => (Number(v) > 0 ? `−${shortAmount(v)}` : "—");
const when = (t: string | Date) => new Date(t).toISOString().slice(0, 16).replace("T", " ");

function SourceTable({ c, showName, days }: { c: CurrencyFlows; showName: boolean; days: number }) {
  return (
    <>
      {showName ? <h4 style={{ margin: "12px 0 4px" }}>{c.name}</h4> : null}
      {c.sources.length === 0 ? (
        <p className="muted small">No flows of {c.name} in the last {days} days.</p>
      ) : (
        <table data-testid={`flow-sources-${c.currency}`}>
          <thead>
            <tr><th>Source</th><th className="num">Gained</th><th className="num">Spent</th><th className="num">Flows</th></tr>
          </thead>
          <tbody>
            {c.sources.map((s) => (
              <tr key={s.source}>
                <td>{s.source}</td>
                <td className="num flow-gained-text" title={amount(s.gained)}>{gained(s.gained)}</td>
                <td className="num flow-lost-text" title={amount(s.spent)}>{spent(s.spent)}</td>
                <td className="num">{s.flows.toLocaleString("en-US")}</td>
              </tr>
            ))}
            <tr>
              <td><strong>All sources</strong></td>
              <td className="num flow-gained-text" title={amount(c.totals.gained)}><strong>{gained(c.totals.gained)}</strong></td>
              <td className="num flow-lost-text" title={amount(c.totals.spent)}><strong>{spent(c.totals.spent)}</strong></td>
              <td className="num"><strong>{c.totals.flows.toLocaleString("en-US")}</strong></td>
            </tr>
          </tbody>
        </table>
      )}
    </>
  );
}

/**
 * The overview's sources and sinks as the game reported them (Monitor.economy.flow), by source, and
 * the latest gains those flows did not explain. Without any flow it says how to send them.
 */
export function FlowsPanel({ data, base }: { data: FlowsPanelProps; base: string }) {
  const rows = data.unexplained.data as Unexplained[];
  const all = data.currency === "total";
  return (
    <section className="panel" data-testid="flows-panel">
      <h3 style={{ marginTop: 0 }}>
        Sources and sinks <span className="muted small">(as the game reported them, by source, last {data.days} days)</span>
      </h3>
      {!data.enabled ? (
        <p className="muted" data-testid="flows-howto">
          The game sends no flows yet, so gains are judged on snapshots only. Report each change with{" "}
          <code>Monitor.economy.flow(player, currency, amount, source, item?)</code> to have every gain explained.
        </p>
      ) : (
        <>
          {data.currencies.length === 0 ? <p className="muted small">No flows in the last {data.days} days.</p> : null}
          {data.currencies.map((c) => <SourceTable key={c.currency} c={c} showName={all} days={data.days} />)}
          <h4 style={{ margin: "16px 0 4px" }}>
            Unexplained gains <span className="muted small">({plural(data.unexplained.total, "gain")} the flows do not account for)</span>
          </h4>
          {rows.length === 0 ? (
            <p className="muted small" data-testid="unexplained-none">None: every gain matched its flows.</p>
          ) : (
            <table data-testid="unexplained">
              <thead>
                <tr>
                  <th>Player</th><th className="num">Unexplained</th>{all ? <th>Currency</th> : null}<th className="num">From</th>
                  <th className="num">To</th><th className="num">Explained</th><th>When (UTC)</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((u) => (
                  <tr key={u.id}>
                    <td><PlayerLink base={base} player={u} /></td>
                    <td className="num flow-lost-text"><strong>+{amount(u.unexplained)}</strong></td>
                    {all ? <td>{u.currency}</td> : null}
                    <td className="num">{amount(u.from_amount)}</td>
                    <td className="num">{amount(u.to_amount)}</td>
                    <td className="num">{amount(u.explained)}</td>
                    <td>{when(u.to_observed_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </section>
  );
}
