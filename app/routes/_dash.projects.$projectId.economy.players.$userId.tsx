import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData, useSearchParams } from "@remix-run/react";
import { requirePageUser } from "~/accounts/sessions.server";
import { amount, AmountFigures, CurrencyLinesChart, factor, seriesStyle, type LineMark } from "~/economy/charts";
import { playerMarksView } from "~/economy/marks.server";
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
      const firstShown = (view.history as unknown as { id: string }[])[0]?.id;
      const marks = await playerMarksView(sql, context.services.config, view.projectId, String(view.player.user_id), firstShown, map);
      return { ...view, currencies: map.currencies.map((c) => ({ key: c.key, name: c.name })), marks };
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

type Mark = {
  kind: "anomaly" | "unexplained";
  currency: string;
  history_id: string;
  from_amount: string;
  to_amount: string;
  observed_at: string;
  factor: number | null;
  unexplained: string | null;
  threshold: { factor: number; min_amount: string; source: string } | null;
};

const markText = (m: Mark) =>
  m.kind === "anomaly"
    ? `Anomaly: ${m.factor === null ? "from zero or less" : factor(m.factor)}, over ${m.threshold ? `${factor(m.threshold.factor)} and +${amount(m.threshold.min_amount)} (${m.threshold.source} threshold)` : "its threshold"}`
    : `Unexplained gain: +${amount(m.unexplained)} no recorded flow explains`;

/** One line per currency with the anomalies and unexplained gains marked on it, and the marks listed below. */
function BalanceLines({ history, columnKeys, nameOf, marks, oneDay, ownScale }: { history: HistoryRow[]; columnKeys: string[]; nameOf: (k: string) => string; marks: Mark[]; oneDay: boolean; ownScale: boolean }) {
  const at = new Map(history.map((e, i) => [e.id, i]));
  const points = history.map((e) => ({ label: oneDay ? utc(e.observed_at).slice(11) : utc(e.observed_at).slice(5, 10), values: e.balances }));
  const lineMarks: LineMark[] = marks
    .filter((m) => at.has(m.history_id))
    .map((m) => ({ key: m.currency, at: at.get(m.history_id)!, kind: m.kind, title: `${nameOf(m.currency)} ${amount(m.from_amount)} → ${amount(m.to_amount)}, ${utc(m.observed_at)} UTC. ${markText(m)}` }));
  return (
    <>
      {ownScale ? (
        // one chart per currency, each on its own axis: a small currency's line is not flattened by a large one's
        columnKeys.map((k, i) => (
          <CurrencyLinesChart
            key={k}
            height={150}
            label={`Balance history, ${nameOf(k)}`}
            series={[{ key: k, name: nameOf(k) }]}
            points={points}
            marks={lineMarks.filter((m) => m.key === k)}
            styleOf={() => seriesStyle(i)}
          />
        ))
      ) : (
        <CurrencyLinesChart label="Balance history per currency" series={columnKeys.map((k) => ({ key: k, name: nameOf(k) }))} points={points} marks={lineMarks} />
      )}
      {marks.length ? (
        <table className="stack-narrow marks-table" data-testid="player-marks">
          <thead>
            <tr><th>Currency</th><th className="num">From → to</th><th>When (UTC)</th><th>Why marked</th></tr>
          </thead>
          <tbody>
            {[...marks].reverse().map((m, i) => (
              <tr key={i} data-kind={m.kind}>
                <td>{nameOf(m.currency)}</td>
                <td className="num" data-label="From → to">{amount(m.from_amount)} → {amount(m.to_amount)}</td>
                <td className="nowrap" data-label="When">{utc(m.observed_at)}</td>
                <td>{m.kind === "anomaly" ? "▲ " : "◆ "}{markText(m)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p className="muted small" data-testid="player-no-marks">No anomaly and no unexplained gain in these observations.</p>
      )}
    </>
  );
}

export default function EconomyPlayer() {
  const { projectId, player, history, hasErrors, currencies, marks } = useLoaderData<typeof loader>();
  const ownScale = useSearchParams()[0].get("scale") === "own";
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
        <div className="row spread">
          <h3 style={{ margin: 0 }}>Balances over time</h3>
          {columnKeys.length > 1 ? (
            <nav className="small scale-switch" aria-label="Scale">
              {ownScale ? <Link to="?" data-testid="scale-shared">One chart, one scale</Link> : <Link to="?scale=own" data-testid="scale-own">Each currency on its own scale</Link>}
            </nav>
          ) : null}
        </div>
        <BalanceLines history={h} columnKeys={columnKeys} nameOf={nameOf} marks={marks as unknown as Mark[]} oneDay={oneDay} ownScale={ownScale && columnKeys.length > 1} />
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
