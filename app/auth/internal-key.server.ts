import { createHash, timingSafeEqual } from "node:crypto";

const digest = (s: string) => createHash("sha256").update(s).digest();

/**
 * Whether a caller's `x-internal-key` is the internal secret (NOTIFICATION_SECRET): compared in
 * constant time over digests, so neither the length nor a prefix leaks through timing.
 */
export const internalKeyMatches = (given: string, secret: string) => timingSafeEqual(digest(given), digest(secret));
