import { isConnectionLoss, type Sql } from "./client.js";
import { log as processLog } from "../log/logger.js";

/** How often the replica's replay position is compared with the primary's. */
export const REPLICA_PROBE_MS = 1_000;

// samples kept while the replica falls behind (one a probe): past this the newest is overwritten,
// which only makes the lag read higher than it is
const MAX_SAMPLES = 3_600;

/** An LSN as PostgreSQL prints it (`16/B374D848`), as a number that orders like it. */
export const lsnValue = (lsn: string): bigint => {
  const [hi, lo] = lsn.split("/");
  return (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`);
};

// errors of a read on the replica that the primary answers: the replica could not be reached or
// lost the connection; recovery cancelled the query (a conflict with replayed WAL: 40001, 40P01);
// a statement that writes (25006: a read-only transaction), which only the primary can run
const REPLICA_ONLY_FAULTS = new Set(["40001", "40P01", "25006"]);
const isReplicaFault = (err: unknown) =>
  isConnectionLoss(err) || (typeof err === "object" && err !== null && REPLICA_ONLY_FAULTS.has(String((err as { code?: unknown }).code)));

export type ReplicaState = {
  /** reads go to the replica now */
  serving: boolean;
  /** how far the replica's replay is behind the primary's WAL, in ms; null while it cannot be measured */
  lagMs: number | null;
  /** why it does not serve (unreachable, behind, not a standby), when it does not */
  reason: string | null;
};

/**
 * A PostgreSQL streaming replica of the primary, for reads. Every `REPLICA_PROBE_MS` it reads the
 * primary's WAL position and the replica's replay position: the replica lags by the age of the
 * oldest primary position it has not replayed yet. Reads go to the replica while that is within
 * `maxLagMs` (see state()); otherwise, while it cannot be reached, or when it is not a
 * standby (promoted, or another server), they go to the primary. A read that fails on the replica
 * for a reason the primary does not share (a lost connection, a recovery conflict) runs again on the
 * primary, and a lost connection sets the replica aside until the next probe reaches it.
 */
export class Replica {
  private samples: { at: number; lsn: bigint }[] = [];
  private lastProbeAt = 0;
  private lagMs: number | null = null;
  private reason: string | null = "not probed yet";
  private timer: NodeJS.Timeout | undefined;
  private probing: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly primary: Sql,
    /** the replica's pool */
    readonly sql: Sql,
    private readonly maxLagMs: number,
    private readonly log: (message: string) => void = (m) => processLog.error(m),
  ) {}

  /** Probes once (so the first request already knows where to go), then every REPLICA_PROBE_MS. */
  async start(): Promise<void> {
    await this.probe();
    const { reason } = this.state();
    if (reason) this.log(`[db] replica not serving reads yet: ${reason}; reads go to the primary`);
    this.timer = setInterval(() => void this.probe(), REPLICA_PROBE_MS);
    this.timer.unref();
  }

  state(now = Date.now()): ReplicaState {
    // The replica may have fallen behind since the last probe answered: serve while the lag it had
    // plus the time since stays within the bound (two probe periods of slack for the sampling). So a
    // read served here has every write committed before maxLagMs + 3 probe periods ago.
    const since = now - this.lastProbeAt;
    const stale = (this.lagMs ?? 0) + since > this.maxLagMs + 2 * REPLICA_PROBE_MS;
    const reason = this.reason ?? (stale ? `no probe has answered for ${Math.round(since / 1000)} s` : null);
    return { serving: reason === null, lagMs: this.lagMs, reason };
  }

  /** Runs `fn` on the replica when it serves, else on the primary; see the class comment for faults. */
  async read<T>(fn: (sql: Sql) => Promise<T>): Promise<T> {
    if (!this.state().serving) return fn(this.primary);
    try {
      return await fn(this.sql);
    } catch (err) {
      if (!isReplicaFault(err)) throw err;
      if (isConnectionLoss(err)) this.setAside(`unreachable (${(err as Error).message})`);
      // a read that writes belongs on the primary: answer it there, and say so
      else if ((err as { code?: unknown }).code === "25006") this.log(`[db] a read routed to the replica writes; ran it on the primary: ${(err as Error).message}`);
      return fn(this.primary);
    }
  }

  private setAside(reason: string) {
    if (this.reason === null) this.log(`[db] replica not serving reads: ${reason}`);
    this.reason = reason;
  }

  private probe(): Promise<void> {
    // one probe at a time: a replica that stalls must not pile them up
    return (this.probing ??= this.measure().finally(() => (this.probing = undefined)));
  }

  private async measure(): Promise<void> {
    if (this.closed) return;
    const now = Date.now();
    try {
      const [p] = await this.primary<{ lsn: string }[]>`select pg_current_wal_lsn()::text as lsn`;
      const lsn = lsnValue(p.lsn);
      const last = this.samples.at(-1);
      // an idle primary adds no samples; a replica that stays behind is measured from its oldest
      if (!last || last.lsn < lsn) {
        if (!last || this.samples.length < MAX_SAMPLES) this.samples.push({ at: now, lsn });
        else last.lsn = lsn;
      }
    } catch {
      // the primary's own faults are the requests' business; the replica is measured next time
      return;
    }
    let replayed: { lsn: string | null; standby: boolean };
    try {
      [replayed] = await this.sql<{ lsn: string | null; standby: boolean }[]>`
        select pg_last_wal_replay_lsn()::text as lsn, pg_is_in_recovery() as standby`;
    } catch (err) {
      this.lagMs = null;
      this.setAside(`unreachable (${(err as Error).message})`);
      return;
    }
    if (!replayed.standby || replayed.lsn === null) {
      this.lagMs = null;
      this.setAside("it is not a standby (promoted, or not a replica of DATABASE_URL)");
      return;
    }
    const at = lsnValue(replayed.lsn);
    while (this.samples.length && this.samples[0].lsn <= at) this.samples.shift();
    const done = Date.now();
    this.lagMs = this.samples.length ? done - this.samples[0].at : 0;
    this.lastProbeAt = done;
    if (this.lagMs > this.maxLagMs) {
      this.setAside(`its replay is ${Math.round(this.lagMs / 1000)} s behind the primary`);
    } else if (this.reason !== null) {
      if (this.reason !== "not probed yet") this.log("[db] replica serving reads again");
      this.reason = null;
    }
  }

  async close(waitSeconds: number): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.probing?.catch(() => {});
    await this.sql.end({ timeout: waitSeconds });
  }
}
