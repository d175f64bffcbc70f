import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, useLoaderData } from "@remix-run/react";
import { requirePageUser } from "~/accounts/sessions.server";
import { EconomyEmpty } from "~/economy/economy-empty";
import { plural } from "~/components/format";
import { AnomalyTable } from "~/economy/anomaly-table";
import { amount, AmountFigures, BarsChart, evenRows, FlowChart, share, shortAmount } from "~/economy/charts";
import { Brought, SupplyPanel } from "~/economy/supply-panel";

type CardSize = { wide: number; narrow: number };
const cardStyle = (size: CardSize) => ({ "--per-row": size.wide, "--per-row-narrow": size.narrow }) as React.CSSProperties;

/** A card keeps its big figure short (4.37B) and shows the exact amount below it, wrapping. */
function AmountCard({ value, label, testId, size, cardTestId, to, current }: { value: string | null; label: string; testId?: string; size: CardSize; cardTestId?: string; to?: string; current?: boolean }) {
  const body = <AmountFigures value={value} label={label} exactTestId={testId} />;
  return to ? (
    <Link to={to} className={`card card-link${current ? " current" : ""}`} style={cardStyle(size)} data-testid={cardTestId} aria-current={current ? "true" : undefined}>
      {body}
    </Link>
  ) : (
    <div className="card" style={cardStyle(size)} data-testid={cardTestId}>{body}</div>
  );
}

function StatCard({ value, label, detail, size, testId }: { value: string; label: string; detail?: string; size: CardSize; testId?: string }) {
  return (
    <div className="card" style={cardStyle(size)} data-testid={testId}>
      <div className="value">{value}</div>
      {detail ? <div className="exact">{detail}</div> : null}
      <div className="label">{label}</div>
    </div>
  );
}
import { economyOverview, economyPage } from "~/economy/views.server";
import { FlowsPanel } from "~/economy/flows-panel";
import { queryOf } from "~/errors/params.server";
import { readingAsMember } from "~/services.server";

export const meta: MetaFunction = () => [{ title: "Economy · Roblox Monitor" }];

export const loader = async ({ request, params, context }: LoaderFunctionArgs) => {
  const user = await requirePageUser(context.services, request);
  return economyPage(() =>
    readingAsMember(context.services, request, user, params.projectId, (sql) => economyOverview(sql, context.services.config, user, params.projectId, queryOf(request))),
  );
};

type PlayerRow = {
  user_id: string;
  username: string | null;
  display_name: string | null;
  display_names: string[];
  total: string;
  balances: Record<string, string> | null;
};
type Currency = { key: string; name: string };

const who = (p: { username: string | null; display_name: string | null; display_names: string[] }) =>
  p.display_name ?? p.username ?? p.display_names[0] ?? "—";

/** At most this many currency columns in a player table; the selected currency is always one of them. */
const MAX_COLUMNS = 5;

function tableCurrencies(currencies: Currency[], selected: string): { shown: Currency[]; hidden: number } {
  if (currencies.length <= MAX_COLUMNS) return { shown: currencies, hidden: 0 };
  const pick = currencies.find((c) => c.key === selected);
  const first = currencies.filter((c) => c.key !== selected).slice(0, pick ? MAX_COLUMNS - 1 : MAX_COLUMNS);
  const shown = pick ? currencies.filter((c) => c === pick || first.includes(c)) : first;
  return { shown, hidden: currencies.length - shown.length };
}

