import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSql, type Sql } from "../../db/client.js";
import { migrate } from "../../db/migrate.js";
import { insertProject } from "../../db/projects.js";
import { CommitUnknownError, NotCommittedError, transaction } from "../../db/transaction.js";
import { EventWriter } from "../../app/ingest/writer.server.js";
import { connect, freshDatabaseUrl } from "../support/server.js";
import { eventRow } from "../support/event-row.js";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.js";

/**
 * The connection is lost around COMMIT: the client cannot tell from its socket whether the
 * transaction committed. A proxy between the service's pool and PostgreSQL cuts the client's side
 * exactly when COMMIT passes, either after handing it on (the server commits) or instead of it
 * (the backend is left waiting in its transaction).
 */
describe("a connection lost around COMMIT", () => {
  let databaseUrl: string;
  let admin: Sql;
  let proxy: TcpProxy;
  let sql: Sql;

  beforeAll(async () => {
    databaseUrl = await freshDatabaseUrl();
    admin = connect(databaseUrl);
    await migrate(admin);
    await admin`create table marks (v text not null)`;
    const u = new URL(databaseUrl);
    proxy = await startTcpProxy({ host: u.hostname, port: Number(u.port || 5432) });
    sql = createSql(proxy.via(databaseUrl), 4);
  });

  afterAll(async () => {
    await sql?.end({ timeout: 1 });
    await proxy?.close();
    await admin?.end();
  });

  const marks = async (v: string) => (await admin<{ n: number }[]>`select count(*)::int as n from marks where v = ${v}`)[0].n;

  it("COMMIT reached the server: the transaction resolves with its value, as committed", async () => {
    const cut = proxy.cutOnCommit({ deliver: true });
    const value = await transaction(sql, async (tx) => {
      await tx`insert into marks values ('delivered')`;
      return "the callback's value";
    });
    await cut;
    expect(value).toBe("the callback's value");
    expect(await marks("delivered")).toBe(1);
  });

  it("COMMIT never reached the server: its backend is ended and the transaction reports it did not commit", async () => {
    const cut = proxy.cutOnCommit({ deliver: false });
    const outcome = transaction(sql, async (tx) => {
      await tx`insert into marks values ('withheld')`;
    }).then(
      () => "resolved",
      (e: unknown) => (e instanceof NotCommittedError ? "not committed" : e instanceof CommitUnknownError ? "unknown" : String(e)),
    );
    await cut;
    expect(await outcome).toBe("not committed");
    expect(await marks("withheld")).toBe(0);
    // the backend that waited in the transaction was terminated, not left holding its locks
    const [{ n }] = await admin<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'`;
    expect(n).toBe(0);
  });

  describe("the ingest writer", () => {
    let projectId: string;
    const row = (message: string, traceId: string | null = null) => eventRow(projectId, `fp-${message}`, { message, traceId });

    beforeAll(async () => {
      ({ id: projectId } = await insertProject(admin, "Commit outcomes"));
    });

    const counted = async () =>
      (await admin<{ n: number }[]>`select coalesce(sum(count), 0)::int as n from error_groups where project_id = ${projectId}`)[0].n;
    const storedRows = async () => (await admin<{ n: number }[]>`select count(*)::int as n from events where project_id = ${projectId}`)[0].n;

    it("requests sharing a transaction whose COMMIT landed are acknowledged once, never written again", async () => {
      const writer = new EventWriter(sql, { throttle: { limit: 1000, windowSeconds: 60 }, shards: 1, concurrency: 1, maxEventsPerWrite: 5000, timeoutMs: 10_000 });
      // the first submission occupies the one writer; the next five queue and share one transaction
      // the first transaction's COMMIT passes, the shared one's is cut
      const cut = proxy.cutOnCommit({ deliver: true, skip: 1 });
      const first = writer.submit([row("first")]);
      const shared = Array.from({ length: 5 }, (_, i) => writer.submit([row(`shared ${i}`), row(`shared ${i}`)]));
      const answers = await Promise.allSettled([first, ...shared]);
      await cut;
      // before: the shared transaction's lost COMMIT made each request be written again on its own,
      // so each of them was counted twice, or a lone request answered an error though it had committed
      expect(answers.map((a) => a.status)).toEqual(Array(6).fill("fulfilled"));
      expect(await counted()).toBe(11);
      expect(await storedRows()).toBe(11);
    });

    it("a transaction whose COMMIT was lost before the server got it is written again, once", async () => {
      await admin`delete from events where project_id = ${projectId}`;
      await admin`delete from error_groups where project_id = ${projectId}`;
      const writer = new EventWriter(sql, { throttle: { limit: 1000, windowSeconds: 60 }, shards: 1, concurrency: 1, maxEventsPerWrite: 5000, timeoutMs: 10_000 });
      const cut = proxy.cutOnCommit({ deliver: false });
      const answers = await Promise.allSettled(Array.from({ length: 4 }, (_, i) => writer.submit([row(`again ${i}`, crypto.randomUUID())])));
      await cut;
      expect(answers.map((a) => a.status)).toEqual(Array(4).fill("fulfilled"));
      expect(await counted()).toBe(4);
      expect(await storedRows()).toBe(4);
    });
  });
});
