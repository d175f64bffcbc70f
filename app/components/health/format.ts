import { num } from "../format";

/** A rate (0..1) as a percentage with one decimal ("97.5%"), or "—" when nothing could be counted. */
export const pct = (r: number | null | undefined) => (r === null || r === undefined ? "—" : `${(Math.round(r * 1000) / 10).toFixed(1)}%`);

/** A measure with its unit ("1,234.5 MB"), or "—" when there was no sample. */
export const measure = (v: number | null | undefined, unit: string, digits = 1) =>
  v === null || v === undefined ? "—" : `${Number(v).toLocaleString("en-US", { maximumFractionDigits: digits })} ${unit}`;

/** Errors per 1,000 player-minutes ("2.35"), or "—" with no player-minutes. */
export const perThousand = (v: number | null | undefined) => (v === null || v === undefined ? "—" : Number(v).toLocaleString("en-US", { maximumFractionDigits: 2 }));

/** "2 d 3 h", "3 h 12 min", "7 min", "40 s". */
export function uptime(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return `${num(d)} d ${h} h`;
  if (h > 0) return `${h} h ${m} min`;
  if (m > 0) return `${m} min`;
  return `${s} s`;
}

/** Memory-by-age bucket label: "0–10 min", "480+ min". */
export const ageBucket = (from: number, to: number | null) => (to === null ? `${from}+ min` : `${from}–${to} min`);

/** The release health windows, in the order the form offers them (the service's HEALTH_WINDOWS). */
export const WINDOW_CHOICES = ["24h", "7d", "30d"] as const;

/**
 * The Release health page's compared series step by window, as the dashboard's charts step (an hour
 * over 24 hours, 6 hours over 7 days, a day over 30 days): a chart's width shows no more, and a 30-day
 * page sends 30 points a series instead of 720. `/api/v1/releases/:version` keeps every hour.
 */
export const SERIES_STEP_HOURS = { "24h": 1, "7d": 6, "30d": 24 } as const satisfies Record<string, number>;
