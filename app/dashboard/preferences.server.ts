import { validZone } from "~/components/time";

/**
 * Display preferences of this browser (not of the account: a laptop and a phone may sit in
 * different zones). Only the time zone today: unset means UTC.
 */
const COOKIE = "rm_tz";

export function timeZoneOf(request: Request): string | null {
  const raw = request.headers.get("cookie") ?? "";
  const m = new RegExp(`(?:^|;\\s*)${COOKIE}=([^;]*)`).exec(raw);
  return m ? validZone(decodeURIComponent(m[1])) : null;
}

/** The Set-Cookie header that stores (or clears, for UTC) the zone. */
export function timeZoneCookie(zone: string | null, secure: boolean): string {
  const attrs = `Path=/; SameSite=Lax; Max-Age=${zone ? 400 * 86_400 : 0}${secure ? "; Secure" : ""}`;
  return `${COOKIE}=${zone ? encodeURIComponent(zone) : ""}; ${attrs}`;
}
