import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import postgres from "postgres";
import { afterAll, describe, expect, it } from "vitest";
import { freeLoopbackPort, startEmbeddedPostgres, type EmbeddedServer } from "../../db/embedded.js";

/**
 * The test runs start their embedded server on a port the system picks. A picked port can be taken
 * before the server binds it (the local end of an outgoing connection takes ports from the same
 * range), which once failed a whole run: the start then picks another port.
 */
describe("embedded PostgreSQL on a free port", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "rbx-monitor-embedded-port-"));
  let server: EmbeddedServer | undefined;
  const holder = net.createServer();

  afterAll(async () => {
    await server?.stop();
    await new Promise((r) => holder.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it("picks another port when the first one is taken by the time the server binds it", async () => {
    await new Promise<void>((r) => holder.listen(0, "127.0.0.1", r));
    const taken = (holder.address() as net.AddressInfo).port;
    const picked: number[] = [];
    const pick = async () => {
      const port = picked.length === 0 ? taken : await freeLoopbackPort();
      picked.push(port);
      return port;
    };

    server = await startEmbeddedPostgres(dir, "free", pick);

    expect(picked).toHaveLength(2);
    expect(picked[0]).toBe(taken);
    expect(new URL(server.url).port).toBe(String(picked[1]));
    const sql = postgres(server.url, { max: 1, onnotice: () => {} });
    try {
      expect(await sql`select 1 as one`).toEqual([{ one: 1 }]);
    } finally {
      await sql.end();
    }
  }, 120_000);
});
