import { labelWidth, useChartWidth } from "../bar-chart";

export type LinePoint = { x: number; y: number | null };
/** `tone` picks the line's colour from the theme (a, b: the two compared versions); `dashed` a second measure of the same version. */
export type LineSeries = { key: string; label: string; tone: "a" | "b"; dashed?: boolean; points: LinePoint[] };

/**
 * A server-rendered line chart (no chart library): y gridlines with numbers, x labels, a legend that
 * names each line and says its last value, so nothing needs hovering. A gap in a series (null) breaks
 * its line; a lone point shows as a dot. Colours come from the stylesheet, so dark mode has its own.
 */
export function LineChart({
  series,
  xTicks,
  xMin,
  xMax,
  yMax: fixedMax,
  yFormat,
  label,
  height = 180,
  testId,
}: {
  series: LineSeries[];
  xTicks: { x: number; label: string }[];
  xMin: number;
  xMax: number;
  /** the top of the y axis (1 for shares); else the data's peak rounded up */
  yMax?: number;
  yFormat: (v: number) => string;
  label: string;
  height?: number;
  testId?: string;
}) {
  const { ref, width, measured } = useChartWidth(520);
  const m = { top: 10, right: 14, bottom: 28, left: 52 };
  const w = Math.max(10, width - m.left - m.right);
  const h = height - m.top - m.bottom;
  const peak = Math.max(0, ...series.flatMap((s) => s.points.map((p) => p.y ?? 0)));
  const top = fixedMax ?? niceTop(peak);
  const ticks = [0, top / 2, top];
  const span = Math.max(1e-9, xMax - xMin);
  const x = (v: number) => m.left + ((v - xMin) / span) * w;
  const y = (v: number) => m.top + h - (Math.min(v, top) / top) * h;
  let lastRight = -Infinity;
  const shownTicks = xTicks.filter((t) => {
    const cx = x(t.x);
    const half = labelWidth(t.label) / 2;
    if (cx - half < lastRight || cx + half > width + 4) return false;
    lastRight = cx + half;
    return true;
  });
  const lastOf = (s: LineSeries) => [...s.points].reverse().find((p) => p.y !== null)?.y ?? null;
  return (
    <figure className="chart health-chart" data-testid={testId}>
      <svg ref={ref} viewBox={`0 0 ${width} ${height}`} role="img" aria-label={label} preserveAspectRatio="xMidYMid meet" data-fitted={measured || undefined}>
        {ticks.map((t) => (
          <g key={t}>
            <line x1={m.left} x2={width - m.right} y1={y(t)} y2={y(t)} className="chart-grid" />
            <text x={m.left - 6} y={y(t)} dy="0.32em" textAnchor="end" className="chart-tick">
              {yFormat(t)}
            </text>
          </g>
        ))}
        <line x1={m.left} x2={width - m.right} y1={m.top + h} y2={m.top + h} className="chart-axis" />
        {shownTicks.map((t) => (
          <text key={t.x} x={x(t.x)} y={m.top + h + 18} textAnchor="middle" className="chart-tick">
            {t.label}
          </text>
        ))}
        {series.map((s) => {
          const runs: LinePoint[][] = [];
          let run: LinePoint[] = [];
          for (const p of s.points) {
            if (p.y === null) {
              if (run.length) runs.push(run);
              run = [];
            } else run.push(p);
          }
          if (run.length) runs.push(run);
          return (
            <g key={s.key} className={`line-${s.tone}${s.dashed ? " line-dashed" : ""}`}>
              {runs.map((r, i) =>
                r.length === 1 ? null : (
                  <polyline key={i} points={r.map((p) => `${x(p.x).toFixed(1)},${y(p.y!).toFixed(1)}`).join(" ")} className="line-path" />
                ),
              )}
              {/* each point marked while they are few (a day's hours, the age buckets), so a short series reads */}
              {runs.flat().map((p, i, all) =>
                all.length <= 48 || runs.some((r) => r.length === 1 && r[0] === p) ? (
                  <circle key={`d${i}`} cx={x(p.x)} cy={y(p.y!)} r={s.dashed ? 2 : 3} className="line-dot" />
                ) : null,
              )}
            </g>
          );
        })}
      </svg>
      <figcaption className="chart-legend lines-legend">
        {series.map((s) => {
          const last = lastOf(s);
          return (
            <span key={s.key} className="legend-item">
              <i className={`swatch line-${s.tone}${s.dashed ? " line-dashed" : ""}`} /> {s.label}
              {last !== null ? <>: <strong>{yFormat(last)}</strong></> : null}
            </span>
          );
        })}
      </figcaption>
    </figure>
  );
}

function niceTop(max: number): number {
  if (max <= 0) return 1;
  const mag = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((k) => k * mag).find((s) => s >= max)!;
}
