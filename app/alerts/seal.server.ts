import { openFor, sealFor, type SealPurpose } from "~/seal.server";

/**
 * Channel URLs (they carry the Discord/Slack webhook token) and webhook secrets at rest (see
 * seal.server.ts), stored in one column as iv (12) || tag (16) || ciphertext. Rotating APP_SECRET
 * means re-entering channel URLs.
 */
const ALERT_CHANNEL: SealPurpose = { salt: "alert-channel", info: "roblox-monitor/alerts/v1" };

export function seal(appSecret: string, projectId: string, plaintext: string): Buffer {
  const { iv, tag, ciphertext } = sealFor(ALERT_CHANNEL, appSecret, projectId, plaintext);
  return Buffer.concat([iv, tag, ciphertext]);
}

/** Throws when APP_SECRET changed or the value was moved or tampered with. */
export function unseal(appSecret: string, projectId: string, sealed: Buffer): string {
  return openFor(ALERT_CHANNEL, appSecret, projectId, { iv: sealed.subarray(0, 12), tag: sealed.subarray(12, 28), ciphertext: sealed.subarray(28) });
}

/** What the dashboard shows of a URL: scheme, host and the first path segments, never the token. */
export function maskUrl(raw: string): string {
  const u = new URL(raw);
  const parts = u.pathname.split("/").filter(Boolean);
  const shown = parts.slice(0, Math.min(parts.length - 1, 3));
  return `${u.protocol}//${u.host}/${shown.join("/")}${shown.length ? "/" : ""}••••••`;
}
