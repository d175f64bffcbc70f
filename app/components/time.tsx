import { createContext, useContext } from "react";
import { ago, utc } from "./format";

/**
 * Times are shown in UTC unless the user chose their local zone (Account page); the zone comes from a
 * cookie, so the server and the browser render the same text.
 */
export const TimeZoneContext = createContext<string | null>(null);

const pad = (n: number) => String(n).padStart(2, "0");

/** `2026-11-23 14:05 UTC`, or in the given IANA zone with its offset (`2026-11-23 15:05 GMT+1`). */
export function formatIn(d: Date | string | null | undefined, zone: string | null, withSeconds = false): string {
  if (!d) return "—";
  if (!zone) return utc(d, withSeconds);
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
      hourCycle: "h23",
      timeZoneName: "shortOffset",
    })
      .formatToParts(new Date(d))
      .map((p) => [p.type, p.value]),
  );
  const s = `${parts.year}-${parts.month}-${parts.day} ${pad(Number(parts.hour))}:${parts.minute}`;
  return `${withSeconds ? `${s}:${parts.second}` : s} ${parts.timeZoneName}`;
}

/** A zone name the runtime knows, or null (then times stay in UTC). */
export function validZone(zone: string | null | undefined): string | null {
  if (!zone || zone.length > 64 || zone === "UTC") return null;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone });
    return zone;
  } catch {
    return null;
  }
}

export function useTimeFormat() {
  const zone = useContext(TimeZoneContext);
  return (d: Date | string | null | undefined, withSeconds = false) => formatIn(d, zone, withSeconds);
}

/** An absolute time in the chosen zone. */
export function At({ d, seconds = false }: { d: Date | string | null | undefined; seconds?: boolean }) {
  const fmt = useTimeFormat();
  if (!d) return <span>—</span>;
  return <time dateTime={new Date(d).toISOString()}>{fmt(d, seconds)}</time>;
}

/** A relative time ("5 min ago") whose absolute time shows on hover and to assistive technology. */
export function Ago({ d, now }: { d: Date | string | null | undefined; now: Date | string }) {
  const fmt = useTimeFormat();
  if (!d) return <span>never</span>;
  return (
    <time dateTime={new Date(d).toISOString()} title={fmt(d, true)} className="rel">
      {ago(d, now)}
    </time>
  );
}
