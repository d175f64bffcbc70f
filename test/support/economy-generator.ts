/**
 * Generated economies for measuring the anomaly detector: players who earn (heavy-tailed, the rich
 * earning more), spend, and join over the window, with duplication exploits planted at known
 * observations. Seeded, so every run writes the same economies and the detection table is
 * reproducible.
 */

/** mulberry32: small, fast, and the same sequence on every platform for a seed */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type EconomyKind = "small" | "large";

/** The shape of an economy: balances (log-uniform at the start) and what an ordinary session earns. */
export const ECONOMIES: Record<EconomyKind, { balance: [number, number]; typicalRise: number; richness: number; startingGift: number }> = {
  // balances ~40–2,000, ordinary rises ~5–100
  small: { balance: [40, 2_000], typicalRise: 20, richness: 0.3, startingGift: 0 },
  // balances ~2,400–1,000,000, ordinary rises ~100–20,000
  large: { balance: [2_400, 1_000_000], typicalRise: 1_500, richness: 0.35, startingGift: 500 },
};

export const DUPE_FACTORS = [2, 10, 50] as const;

export type Round = { /** seconds before the end of the window */ secondsAgo: number; balances: Map<number, number> };
export type Dupe = { userId: number; round: number; factor: number; from: number; to: number };
export type Economy = { kind: EconomyKind; rounds: Round[]; dupes: Dupe[]; players: number };

export type EconomyOptions = {
  seed: number;
  /** players present at the start; as many again join during the window */
  players?: number;
  /** observations (pushes) over the window, one per round for the players who played in it */
  rounds?: number;
  /** planted dupes of each factor */
  dupesPerFactor?: number;
  /** how far back the first round is, in days (within the detector's 30-day window) */
  days?: number;
};

/**
 * One economy over `rounds` rounds. In each round a player plays with probability 0.6; a session
 * either spends (a third of them: up to half the balance, never below 1) or earns a rise drawn from a
 * log-normal around the economy's typical rise, larger for richer players (∝ balance^richness), with a
 * heavy tail (one session in 40 earns 5–20 times more: a rare drop, an event reward). New players
 * join during the window with the starting gift (their first observation, not a rise) and earn from
 * there. A dupe multiplies a player's balance by its factor in one session instead of earning.
 */
export function generateEconomy(kind: EconomyKind, opts: EconomyOptions): Economy {
  const { seed, players = 300, rounds = 24, dupesPerFactor = 10, days = 24 } = opts;
  const shape = ECONOMIES[kind];
  const rnd = seededRandom(seed);
  const normal = () => {
    // Box–Muller
    const u = 1 - rnd();
    const v = rnd();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  };
  const [lo, hi] = shape.balance;
  const logUniform = () => Math.round(Math.exp(Math.log(lo) + rnd() * (Math.log(hi) - Math.log(lo))));
  const median = Math.sqrt(lo * hi);
  const balance = new Map<number, number>();
  for (let u = 1; u <= players; u++) balance.set(u, logUniform());
  let nextUser = players + 1;
  // dupes: distinct players among those present from the start, at rounds after the first
  const dupes: Dupe[] = [];
  const planned = new Map<string, number>();
  const taken = new Set<number>();
  for (const factor of DUPE_FACTORS) {
    for (let i = 0; i < dupesPerFactor; i++) {
      let u: number;
      do u = 1 + Math.floor(rnd() * players);
      while (taken.has(u));
      taken.add(u);
      planned.set(`${u}:${1 + Math.floor(rnd() * (rounds - 1))}`, factor);
    }
  }
  const out: Round[] = [];
  const spacing = (days * 86_400) / rounds;
  for (let r = 0; r < rounds; r++) {
    const seen = new Map<number, number>();
    if (r > 0) {
      // newcomers: as many as the starting players over the window
      const joining = Math.round(players / (rounds - 1));
      for (let i = 0; i < joining; i++) {
        balance.set(nextUser, shape.startingGift);
        seen.set(nextUser, shape.startingGift);
        nextUser++;
      }
    }
    for (const [u, b] of balance) {
      if (seen.has(u)) continue;
      const factor = planned.get(`${u}:${r}`);
      if (factor !== undefined) {
        const to = b * factor;
        dupes.push({ userId: u, round: r, factor, from: b, to });
        balance.set(u, to);
        seen.set(u, to);
        continue;
      }
      if (r === 0) {
        seen.set(u, b);
        continue;
      }
      if (rnd() >= 0.6) continue;
      let next: number;
      if (rnd() < 1 / 3 && b > 1) {
        next = Math.max(1, Math.round(b * (1 - 0.5 * rnd())));
      } else {
        const wealth = Math.pow(Math.max(b, lo) / median, shape.richness);
        let rise = shape.typicalRise * wealth * Math.exp(0.8 * normal());
        if (rnd() < 1 / 40) rise *= 5 + 15 * rnd();
        next = b + Math.max(1, Math.round(rise));
      }
      if (next === b) continue;
      balance.set(u, next);
      seen.set(u, next);
    }
    out.push({ secondsAgo: Math.round((rounds - r) * spacing), balances: seen });
  }
  return { kind, rounds: out, dupes, players: nextUser - 1 };
}