function PlayerTable({ rows, base, testId, currencies, selected }: { rows: PlayerRow[]; base: string; testId: string; currencies: Currency[]; selected: string }) {
  const { shown, hidden } = tableCurrencies(currencies, selected);
  return (
    <>
      <table data-testid={testId}>
        <thead>
          <tr>
            <th>Player</th>
            <th>User id</th>
            {shown.map((c) => <th key={c.key} className="num">{c.name}</th>)}
            <th className="num">Total</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((p) => (
            <tr key={p.user_id}>
              <td><Link to={`${base}/players/${p.user_id}`}>{who(p)}</Link></td>
              <td>{p.user_id}</td>
              {shown.map((c) => {
                const v = p.balances?.[c.key];
                return v === undefined ? (
                  <td key={c.key} className="num muted" title="Not read under the current map yet (from the player's next push or scan)">—</td>
                ) : (
                  <td key={c.key} className="num">{amount(v)}</td>
                );
              })}
              <td className="num">{amount(p.total)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {hidden > 0 ? <p className="muted small">{plural(hidden, "more currency", "more currencies")} on each player's page.</p> : null}
    </>
  );
}

export default function EconomyOverview() {
  const d = useLoaderData<typeof loader>();
  const base = `/projects/${d.projectId}/economy`;
  const s = d.summary;
  const currencies = s.currencies;
  const selected = s.currency;
  const selectedName = selected === "total" ? "All currencies" : (currencies.find((c) => c.key === selected)?.name ?? selected);
  const of = selected === "total" ? "total" : selectedName;
  const link = (key: string) => (key === "total" ? base : `${base}?currency=${encodeURIComponent(key)}`);
  const sizes = evenRows(2 + currencies.length + 5);
  let card = 0;
  const next = () => sizes[card++];
  const supply = s.money_supply;
  const last = supply.at(-1);
  if (d.setup && !d.search) {
    return (
      <>
        <h2>Economy</h2>
        <EconomyEmpty setup={d.setup} settingsUrl={`${base}/settings`} canManage={d.canManage} />
      </>
    );
  }
  const window30 = supply.reduce(
    (a, x) => ({ gained: a.gained + Number(x.gained), lost: a.lost + Number(x.lost) }),
    { gained: 0, lost: 0 },
  );
  return (
    <>
      <h2>Economy</h2>
      <nav className="currency-switch" aria-label="Currency">
        {[{ key: "total", name: "All currencies" }, ...currencies].map((c) => (
          <Link key={c.key} to={link(c.key)} aria-current={c.key === selected ? "page" : undefined} data-testid={`currency-${c.key}`}>
            {c.name}
          </Link>
        ))}
      </nav>
      <Form method="get" className="row" role="search">
        {selected !== "total" ? <input type="hidden" name="currency" value={selected} /> : null}
        <input type="search" name="search" defaultValue={d.search} placeholder="User id, username or character name" aria-label="Search players" />
        <button type="submit">Search</button>
      </Form>
      {d.players ? (
        <section className="panel">
          <h3 style={{ marginTop: 0 }}>{plural(d.players.total, "player")} matching “{d.search}”</h3>
          <PlayerTable rows={d.players.data as unknown as PlayerRow[]} base={base} testId="search-results" currencies={currencies} selected={selected} />
        </section>
      ) : null}
      <div className="cards even-cards" style={{ marginTop: 16 }}>
        <div className="card" style={cardStyle(next())}><div className="value" data-testid="player-count">{s.players.toLocaleString("en-US")}</div><div className="label">Players</div></div>
        <AmountCard value={s.sums.total} label="Money supply, all currencies" testId="money-supply" size={next()} to={link("total")} current={selected === "total"} cardTestId="card-total" />
        {currencies.map((c) => (
          <AmountCard key={c.key} value={(s.sums.balances as Record<string, string>)[c.key] ?? "0"} label={c.name} size={next()} to={link(c.key)} current={selected === c.key} cardTestId={`card-${c.key}`} />
        ))}
        <AmountCard value={s.median} label={selected === "total" ? "Median wealth" : `Median ${selectedName}`} size={next()} cardTestId="card-median" />
        <AmountCard value={s.p99} label={`99th percentile, ${of}`} size={next()} cardTestId="card-p99" />
        <StatCard value={share(s.concentration.top1_share)} label={`Held by the top 1%`} detail={of} size={next()} testId="card-top1" />
        <StatCard value={share(s.concentration.top10_share)} label={`Held by the top 10%`} detail={of} size={next()} testId="card-top10" />
        <StatCard
          value={s.newcomers.players.toLocaleString("en-US")}
          label="New players, 30 days"
          detail={`${d.openings.newcomers > 0 ? `brought ${shortAmount(d.openings.opening)} · ` : ""}median ${shortAmount(s.newcomers.median)}`}
          size={next()}
          testId="card-newcomers"
        />
      </div>
      <SupplyPanel supply={supply} others={d.openings.others} of={of} />
      <section className="panel">
        <h3 style={{ marginTop: 0 }}>
          Faucets and sinks, {of} <span className="muted small">(per UTC day: what players who ended the day above their start gained, and what those below lost)</span>
        </h3>
        <p className="muted small" data-testid="flow-totals">
          30 days: <span className="flow-gained-text">{window30.gained > 0 ? "+" : ""}{shortAmount(String(window30.gained))} gained</span> ·{" "}
          <span className="flow-lost-text">{window30.lost > 0 ? "−" : ""}{shortAmount(String(window30.lost))} lost</span>
          {d.openings.newcomers > 0 ? (
            <span data-testid="flow-openings">
              {" "}· <Brought newcomers={d.openings.newcomers} opening={d.openings.opening} /> (not a gain)
            </span>
          ) : null}
          {last ? ` · today ${plural(last.gainers, "gainer")}, ${plural(last.losers, "loser")}` : ""}
        </p>
        <FlowChart
          label="Gained and lost per day"
          days={supply.map((p) => ({ label: p.day.slice(5), gained: p.gained, lost: p.lost, gainers: p.gainers, losers: p.losers }))}
        />
      </section>
      <FlowsPanel data={d.flows} base={base} />
      <section className="panel">
        <h3 style={{ marginTop: 0 }}>Wealth distribution <span className="muted small">(players per order of magnitude of {of})</span></h3>
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
        <h3 style={{ marginTop: 0 }}>Top players <span className="muted small">(by {of})</span></h3>
        {s.top_players.length ? (
          <PlayerTable rows={s.top_players as unknown as PlayerRow[]} base={base} testId="top-players" currencies={currencies} selected={selected} />
        ) : (
          <p className="muted">No snapshots yet: push each player&rsquo;s profile with <code>Monitor.economy.push</code> from <code>Players.PlayerRemoving</code>, or run a scan.</p>
        )}
      </section>
      <AnomalyTable base={base} anomalies={d.anomalies} currencies={currencies} canManage={d.canManage} />
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
