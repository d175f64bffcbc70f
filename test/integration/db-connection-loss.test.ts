import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSql, type Sql } from "../../db/client.js";
import { connect, freshDatabaseUrl } from "../support/server.js";

/**
 * The database driver (postgres.js, patched: patches/postgres+3.4.9.patch) after a backend is
 * terminated. One pooled connection (max 1) makes the reuse of the connection object certain: what
 * the pool does with ten connections under load, now and then.
 */
describe("a terminated backend and the connection that replaces it", () => {
  let databaseUrl: string;
  let admin: Sql;

  beforeAll(async () => {
    databaseUrl = await freshDatabaseUrl();
    admin = connect(databaseUrl);
    await admin`create table marks (v text not null)`;
  });

  afterAll(async () => {
    await admin?.end();
  });

  const terminate = (pid: number) => admin`select pg_terminate_backend(${pid})`;
  const errorCode = (p: Promise<unknown>) => p.then(() => "resolved", (e: { code?: string }) => e.code ?? String(e));

  it("the first query on the new connection gets its own answer, not the old backend's error", async () => {
    const sql = createSql(databaseUrl, 1);
    try {
      const [{ pid }] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
      const sleeping = errorCode(sql`select pg_sleep(30)`.execute());
      // the sleep is running on the backend before it is terminated
      for (let i = 0; i < 100; i++) {
        const [row] = await admin<{ n: number }[]>`select count(*)::int as n from pg_stat_activity where pid = ${pid} and query like '%pg_sleep%' and state = 'active'`;
        if (row.n === 1) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      await terminate(pid);
      expect(["57P01", "CONNECTION_CLOSED"]).toContain(await sleeping);
      // before the fix: rejected with the old backend's 57P01 FATAL, kept across the reconnect
      const [{ one }] = await sql<{ one: number }[]>`select 1 as one`;
      expect(one).toBe(1);
    } finally {
      await sql.end({ timeout: 5 });
    }
  });

  it("a transaction whose connection was lost can send nothing more: its late statements and commit fail, the next transaction is untouched", async () => {
    await admin`truncate marks`;
    const sql = createSql(databaseUrl, 1);
    try {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let pid = 0;
      let atGate = false;
      const late: Promise<string>[] = [];
      const first = sql.begin(async (tx) => {
        [{ pid }] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
        await tx`insert into marks values ('first, before the loss')`;
        atGate = true;
        await gate; // other work (not the database) while the backend is terminated
        late.push(errorCode(tx`insert into marks values ('first, after the loss')`.execute()));
        await late[0];
      });
      const firstOutcome = errorCode(first);
      // the backend is terminated only once the first insert has its answer and the callback waits
      while (!atGate) await new Promise((r) => setTimeout(r, 10));
      await terminate(pid);
      expect(await firstOutcome).toBe("CONNECTION_CLOSED");

      // the pool reconnects the same connection object for the next transaction; the first one's
      // callback resumes in the middle of it (its statement, then its own commit or rollback)
      await sql.begin(async (tx) => {
        await tx`insert into marks values ('second, a')`;
        release();
        await new Promise((r) => setTimeout(r, 100));
        await tx`insert into marks values ('second, b')`;
      });
      expect(await late[0]).toBe("CONNECTION_CLOSED");

      // before the fix: the first transaction's late insert and its commit ran inside the second
      // one (committing it half-way), so 'first, after the loss' was stored though the first
      // transaction had been reported failed
      const rows = await admin<{ v: string }[]>`select v from marks order by v`;
      expect(rows.map((r) => r.v)).toEqual(["second, a", "second, b"]);
      const [{ n }] = await sql<{ n: number }[]>`select count(*)::int as n from marks`;
      expect(n).toBe(2);
    } finally {
      await sql.end({ timeout: 5 });
    }
  });
});
