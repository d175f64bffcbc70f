import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/**
 * Open Cloud keys at rest: AES-256-GCM under a key derived from APP_SECRET with HKDF, a fresh 96-bit
 * IV per write, and the project id as associated data so a ciphertext copied to another project's
 * row does not decrypt. Rotating APP_SECRET makes stored keys unreadable: they must be entered again.
 */
const INFO = "roblox-monitor/economy/open-cloud-key/v1";

const keyFrom = (appSecret: string) => Buffer.from(hkdfSync("sha256", appSecret, "open-cloud-key", INFO, 32));

export type Sealed = { ciphertext: Buffer; iv: Buffer; tag: Buffer };

export function sealKey(appSecret: string, projectId: string, plaintext: string): Sealed {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", keyFrom(appSecret), iv);
  cipher.setAAD(Buffer.from(projectId));
  const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return { ciphertext, iv, tag: cipher.getAuthTag() };
}

/** Throws when the secret changed or the row was tampered with. */
export function openKey(appSecret: string, projectId: string, sealed: Sealed): string {
  const decipher = createDecipheriv("aes-256-gcm", keyFrom(appSecret), sealed.iv);
  decipher.setAAD(Buffer.from(projectId));
  decipher.setAuthTag(sealed.tag);
  return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString("utf8");
}
