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

/** A card's figures: the amount kept short (4.37B, exact in its tooltip), the exact amount below it when they differ, the label. */
export function AmountFigures({ value, label, exactTestId }: { value: string | null | undefined; label: string; exactTestId?: string }) {
  const exact = amount(value);
  const brief = shortAmount(value);
  return (
    <>
      <div className="value" title={exact}>{brief}</div>
      <div className="exact" data-testid={exactTestId} hidden={brief === exact}>{exact}</div>
      <div className="label">{label}</div>
    </>
  );
}

/** Anomaly factors: 12.5×, 4,880×, 48.9M× (never raw decimals). */
export function factor(f: number): string {
  if (f >= 1e6) return `${short(f).replace(/\.0(?=[A-Z])/, "")}×`;
  if (f >= 100) return `${Math.round(f).toLocaleString("en-US")}×`;
  return `${+f.toFixed(1)}×`;
}

const H = 220;
const PAD = { l: 56, r: 12, t: 12, b: 28 };

/** The chart's three horizontal grid lines (min, middle, max), each with its amount. */
function YGrid({ min, max, y, W }: { min: number; max: number; y: (v: number) => number; W: number }) {
  return (
    <>
      {[min, (min + max) / 2, max].map((v, i) => (
        <g key={i}>
          <line x1={PAD.l} x2={W - PAD.r} y1={y(v)} y2={y(v)} className="chart-grid" />
          <text x={PAD.l - 6} y={y(v) + 4} textAnchor="end" className="chart-tick">{short(v)}</text>
        </g>
      ))}
    </>
  );
}

/** The x labels of evenly spaced points: every k-th, k as small as the width allows without overlaps. */
function XLabels({ labels, x, W, H }: { labels: string[]; x: (i: number) => number; W: number; H: number }) {
  const widest = Math.max(...labels.map((l) => labelWidth(l)));
  const every = Math.max(1, Math.ceil(widest / ((W - PAD.l - PAD.r) / Math.max(1, labels.length - 1))));
  return (
    <>
      {labels.map((l, i) =>
        i % every === 0 ? (
          // a label centred on the last points would run past the right edge: it ends at its point instead
          <text key={i} x={x(i)} y={H - 8} textAnchor={x(i) + labelWidth(l) / 2 > W ? "end" : "middle"} className="chart-tick">{l}</text>
        ) : null,
      )}
    </>
  );
}

