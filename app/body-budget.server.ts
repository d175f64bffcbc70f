/**
 * The bytes of request bodies this process holds at once: as sent, as decoded, and while they are
 * parsed. Every body reader reserves before it reads a byte and gives its bytes back when it is
 * done, also when it fails or the client goes away. Past the budget a request is answered 503 with
 * Retry-After before its body is read, so a crowd of requests (or of decompression bombs) costs at
 * most the budget in memory, however many arrive at once; each one alone is still held to its
 * route's limit.
 *
 * Only what is held counts: a body larger than the budget itself can never be read, so the limits
 * of the routes should stay well under it.
 */
export class BodyBudget {
  private used = 0;

  constructor(readonly capacity: number) {}

  /** bytes held now */
  get inUse(): number {
    return this.used;
  }

  /** A hold of `bytes`, or undefined when they would take the process past its budget. */
  reserve(bytes: number): BodyHold | undefined {
    if (!this.take(bytes)) return undefined;
    return new BodyHold(this, bytes);
  }

  /** @internal */
  take(bytes: number): boolean {
    if (bytes > 0 && this.used + bytes > this.capacity) return false;
    this.used += bytes;
    return true;
  }

  /** @internal */
  give(bytes: number): void {
    this.used -= bytes;
  }
}

/** One request's share of the budget: it grows as decoding produces bytes and is released once. */
export class BodyHold {
  private released = false;

  constructor(
    private readonly budget: BodyBudget,
    private held: number,
  ) {}

  get bytes(): number {
    return this.held;
  }

  /** Adds `bytes`; false (and nothing added) when the process's budget has no room for them. */
  grow(bytes: number): boolean {
    if (this.released) return false;
    if (!this.budget.take(bytes)) return false;
    this.held += bytes;
    return true;
  }

  /** Gives back what is held beyond `bytes` (the part of a reservation a body did not use). */
  shrinkTo(bytes: number): void {
    if (this.released || bytes >= this.held) return;
    this.budget.give(this.held - bytes);
    this.held = bytes;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.budget.give(this.held);
    this.held = 0;
  }
}
