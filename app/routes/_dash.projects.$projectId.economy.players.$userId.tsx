import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { requirePageUser } from "~/accounts/sessions.server";
import { amount, LineChart } from "~/economy/charts";
import { economyPage, economyPlayer } from "~/economy/views.server";

export const meta: MetaFunction = () => [{ title: "Player · Economy · Roblox Monitor" }];

export const loader = async ({ request, params, context }: LoaderFunctionArgs) => {
  const user = await requirePageUser(context.services, request);
  return economyPage(() => economyPlayer(context.services.sql, user, params.projectId, params.userId));
};

const utc = (d: string | Date | null) => (d ? new Date(d).toISOString().slice(0, 16).replace("T", " ") : "—");

export default function EconomyPlayer() {
  const { projectId, player, history, hasErrors } = useLoaderData<typeof loader>();
  const p = player as unknown as Record<string, any>;
  const h = history as unknown as { id: string; cash: string; bank: string; dark_coin: string; total: string; observed_at: string | Date; source: string }[];
  return (
    <>
      <p><Link to={`/projects/${projectId}/economy`}>← Economy</Link></p>
      <h2 data-testid="player-name">{p.display_name ?? p.username ?? p.display_names[0] ?? `Player ${p.user_id}`}</h2>
      <p className="muted">
        User id {p.user_id}
        {p.username ? ` · @${p.username}` : ""}
        {p.display_names.length ? ` · characters: ${p.display_names.join(", ")}` : ""}
        {p.data_code !== null ? ` · data code ${p.data_code}` : ""}
        {hasErrors ? <> · <Link to={`/projects/${projectId}/players/${p.user_id}`}>Errors of this player</Link></> : " · no errors recorded"}
      </p>
      <div className="cards">
        <div className="card"><div className="value amount">{amount(p.cash)}</div><div className="label">Cash</div></div>
        <div className="card"><div className="value amount">{amount(p.bank)}</div><div className="label">Bank</div></div>
        <div className="card"><div className="value amount">{amount(p.dark_coin)}</div><div className="label">Dark coin</div></div>
        <div className="card"><div className="value amount" data-testid="player-total">{amount(p.total)}</div><div className="label">Total</div></div>
      </div>
      <p className="muted small">
        Observed {utc(p.observed_at)} UTC by {p.source} · last logout {utc(p.last_logout)}{p.last_logout ? " UTC" : " (never pushed)"}
      </p>
      <section className="panel">
        <h3 style={{ marginTop: 0 }}>Total wealth over time</h3>
        <LineChart label="Balance history" points={h.map((e) => ({ label: utc(e.observed_at).slice(5, 10), value: e.total }))} />
      </section>
      <section className="panel">
        <h3 style={{ marginTop: 0 }}>Changes</h3>
        <table data-testid="history">
          <thead><tr><th>When (UTC)</th><th>Source</th><th className="num">Cash</th><th className="num">Bank</th><th className="num">Dark coin</th><th className="num">Total</th></tr></thead>
          <tbody>
            {[...h].reverse().map((e) => (
              <tr key={e.id}>
                <td>{utc(e.observed_at)}</td>
                <td>{e.source}</td>
                <td className="num">{amount(e.cash)}</td>
                <td className="num">{amount(e.bank)}</td>
                <td className="num">{amount(e.dark_coin)}</td>
                <td className="num">{amount(e.total)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </>
  );
}
