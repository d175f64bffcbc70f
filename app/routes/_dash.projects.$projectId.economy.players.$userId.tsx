import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData } from "@remix-run/react";
import { requirePageUser } from "~/accounts/sessions.server";
import { amount, AmountFigures, LineChart } from "~/economy/charts";
import { loadMap } from "~/economy/map.server";
import { SkippedValues } from "~/economy/map-preview";
import { economyPage, economyPlayer } from "~/economy/views.server";
import { readingAsMember } from "~/services.server";

export const meta: MetaFunction = () => [{ title: "Player · Economy · Roblox Monitor" }];

export const loader = async ({ request, params, context }: LoaderFunctionArgs) => {
  const user = await requirePageUser(context.services, request);
  return economyPage(() =>
    readingAsMember(context.services, request, user, params.projectId, async (sql) => {
      const view = await economyPlayer(sql, user, params.projectId, params.userId);
      // names and order of the currencies as the map has them now (balances keep the keys they were read with)
      const { map } = await loadMap(sql, view.projectId);
      return { ...view, currencies: map.currencies.map((c) => ({ key: c.key, name: c.name })) };
    }),
  );
};

const utc = (d: string | Date | null) => (d ? new Date(d).toISOString().slice(0, 16).replace("T", " ") : "—");

type Balances = Record<string, string>;
type HistoryRow = { id: string; total: string; balances: Balances; observed_at: string | Date; source: string };
type Skipped = { currency: string; path: string; reason: string };

function BalanceCard({ value, label, testId, exactTestId }: { value: string | undefined; label: string; testId: string; exactTestId?: string }) {
  return (
    <div className="card" data-testid={testId}>
      <AmountFigures value={value} label={label} exactTestId={exactTestId} />
    </div>
  );
}

export default function EconomyPlayer() {
  const { projectId, player, history, hasErrors, currencies } = useLoaderData<typeof loader>();
  const p = player as unknown as Record<string, any>;
  const h = history as unknown as HistoryRow[];
  const balances: Balances = p.balances;
  const skipped: Skipped[] = p.skipped_values;
  const skippedCount: number = p.skipped_count;
  const nameOf = (key: string) => currencies.find((c) => c.key === key)?.name ?? key;
  // the map's order first, then keys the map no longer has (shown by their key)
  const order = (keys: Iterable<string>) => {
    const set = new Set(keys);
    return [...currencies.map((c) => c.key).filter((k) => set.has(k)), ...[...set].filter((k) => !currencies.some((c) => c.key === k)).sort()];
  };
  const cardKeys = order(Object.keys(balances));
  // a history within one day is labelled by the time of day, else by the date
  const oneDay = h.length > 0 && utc(h[0].observed_at).slice(0, 10) === utc(h[h.length - 1].observed_at).slice(0, 10);
  const columnKeys = order(new Set([...h.flatMap((e) => Object.keys(e.balances)), ...cardKeys]));
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
      <div className="cards balance-cards" data-testid="player-balances">
        {cardKeys.map((k) => (
          <BalanceCard key={k} value={balances[k]} label={nameOf(k)} testId={`balance-${k}`} />
        ))}
        <BalanceCard value={p.total} label="Total" testId="player-total-card" exactTestId="player-total" />
      </div>
      <p className="muted small">
        Observed {utc(p.observed_at)} UTC by {p.source} · last logout {utc(p.last_logout)}{p.last_logout ? " UTC" : " (never pushed)"}
      </p>
      {skippedCount > 0 ? (
        <section className="panel">
          <SkippedValues list={skipped} count={skippedCount} nameOf={nameOf} title="Values skipped in the latest observation" />
          <p className="muted small">These values are not numbers (or are NaN or infinite), so they add nothing to the balances above.</p>
        </section>
      ) : null}
      <section className="panel">
        <h3 style={{ marginTop: 0 }}>Total wealth over time</h3>
        <LineChart label="Balance history" points={h.map((e) => ({ label: oneDay ? utc(e.observed_at).slice(11) : utc(e.observed_at).slice(5, 10), value: e.total }))} />
      </section>
      <section className="panel">
        <h3 style={{ marginTop: 0 }}>Changes</h3>
        <p className="muted small">Each row keeps the balances as the currency map of its time read them; “—”: that map had no such currency.</p>
        <table data-testid="history">
          <thead>
            <tr>
              <th>When (UTC)</th>
              <th>Source</th>
              {columnKeys.map((k) => <th key={k} className="num">{nameOf(k)}</th>)}
              <th className="num">Total</th>
            </tr>
          </thead>
          <tbody>
            {[...h].reverse().map((e) => (
              <tr key={e.id}>
                <td className="nowrap">{utc(e.observed_at)}</td>
                <td>{e.source}</td>
                {columnKeys.map((k) => <td key={k} className="num">{amount(e.balances[k])}</td>)}
                <td className="num">{amount(e.total)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </>
  );
}
