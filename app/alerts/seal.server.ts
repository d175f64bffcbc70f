import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/**
 * Channel URLs (they carry the Discord/Slack webhook token) and webhook secrets at rest:
 * AES-256-GCM under a key derived from APP_SECRET, a fresh IV per value, and the project id as
 * associated data so a value copied into another project's row does not open. Stored as
 * iv (12) || tag (16) || ciphertext. Rotating APP_SECRET means re-entering channel URLs.
 */
const keyFrom = (appSecret: string) => Buffer.from(hkdfSync("sha256", appSecret, "alert-channel", "roblox-monitor/alerts/v1", 32));

export function seal(appSecret: string, projectId: string, plaintext: string): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", keyFrom(appSecret), iv);
  cipher.setAAD(Buffer.from(projectId));
  const ct = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), ct]);
}

/** Throws when APP_SECRET changed or the value was moved or tampered with. */
export function unseal(appSecret: string, projectId: string, sealed: Buffer): string {
  const decipher = createDecipheriv("aes-256-gcm", keyFrom(appSecret), sealed.subarray(0, 12));
  decipher.setAAD(Buffer.from(projectId));
  decipher.setAuthTag(sealed.subarray(12, 28));
  return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString("utf8");
}

/** What the dashboard shows of a URL: scheme, host and the first path segments, never the token. */
export function maskUrl(raw: string): string {
  const u = new URL(raw);
  const parts = u.pathname.split("/").filter(Boolean);
  const shown = parts.slice(0, Math.min(parts.length - 1, 3));
  return `${u.protocol}//${u.host}/${shown.join("/")}${shown.length ? "/" : ""}••••••`;
}
