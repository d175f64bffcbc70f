import { useEffect, useRef, useState } from "react";
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
 * A chart's drawing width: the width its SVG is shown at once the page runs in the browser (so one
 * unit of the viewBox is one CSS pixel and labels keep their font size on a phone), `fallback` in
 * the server's HTML. Follows the SVG when the window or the page around it changes width.
 */
export function useChartWidth(fallback: number) {
  const ref = useRef<SVGSVGElement>(null);
  const [width, setWidth] = useState<number | null>(null);
  useEffect(() => {
    const svg = ref.current;
    if (!svg) return;
    const measure = () => {
      const w = svg.getBoundingClientRect().width;
      if (w > 0) setWidth(w);
    };
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(svg);
    return () => observer.disconnect();
  }, []);
  return { ref, width: width ?? fallback, measured: width !== null };
}

/** About how wide a tick label is drawn (11 px system font), to keep labels from overlapping. */
export const labelWidth = (text: string) => text.length * 6.5 + 8;

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
  const { ref, width, measured } = useChartWidth(760);
  const m = { top: 12, right: 12, bottom: 34, left: 48 };
  const w = width - m.left - m.right;
  const h = height - m.top - m.bottom;
  const totals = points.map((p) => series.reduce((n, s) => n + (p.values[s.key] ?? 0), 0));
  const { top, step } = niceMax(Math.max(0, ...totals));
  const ticks = Array.from({ length: Math.floor(top / step) + 1 }, (_, i) => i * step);
  const band = w / Math.max(1, points.length);
  const barW = Math.max(1, band * 0.72);
  const y = (v: number) => m.top + h - (v / top) * h;
  // x labels the rule asks for, minus those that would overlap the one before at this width
  let lastRight = -Infinity;
  const labels = points.map((p, i) => {
    const text = xLabel(new Date(p.at), i);
    if (!text) return null;
    const cx = m.left + i * band + band / 2;
    if (cx - labelWidth(text) / 2 < lastRight) return null;
    lastRight = cx + labelWidth(text) / 2;
    return text;
  });
  const sums = series.map((s) => windowTotals?.[s.key] ?? points.reduce((n, p) => n + (p.values[s.key] ?? 0), 0));

  return (
    <figure className="chart">
      <svg ref={ref} viewBox={`0 0 ${width} ${height}`} role="img" aria-label={label} preserveAspectRatio="xMidYMid meet" data-fitted={measured || undefined}>
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
          const text = labels[i];
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
