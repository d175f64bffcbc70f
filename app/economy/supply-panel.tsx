/**
 * The overview's money supply panel: the supply per UTC day, the day's growth, and, apart from it,
 * what new players brought (their opening balances are part of the supply, never growth).
 */
import { plural } from "~/components/format";
import { amount, growth, LineChart, shortAmount } from "./charts";

export type SupplyPoint = { day: string; supply: string; change: string; opening: string; newcomers: number; growth_pct: number | null };

/** +1,200 or −20,000 (a minus sign, like the other figures of the page). */
const signed = (s: string) => (s.startsWith("-") ? `−${amount(s.slice(1))}` : `+${amount(s)}`);

/** "150 new players brought 1.5M" (the exact amount in a tooltip where it is shortened). */
export function Brought({ newcomers, opening }: { newcomers: number; opening: string }) {
  const brief = shortAmount(opening);
  return (
    <>
      {plural(newcomers, "new player")} brought <span title={amount(opening)}>{brief}</span>
    </>
  );
}

/** `others[i]`: day i's change without the new players' opening balances (exact). */
export function SupplyPanel({ supply, others, of }: { supply: SupplyPoint[]; others: string[]; of: string }) {
  const i = supply.length - 1;
  const last = supply[i];
  return (
    <section className="panel">
      <h3 style={{ marginTop: 0 }}>
        Money supply, {of}, last 30 days <span className="muted small">(end of each UTC day)</span>
      </h3>
      <p className="muted small" data-testid="supply-growth">
        Today {last ? `${growth(last.growth_pct)} (${signed(others[i])})` : "—"}
        {i > 0 ? ` · yesterday ${growth(supply[i - 1].growth_pct)}` : ""} · growth is the day's change without new players' starting
        wealth, over the previous day's supply
      </p>
      {last && last.newcomers > 0 ? (
        <p className="small" data-testid="supply-openings">
          Today <strong><Brought newcomers={last.newcomers} opening={last.opening} /></strong>: their starting wealth, part of the supply,
          not growth. Besides that, balances changed by {signed(others[i])}.
        </p>
      ) : null}
      <LineChart
        label="Money supply per day"
        points={supply.map((p, k) => ({
          label: p.day.slice(5),
          value: p.supply,
          note: [
            `${growth(p.growth_pct)} that day`,
            p.newcomers > 0 ? `${plural(p.newcomers, "new player")} brought ${amount(p.opening)}, others ${signed(others[k])}` : null,
          ]
            .filter(Boolean)
            .join("; "),
        }))}
      />
    </section>
  );
}
