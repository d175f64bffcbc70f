import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/**
 * Secrets at rest (alert channel URLs and webhook secrets, Open Cloud keys): AES-256-GCM under a key
 * derived from APP_SECRET with HKDF, one derived key per purpose, a fresh 96-bit IV per value, and
 * the project id as associated data so a value copied into another project's row does not open.
 * Rotating APP_SECRET makes sealed values unreadable: they must be entered again.
 */

/** What a key is derived for: HKDF's salt and info, never shared between two kinds of secret. */
export type SealPurpose = { salt: string; info: string };

export type Sealed = { ciphertext: Buffer; iv: Buffer; tag: Buffer };

const keyFrom = (appSecret: string, purpose: SealPurpose) => Buffer.from(hkdfSync("sha256", appSecret, purpose.salt, purpose.info, 32));

export function sealFor(purpose: SealPurpose, appSecret: string, projectId: string, plaintext: string): Sealed {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", keyFrom(appSecret, purpose), iv);
  cipher.setAAD(Buffer.from(projectId));
  const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return { ciphertext, iv, tag: cipher.getAuthTag() };
}

/** Throws when APP_SECRET changed or the value was moved or tampered with. */
export function openFor(purpose: SealPurpose, appSecret: string, projectId: string, sealed: Sealed): string {
  const decipher = createDecipheriv("aes-256-gcm", keyFrom(appSecret, purpose), sealed.iv);
  decipher.setAAD(Buffer.from(projectId));
  decipher.setAuthTag(sealed.tag);
  return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString("utf8");
}
