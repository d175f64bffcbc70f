import { openFor, sealFor, type SealPurpose, type Sealed } from "~/seal.server";

/** Open Cloud keys at rest (see seal.server.ts), in three columns: ciphertext, IV and tag. */
const OPEN_CLOUD_KEY: SealPurpose = { salt: "open-cloud-key", info: "roblox-monitor/economy/open-cloud-key/v1" };

export const sealKey = (appSecret: string, projectId: string, plaintext: string): Sealed => sealFor(OPEN_CLOUD_KEY, appSecret, projectId, plaintext);

/** Throws when the secret changed or the row was tampered with. */
export const openKey = (appSecret: string, projectId: string, sealed: Sealed): string => openFor(OPEN_CLOUD_KEY, appSecret, projectId, sealed);
