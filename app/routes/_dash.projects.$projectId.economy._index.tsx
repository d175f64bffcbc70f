import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, useLoaderData } from "@remix-run/react";
import { requirePageUser } from "~/accounts/sessions.server";
import { plural } from "~/components/format";
import { amount, BarsChart, factor, LineChart, shortAmount } from "~/economy/charts";

/** A card keeps its big figure short (4.37B) and shows the exact amount below it, wrapping. */
function AmountCard({ value, label, testId }: { value: string | null; label: string; testId?: string }) {
  const exact = amount(value);
  const short = shortAmount(value);
  return (
    <div className="card">
      <div className="value" title={exact}>{short}</div>
      {short !== exact ? <div className="exact" data-testid={testId}>{exact}</div> : <div className="exact" data-testid={testId} hidden>{exact}</div>}
      <div className="label">{label}</div>
    </div>
  );
}
import { economyOverview, economyPage } from "~/economy/views.server";
import { queryOf } from "~/errors/params.server";

export const meta: MetaFunction = () => [{ title: "Economy · Roblox Monitor" }];

export const loader = async ({ request, params, context }: LoaderFunctionArgs) => {
  const user = await requirePageUser(context.services, request);
  return economyPage(() => economyOverview(context.services.sql, context.services.config, user, params.projectId, queryOf(request)));
};

type PlayerRow = { user_id: string; username: string | null; display_name: string | null; display_names: string[]; cash: string; bank: string; dark_coin: string; total: string };

const who = (p: { username: string | null; display_name: string | null; display_names: string[] }) =>
  p.display_name ?? p.username ?? p.display_names[0] ?? "—";

function PlayerTable({ rows, base, testId }: { rows: PlayerRow[]; base: string; testId: string }) {
  return (
    <table data-testid={testId}>
      <thead>
        <tr><th>Player</th><th>User id</th><th className="num">Cash</th><th className="num">Bank</th><th className="num">Dark coin</th><th className="num">Total</th></tr>
      </thead>
      <tbody>
        {rows.map((p) => (
          <tr key={p.user_id}>
            <td><Link to={`${base}/players/${p.user_id}`}>{who(p)}</Link></td>
            <td>{p.user_id}</td>
            <td className="num">{amount(p.cash)}</td>
            <td className="num">{amount(p.bank)}</td>
            <td className="num">{amount(p.dark_coin)}</td>
            <td className="num">{amount(p.total)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export default function EconomyOverview() {
  const d = useLoaderData<typeof loader>();
  const base = `/projects/${d.projectId}/economy`;
  const s = d.summary;
  return (
    <>
      <h2>Economy</h2>
      <Form method="get" className="row" role="search">
        <input type="search" name="search" defaultValue={d.search} placeholder="User id, username or character name" aria-label="Search players" />
        <button type="submit">Search</button>
      </Form>
      {d.players ? (
        <section className="panel">
          <h3 style={{ marginTop: 0 }}>{plural(d.players.total, "player")} matching “{d.search}”</h3>
          <PlayerTable rows={d.players.data as unknown as PlayerRow[]} base={base} testId="search-results" />
        </section>
      ) : null}
      <div className="cards" style={{ marginTop: 16 }}>
        <div className="card"><div className="value" data-testid="player-count">{s.players.toLocaleString("en-US")}</div><div className="label">Players</div></div>
        <AmountCard value={s.sums.total} label="Money supply" testId="money-supply" />
        <AmountCard value={s.sums.cash} label="Cash" />
        <AmountCard value={s.sums.bank} label="Bank" />
        <AmountCard value={s.sums.dark_coin} label="Dark coin" />
        <AmountCard value={s.median_total} label="Median wealth" />
        <AmountCard value={s.p99_total} label="99th percentile" />
      </div>
      <section className="panel">
        <h3 style={{ marginTop: 0 }}>Money supply, last 30 days <span className="muted small">(end of each UTC day)</span></h3>
        <LineChart label="Money supply per day" points={s.money_supply.map((p) => ({ label: p.day.slice(5), value: p.supply }))} />
      </section>
      <section className="panel">
        <h3 style={{ marginTop: 0 }}>Wealth distribution <span className="muted small">(players per order of magnitude of total)</span></h3>
        <BarsChart
          label="Wealth histogram"
          bars={s.wealth_histogram.map((b) => ({
            label: b.min === null ? "< 0" : b.max === "1" ? "0" : `≥${shortAmount(b.min)}`,
            title: b.min === null ? "below 0" : b.max === "1" ? "0" : `${amount(b.min)} or more`,
            count: b.count,
          }))}
        />
      </section>
      <section className="panel">
        <h3 style={{ marginTop: 0 }}>Top players</h3>
        {s.top_players.length ? <PlayerTable rows={s.top_players as unknown as PlayerRow[]} base={base} testId="top-players" /> : <p className="muted">No snapshots yet: push balances to /api/economy/ingest from PlayerRemoving, or run a scan.</p>}
      </section>
      <section className="panel">
        <h3 style={{ marginTop: 0 }}>Anomalies <span className="muted small">(total rose over {d.anomalyFactor}× and by more than {amount(String(d.anomalyMinAmount))} between two observations, last 30 days)</span></h3>
        {d.anomalies.data.length === 0 ? (
          <p className="muted">None found.</p>
        ) : (
          <table data-testid="anomalies">
            <thead><tr><th>Player</th><th className="num">From</th><th className="num">To</th><th className="num">Factor</th><th>When (UTC)</th><th>Source</th></tr></thead>
            <tbody>
              {(d.anomalies.data as unknown as (PlayerRow & { from_total: string; to_total: string; factor: number | null; to_observed_at: string | Date; source: string })[]).map((a, i) => (
                <tr key={i}>
                  <td><Link to={`${base}/players/${a.user_id}`}>{who(a)}</Link> <span className="muted small">{a.user_id}</span></td>
                  <td className="num">{amount(a.from_total)}</td>
                  <td className="num">{amount(a.to_total)}</td>
                  <td className="num" title={a.factor === null ? undefined : `${a.factor}×`}>{a.factor === null ? "from ≤ 0" : factor(Number(a.factor))}</td>
                  <td>{new Date(a.to_observed_at).toISOString().slice(0, 16).replace("T", " ")}</td>
                  <td>{a.source}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section className="panel">
        <h3 style={{ marginTop: 0 }}>Open Cloud scan</h3>
        <p data-testid="scan-state">
          State: <strong>{d.sync.state}</strong> · scanned {d.sync.scanned} · stored {d.sync.stored} · skipped {d.sync.skipped} · failed {d.sync.failed}
          {d.sync.finished_at ? ` · finished ${new Date(d.sync.finished_at).toISOString().slice(0, 16).replace("T", " ")} UTC` : ""}
        </p>
        {d.sync.error ? <p className="error">{d.sync.error}</p> : null}
        {d.canManage ? (
          <p className="muted small">
            <Link to={`${base}/settings`}>Open Cloud key and scan settings</Link>
          </p>
        ) : null}
      </section>
    </>
  );
}
