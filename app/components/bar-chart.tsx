import { compact, num } from "./format";

export type ChartSeries = { key: string; label: string; color: string };
export type ChartPoint = { at: Date | string; values: Record<string, number> };

/** Steps of 1, 2 or 5 x 10^n so the y axis reads 0, 5, 10, 15 rather than 0, 4.33, 8.67. */
function niceMax(max: number): { top: number; step: number } {
  if (max <= 0) return { top: 4, step: 1 };
  const rough = max / 4;
  const mag = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= rough)!;
  const s = Math.max(1, step);
  return { top: Math.ceil(max / s) * s, step: s };
}

/**
 * A server-rendered stacked bar chart: y axis with gridlines and numbers, x axis with time labels,
 * a legend with totals. Readable without hovering; each bar also carries a <title> tooltip.
 * `totals` overrides the legend's sums when the page has exact figures for the whole window (the
 * first bar of a window that does not start on a bucket boundary holds only part of its bucket).
 */
export function BarChart({
  points,
  series,
  label,
  xLabel,
  height = 220,
  totals: windowTotals,
}: {
  points: ChartPoint[];
  series: ChartSeries[];
  label: string;
  xLabel: (at: Date, i: number) => string | null;
  height?: number;
  totals?: Record<string, number>;
}) {
  const width = 760;
  const m = { top: 12, right: 12, bottom: 34, left: 48 };
  const w = width - m.left - m.right;
  const h = height - m.top - m.bottom;
  const totals = points.map((p) => series.reduce((n, s) => n + (p.values[s.key] ?? 0), 0));
  const { top, step } = niceMax(Math.max(0, ...totals));
  const ticks = Array.from({ length: Math.floor(top / step) + 1 }, (_, i) => i * step);
  const band = w / Math.max(1, points.length);
  const barW = Math.max(1, band * 0.72);
  const y = (v: number) => m.top + h - (v / top) * h;
  const sums = series.map((s) => windowTotals?.[s.key] ?? points.reduce((n, p) => n + (p.values[s.key] ?? 0), 0));

  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={label} preserveAspectRatio="xMidYMid meet">
        {ticks.map((t) => (
          <g key={t}>
            <line x1={m.left} x2={width - m.right} y1={y(t)} y2={y(t)} className="chart-grid" />
            <text x={m.left - 6} y={y(t)} dy="0.32em" textAnchor="end" className="chart-tick">
              {compact(t)}
            </text>
          </g>
        ))}
        {points.map((p, i) => {
          const at = new Date(p.at);
          let base = 0;
          const x = m.left + i * band + (band - barW) / 2;
          const text = xLabel(at, i);
          return (
            <g key={i}>
              {series.map((s) => {
                const v = p.values[s.key] ?? 0;
                if (v <= 0) return null;
                const rect = (
                  <rect key={s.key} x={x} y={y(base + v)} width={barW} height={Math.max(1, y(base) - y(base + v))} fill={s.color}>
                    <title>{`${at.toISOString().slice(0, 16).replace("T", " ")} UTC — ${s.label}: ${num(v)}`}</title>
                  </rect>
                );
                base += v;
                return rect;
              })}
              {text ? (
                <>
                  <line x1={x + barW / 2} x2={x + barW / 2} y1={m.top + h} y2={m.top + h + 4} className="chart-axis" />
                  <text x={x + barW / 2} y={m.top + h + 18} textAnchor="middle" className="chart-tick">
                    {text}
                  </text>
                </>
              ) : null}
            </g>
          );
        })}
        <line x1={m.left} x2={width - m.right} y1={m.top + h} y2={m.top + h} className="chart-axis" />
      </svg>
      <figcaption className="chart-legend">
        {series.map((s, i) => (
          <span key={s.key}>
            <i style={{ background: s.color }} /> {s.label}: <strong>{num(sums[i])}</strong>
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
