/**
 * Small SVG charts for the economy pages: no chart library, server-rendered, readable without JS.
 * Amounts arrive as exact decimal strings; plotting converts them to numbers (a chart needs no
 * more than double precision), while labels keep the exact text.
 */
import { plural } from "../components/format";

import { labelWidth, useChartWidth } from "~/components/bar-chart";

/** 1234567.5 -> "1,234,567.5", exact for any length. */
export function amount(s: string | null | undefined): string {
  if (s == null) return "—";
  const [int, frac] = s.split(".");
  const neg = int.startsWith("-");
  const digits = (neg ? int.slice(1) : int).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${neg ? "-" : ""}${digits}${frac ? `.${frac}` : ""}`;
}

/** Short axis labels: 1.2K, 3.4M, 5.6B, 7.8T, then powers of ten. */
export function short(n: number): string {
  const a = Math.abs(n);
  if (a >= 1e15) return n.toExponential(1);
  for (const [v, u] of [[1e12, "T"], [1e9, "B"], [1e6, "M"], [1e3, "K"]] as const) if (a >= v) return `${(n / v).toFixed(1)}${u}`;
  return String(Math.round(n * 100) / 100);
}

/** An amount short enough for a card: 4.37B (the exact text goes in a tooltip and below). */
export function shortAmount(s: string | null | undefined): string {
  if (s == null) return "—";
  const n = Number(s);
  const a = Math.abs(n);
  if (a < 1e6) return amount(s.split(".")[0]);
  if (a >= 1e15) return n.toExponential(2);
  for (const [v, u] of [[1e12, "T"], [1e9, "B"], [1e6, "M"]] as const) if (a >= v) return `${+(n / v).toFixed(2)}${u}`;
  return amount(s);
}

/** Anomaly factors: 12.5×, 4,880×, 48.9M× (never raw decimals). */
export function factor(f: number): string {
  if (f >= 1e6) return `${short(f).replace(/\.0(?=[A-Z])/, "")}×`;
  if (f >= 100) return `${Math.round(f).toLocaleString("en-US")}×`;
  return `${+f.toFixed(1)}×`;
}

const H = 220;
const PAD = { l: 56, r: 12, t: 12, b: 28 };

export type LinePoint = { label: string; value: string };

export function LineChart({ points, label, color = "#3b82c4" }: { points: LinePoint[]; label: string; color?: string }) {
  const { ref, width: W, measured } = useChartWidth(720);
  if (points.length === 0) return <p className="muted">No data yet.</p>;
  const values = points.map((p) => Number(p.value));
  const max = Math.max(...values, 0);
  const min = Math.min(...values, 0);
  const span = max - min || 1;
  const x = (i: number) => PAD.l + (points.length === 1 ? (W - PAD.l - PAD.r) / 2 : (i * (W - PAD.l - PAD.r)) / (points.length - 1));
  const y = (v: number) => PAD.t + (H - PAD.t - PAD.b) * (1 - (v - min) / span);
  const path = values.map((v, i) => `${i ? "L" : "M"}${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
  // every k-th label, k as small as this width allows without overlaps
  const widest = Math.max(...points.map((p) => labelWidth(p.label)));
  const every = Math.max(1, Math.ceil(widest / ((W - PAD.l - PAD.r) / Math.max(1, points.length - 1))));
  return (
    <svg ref={ref} viewBox={`0 0 ${W} ${H}`} role="img" aria-label={label} className="chart-svg" data-fitted={measured || undefined}>
      <title>{label}</title>
      {[min, (min + max) / 2, max].map((v, i) => (
        <g key={i}>
          <line x1={PAD.l} x2={W - PAD.r} y1={y(v)} y2={y(v)} className="chart-grid" />
          <text x={PAD.l - 6} y={y(v) + 4} textAnchor="end" className="chart-tick">{short(v)}</text>
        </g>
      ))}
      <path d={path} fill="none" stroke={color} strokeWidth="2" />
      {values.map((v, i) => (
        <circle key={i} cx={x(i)} cy={y(v)} r={points.length > 60 ? 0 : 2.5} fill={color}>
          <title>{`${points[i].label}: ${amount(points[i].value)}`}</title>
        </circle>
      ))}
      {points.map((p, i) =>
        i % every === 0 ? (
          <text key={i} x={x(i)} y={H - 8} textAnchor="middle" className="chart-tick">{p.label}</text>
        ) : null,
      )}
    </svg>
  );
}

export type Bar = { label: string; count: number; title?: string };

export function BarsChart({ bars, label, color = "#6a5acd" }: { bars: Bar[]; label: string; color?: string }) {
  const { ref, width: W, measured } = useChartWidth(720);
  if (bars.length === 0) return <p className="muted">No players yet.</p>;
  const max = Math.max(...bars.map((b) => b.count), 1);
  const bw = (W - PAD.l - PAD.r) / bars.length;
  // show every k-th label so none overlap
  const widest = Math.max(...bars.map((b) => labelWidth(b.label)));
  const every = Math.max(1, Math.ceil(widest / bw));
  return (
    <svg ref={ref} viewBox={`0 0 ${W} ${H}`} role="img" aria-label={label} className="chart-svg" data-fitted={measured || undefined}>
      <title>{label}</title>
      <text x={PAD.l - 6} y={PAD.t + 4} textAnchor="end" className="chart-tick">{short(max)}</text>
      <line x1={PAD.l} x2={W - PAD.r} y1={H - PAD.b} y2={H - PAD.b} className="chart-axis" />
      {bars.map((b, i) => {
        const h = ((H - PAD.t - PAD.b) * b.count) / max;
        return (
          <g key={i}>
            <rect x={PAD.l + i * bw + 2} y={H - PAD.b - h} width={Math.max(1, bw - 4)} height={h} fill={color}>
              <title>{`${b.title ?? b.label}: ${plural(b.count, "player")}`}</title>
            </rect>
            {i % every === 0 ? <text x={PAD.l + i * bw + bw / 2} y={H - 8} textAnchor="middle" className="chart-tick">{b.label}</text> : null}
          </g>
        );
      })}
    </svg>
  );
}