/** `note` is added to the point's tooltip (the day's growth, say). */
export type LinePoint = { label: string; value: string; note?: string };

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
  return (
    <svg ref={ref} viewBox={`0 0 ${W} ${H}`} role="img" aria-label={label} className="chart-svg" data-fitted={measured || undefined}>
      <title>{label}</title>
      <YGrid min={min} max={max} y={y} W={W} />
      <path d={path} fill="none" stroke={color} strokeWidth="2" />
      {values.map((v, i) => (
        <circle key={i} cx={x(i)} cy={y(v)} r={points.length > 60 ? 0 : 2.5} fill={color}>
          <title>{`${points[i].label}: ${amount(points[i].value)}${points[i].note ? ` (${points[i].note})` : ""}`}</title>
        </circle>
      ))}
      <XLabels labels={points.map((p) => p.label)} x={x} W={W} H={H} />
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

/** Growth of a day's supply over the previous day's: +1.25%, −20%, — when there was no supply to grow from. */
export function growth(pct: number | null | undefined): string {
  if (pct == null) return "—";
  const a = Math.abs(pct);
  const text = a >= 1e6 ? short(a) : a >= 100 ? Math.round(a).toLocaleString("en-US") : `${+a.toFixed(2)}`;
  return `${pct > 0 ? "+" : pct < 0 ? "−" : ""}${text}%`;
}

/** A share of the supply (0.9211) as a percentage: 92.1%. */
export function share(s: number | null | undefined): string {
  if (s == null) return "—";
  return `${+(s * 100).toFixed(1)}%`;
}

export type FlowDay = { label: string; gained: string; lost: string; gainers: number; losers: number };

/**
 * Faucet/sink per day: what the players who ended the day above where they started gained (up, green)
 * and what those below lost (down, red), around a zero line; each bar's title names how many players.
 */
export function FlowChart({ days, label }: { days: FlowDay[]; label: string }) {
  const { ref, width: W, measured } = useChartWidth(720);
  if (days.length === 0) return <p className="muted">No data yet.</p>;
  const up = days.map((d) => Number(d.gained));
  const down = days.map((d) => Number(d.lost));
  const top = Math.max(...up, 0);
  const bottom = Math.max(...down, 0);
  const span = top + bottom || 1;
  const inner = H - PAD.t - PAD.b;
  const zero = PAD.t + (inner * top) / span;
  const bw = (W - PAD.l - PAD.r) / days.length;
  const widest = Math.max(...days.map((d) => labelWidth(d.label)));
  const every = Math.max(1, Math.ceil(widest / bw));
  return (
    <svg ref={ref} viewBox={`0 0 ${W} ${H}`} role="img" aria-label={label} className="chart-svg" data-fitted={measured || undefined}>
      <title>{label}</title>
      {top > 0 ? <text x={PAD.l - 6} y={PAD.t + 4} textAnchor="end" className="chart-tick">{`+${short(top)}`}</text> : null}
      {bottom > 0 ? <text x={PAD.l - 6} y={H - PAD.b} textAnchor="end" className="chart-tick">{`−${short(bottom)}`}</text> : null}
      <line x1={PAD.l} x2={W - PAD.r} y1={zero} y2={zero} className="chart-axis" />
      {days.map((d, i) => {
        const hu = (inner * up[i]) / span;
        const hd = (inner * down[i]) / span;
        const x = PAD.l + i * bw + 1;
        const w = Math.max(1, bw - 2);
        return (
          <g key={i}>
            {hu > 0 ? (
              <rect x={x} y={zero - hu} width={w} height={hu} className="flow-gained">
                <title>{`${d.label}: +${amount(d.gained)} gained by ${plural(d.gainers, "player")}`}</title>
              </rect>
            ) : null}
            {hd > 0 ? (
              <rect x={x} y={zero} width={w} height={hd} className="flow-lost">
                <title>{`${d.label}: −${amount(d.lost)} lost by ${plural(d.losers, "player")}`}</title>
              </rect>
            ) : null}
            {i % every === 0 ? <text x={PAD.l + i * bw + bw / 2} y={H - 8} textAnchor="middle" className="chart-tick">{d.label}</text> : null}
          </g>
        );
      })}
    </svg>
  );
}

/**
 * Stat cards that wrap evenly: at most `wide` a row on a wide screen, the rows' sizes differing by at
 * most one; two a row on a phone, the last three sharing a row when the count is odd. Never one card
 * alone on a row. Returns each card's flex basis for both widths (as CSS variables).
 */
export function evenRows(n: number, wide = 6): { wide: number; narrow: number }[] {
  const rows = Math.max(1, Math.ceil(n / wide));
  const wideSizes: number[] = [];
  for (let r = 0; r < rows; r++) wideSizes.push(Math.floor(n / rows) + (r < n % rows ? 1 : 0));
  const out: { wide: number; narrow: number }[] = [];
  wideSizes.forEach((size) => {
    for (let i = 0; i < size; i++) out.push({ wide: size, narrow: 2 });
  });
  if (n % 2 === 1) {
    if (n >= 3) for (let i = n - 3; i < n; i++) out[i].narrow = 3;
    else out[0].narrow = 1;
  }
  return out;
}

/** One line per currency: colours from the Okabe–Ito palette (told apart with colour blindness), and a dash pattern each. */
const SERIES_COLORS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#8C6D1F", "#7F7F7F", "#1B9E77"];
const SERIES_DASHES = [undefined, "7 4", "2 3", "9 3 2 3"];
export const seriesStyle = (i: number) => ({ color: SERIES_COLORS[i % SERIES_COLORS.length], dash: SERIES_DASHES[i % SERIES_DASHES.length] });

export type LineSeries = { key: string; name: string };
/** One observation: its x label and each currency's amount (absent: the map of its time had no such currency). */
export type SeriesPoint = { label: string; values: Record<string, string | undefined> };
/** A point marked on a currency's line: `at` is the index of its observation. */
export type LineMark = { key: string; at: number; kind: "anomaly" | "unexplained"; title: string };

function markShape(kind: LineMark["kind"], cx: number, cy: number, r = 8) {
  return kind === "anomaly"
    ? `M${cx},${cy - r} L${cx + r},${cy + r * 0.8} L${cx - r},${cy + r * 0.8} Z`
    : `M${cx},${cy - r} L${cx + r},${cy} L${cx},${cy + r} L${cx - r},${cy} Z`;
}

/**
 * Each currency's balance over a player's observations on one shared axis, with the anomalies (▲)
 * and unexplained gains (◆) marked on the line of their currency; a legend names both.
 */
export function CurrencyLinesChart({ series, points, marks, label, height = H, styleOf = seriesStyle }: { series: LineSeries[]; points: SeriesPoint[]; marks: LineMark[]; label: string; height?: number; styleOf?: (i: number) => { color: string; dash: string | undefined } }) {
  const { ref, width: W, measured } = useChartWidth(720);
  const H = height;
  if (points.length === 0 || series.length === 0) return <p className="muted">No data yet.</p>;
  const all = points.flatMap((p) => series.map((s) => p.values[s.key]).filter((v): v is string => v !== undefined).map(Number));
  const max = Math.max(...all, 0);
  const min = Math.min(...all, 0);
  const span = max - min || 1;
  const x = (i: number) => PAD.l + (points.length === 1 ? (W - PAD.l - PAD.r) / 2 : (i * (W - PAD.l - PAD.r)) / (points.length - 1));
  const y = (v: number) => PAD.t + (H - PAD.t - PAD.b) * (1 - (v - min) / span);
  const pathOf = (key: string) => {
    let d = "";
    let pen = false;
    points.forEach((p, i) => {
      const v = p.values[key];
      if (v === undefined) {
        pen = false;
        return;
      }
      d += `${pen ? "L" : "M"}${x(i).toFixed(1)},${y(Number(v)).toFixed(1)} `;
      pen = true;
    });
    return d.trim();
  };
  const kinds = new Set(marks.map((m) => m.kind));
  return (
    <figure className="currency-lines" data-testid="currency-lines">
      <svg ref={ref} viewBox={`0 0 ${W} ${H}`} role="img" aria-label={label} className="chart-svg" data-fitted={measured || undefined}>
        <title>{label}</title>
        <YGrid min={min} max={max} y={y} W={W} />
        {series.map((s, si) => {
          const st = styleOf(si);
          return (
            <g key={s.key} data-testid={`line-${s.key}`}>
              <path d={pathOf(s.key)} fill="none" stroke={st.color} strokeWidth="2.5" strokeDasharray={st.dash} />
              {points.map((p, i) => {
                const v = p.values[s.key];
                return v === undefined ? null : (
                  <circle key={i} cx={x(i)} cy={y(Number(v))} r={points.length > 60 ? 0 : 2.5} fill={st.color}>
                    <title>{`${s.name}, ${p.label}: ${amount(v)}`}</title>
                  </circle>
                );
              })}
            </g>
          );
        })}
        {marks.map((m, i) => {
          const v = points[m.at]?.values[m.key];
          if (v === undefined) return null;
          return (
            <path key={i} d={markShape(m.kind, x(m.at), y(Number(v)))} className={`line-mark mark-${m.kind}`} data-testid={`mark-${m.kind}-${m.key}`}>
              <title>{m.title}</title>
            </path>
          );
        })}
        <XLabels labels={points.map((p) => p.label)} x={x} W={W} H={H} />
      </svg>
      <figcaption className="chart-legend lines-legend" data-testid="lines-legend">
        {series.map((s, si) => {
          const st = styleOf(si);
          return (
            <span key={s.key} className="legend-item">
              <svg width="26" height="10" aria-hidden="true"><line x1="1" x2="25" y1="5" y2="5" stroke={st.color} strokeWidth="2.5" strokeDasharray={st.dash} /></svg>
              {s.name}
            </span>
          );
        })}
        {kinds.has("anomaly") ? (
          <span className="legend-item"><svg width="14" height="14" aria-hidden="true"><path d={markShape("anomaly", 7, 7, 5.5)} className="line-mark mark-anomaly" /></svg>anomaly</span>
        ) : null}
        {kinds.has("unexplained") ? (
          <span className="legend-item"><svg width="14" height="14" aria-hidden="true"><path d={markShape("unexplained", 7, 7, 5.5)} className="line-mark mark-unexplained" /></svg>unexplained gain</span>
        ) : null}
      </figcaption>
    </figure>
  );
}
