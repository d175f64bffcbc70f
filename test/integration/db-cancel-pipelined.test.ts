import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSql, type Sql } from "../../db/client.js";
import { freshDatabaseUrl } from "../support/server.js";

/**
 * The database driver (postgres.js, patched: patches/postgres+3.4.9.patch) when a query already
 * written behind another on the same connection is cancelled before its turn, as a request's deadline
 * does. The server still answers that query; its answer must go to it, not to the query after it.
 * One pooled connection (max 1) makes the pipeline certain.
 */
describe("a cancelled query pipelined behind another", () => {
  let databaseUrl: string;
  let sql: Sql;

  beforeAll(async () => {
    databaseUrl = await freshDatabaseUrl();
    sql = createSql(databaseUrl, 1);
  });

  afterAll(async () => {
    await sql?.end();
  });

  const outcome = (p: Promise<unknown>) => p.then((v) => ({ value: v }), (e: { code?: string; message?: string }) => ({ error: e.code ?? e.message }));

  it("takes its own answer, and the query after it gets its own rows", { timeout: 20_000 }, async () => {
    // a prepared statement (its columns known: the server sends its rows without describing them)
    await sql`select ${1}::int as a`;
    const ahead = sql`select pg_sleep(0.3)`.execute();
    const cancelled = sql`select ${2}::int as a`.execute();
    // a new statement with parameters: described first, its columns come with its own answer
    const after = sql`select ${3}::int as b, ${4}::int as c`.execute();
    await new Promise((r) => setTimeout(r, 50));
    void cancelled.cancel();
    const [a, c, b] = await Promise.all([outcome(ahead), outcome(cancelled), outcome(after)]);
    expect(a).toHaveProperty("value");
    // the cancel may reach the server before or after the statement ran: either answer is its own
    expect("value" in c ? { value: [...(c.value as object[])] } : c).toSatisfy(
      (x: unknown) => JSON.stringify(x) === JSON.stringify({ error: "57014" }) || JSON.stringify(x) === JSON.stringify({ value: [{ a: 2 }] }),
    );
    expect("value" in b ? [...(b.value as object[])] : b).toEqual([{ b: 3, c: 4 }]);
    // and the connection goes on answering correctly
    expect([...(await sql`select ${5}::int as d`)]).toEqual([{ d: 5 }]);
  });
});
