import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { sdkSuite } from "../support/sdk-suite.js";
import { notHealth } from "../support/roblox.js";
import { reportedLosses, reportOf } from "../support/client-reports.js";
import { scriptedProxy, type Scripted } from "../support/scripted-proxy.js";

/**
 * How the Luau SDK sends, retries, refuses, reports what it lost and shuts down, in real Luau
 * against the real service. In front of the service, a proxy whose answers the test scripts per
 * request (a WAF's 403, a 400 naming events, a 413, a 409, 503s on one path), passing the rest on.
 */
const t = sdkSuite();
const { start, groups, events } = t;

/** Decides the answer to a request (path, parsed JSON body); undefined passes it to the service. */
let answer: (path: string, body: any) => Scripted = () => undefined;
let proxy: Awaited<ReturnType<typeof scriptedProxy>>;

beforeAll(async () => {
  proxy = await scriptedProxy(() => t.app.url, (path, body) => answer(path, body));
  // the suite's own proxy is replaced by the scripted one
  t.proxyUrl = proxy.url;
});
afterAll(async () => {
  await proxy?.close();
});
beforeEach(() => {
  answer = () => undefined;
});

const pathOf = (r: { url: string }) => new URL(r.url).pathname;
const ingest = () => t.rbx.requests.filter((r) => pathOf(r) === "/api/ingest");
const fire = (name: string, times = 1) =>
  t.rbx.fireError(
    `ServerScriptService.${name}:1: ${name} failed`,
    "",
    `ServerScriptService.${name}`,
    times
  );
const messages = async () => (await groups()).map((g) => g.message);
const snapshots = async () =>
  (
    await t.app.sql<
      { user_id: string }[]
    >`select user_id::text from economy_snapshots where project_id = ${t.projectId} order by user_id`
  ).map((s) => s.user_id);
const dropped = async () =>
  JSON.parse(
    (await t.rbx.run(
      `return game:GetService("HttpService"):JSONEncode(Monitor.status().dropped)`
    )) as string
  );
const pushOnLeave = `
  game:GetService("Players").PlayerRemoving:Connect(function(player)
    Monitor.economy.push(player, { Data = { RPCharacterOne = { Cash = player.UserId } } })
  end)`;

describe("Roblox SDK requests", () => {
  it("gives every request a Timeout, so a hung connection fails after 15 s and not the engine's 30", async () => {
    expect(await start("", { httpLatency: 40 })).toBe(true);
    await fire("Hung");
    // the first attempt goes at the 10 s flush; 15 s later it has failed
    await t.rbx.advance(26);
    expect(t.rbx.warnings).toHaveLength(1);
    expect(t.rbx.warnings[0]).toMatch(
      /cannot deliver to .*: HttpError: Timedout/
    );
    await t.rbx.run(`mock.setHttpLatency(0.1)`);
    await t.rbx.advance(60);
    expect(await messages()).toEqual([
      "ServerScriptService.Hung:1: Hung failed",
    ]);
  });
});

describe("Roblox SDK shutdown", () => {
  it("makes one last attempt when the server closes during a long back-off: the queue and the PlayerRemoving snapshot are delivered", async () => {
    expect(await start()).toBe(true);
    await t.rbx.run(pushOnLeave);
    await t.rbx.addPlayer(5001, "Leaver");
    answer = () => ({ status: 503 });
    await fire("Outage");
    for (let s = 0; s < 600 && t.rbx.requests.length < 7; s++)
      await t.rbx.advance(1);
    expect(t.rbx.requests.map((r) => r.status)).toEqual(Array(7).fill(503));
    // the service is back, and the SDK's back-off runs for a minute or so more
    answer = () => undefined;
    await t.rbx.advance(1);
    expect(await t.rbx.shutdown()).toBe(true);
    expect(await messages()).toEqual([
      "ServerScriptService.Outage:1: Outage failed",
    ]);
    expect(await snapshots()).toEqual(["5001"]);
  });

  it("sends economy beside errors at shutdown: 8 s a request and 400 errors queued, both leaving players' snapshots land", async () => {
    expect(await start("", { httpLatency: 8 })).toBe(true);
    await t.rbx.run(pushOnLeave);
    await t.rbx.addPlayer(5101, "One");
    await t.rbx.addPlayer(5102, "Two");
    for (let i = 0; i < 400; i++) await fire(`Script${i}`);
    expect(await t.rbx.shutdown()).toBe(true);
    expect(await snapshots()).toEqual(["5101", "5102"]);
    // the errors went on meanwhile: at least the first batches
    expect((await groups()).length).toBeGreaterThanOrEqual(100);
  });

  it("counts what is still queued when the server closes as unsent_at_close, in status()", async () => {
    expect(await start()).toBe(true);
    answer = () => ({ status: 503 });
    await t.rbx.run(`
      game:BindToClose(function()
        task.wait(27)
        print("dropped at close: " .. game:GetService("HttpService"):JSONEncode(Monitor.status().dropped))
      end)
    `);
    await fire("Never", 3);
    await fire("Either");
    expect(await t.rbx.shutdown()).toBe(true);
    const line = t.rbx.prints.find((p) => p.startsWith("dropped at close: "));
    expect(
      JSON.parse(line?.slice("dropped at close: ".length) ?? "null")
    ).toEqual({ "error:unsent_at_close": 4 });
  });
});

describe("Roblox SDK lanes", () => {
  it("keeps errors going while an economy batch is stuck, and economy while errors are", async () => {
    expect(await start()).toBe(true);
    answer = (path) =>
      path === "/api/economy/ingest" ? { status: 503 } : undefined;
    await t.rbx.run(
      `Monitor.economy.push({ UserId = 61, Name = "p61" }, { RPCharacterOne = { Cash = 1 } })`
    );
    await t.rbx.advance(30);
    await fire("First");
    await t.rbx.advance(60);
    expect(await messages()).toEqual([
      "ServerScriptService.First:1: First failed",
    ]);
    expect(await snapshots()).toEqual([]);

    answer = (path) => (path === "/api/ingest" ? { status: 503 } : undefined);
    await fire("Second");
    await t.rbx.advance(200);
    expect(await snapshots()).toEqual(["61"]);
    expect(await messages()).toEqual([
      "ServerScriptService.First:1: First failed",
    ]);
    answer = () => undefined;
    await t.rbx.advance(200);
    expect(await messages()).toEqual([
      "ServerScriptService.First:1: First failed",
      "ServerScriptService.Second:1: Second failed",
    ]);
  });
});

describe("Roblox SDK refusals", () => {
  it("goes on after a 403 from something in front of the service, with one warning, and delivers what waited", async () => {
    expect(await start()).toBe(true);
    let refused = 0;
    answer = (path) =>
      path !== "/api/health" && refused++ === 0
        ? { status: 403, body: "<html><body>Request blocked</body></html>" }
        : undefined;
    await fire("A");
    await t.rbx.advance(12);
    expect(t.rbx.requests.filter(notHealth).map((r) => r.status)).toEqual([403]);
    await fire("B");
    await t.rbx.advance(400);
    expect(await messages()).toEqual(
      ["A", "B"].map((n) => `ServerScriptService.${n}:1: ${n} failed`)
    );
    expect(t.rbx.warnings).toHaveLength(1);
    expect(t.rbx.warnings[0]).toMatch(
      /the API key was refused \(HTTP 403: <html>/
    );
    expect(await t.rbx.run(`return Monitor.status().running`)).toBe(true);
  });

  it("on a 400 naming events drops exactly those (counted refused), and sends the rest at once with a new key", async () => {
    expect(await start()).toBe(true);
    let refusals = 0;
    answer = (path, body) =>
      path === "/api/ingest" && refusals++ === 0
        ? {
            status: 400,
            body: {
              error: "invalid_payload",
              message: "Invalid event",
              details: [
                { path: "errors[1].message", message: "bad" },
                { path: "errors[3].level", message: "bad" },
              ],
            },
          }
        : undefined;
    await fire("A");
    await fire("B", 5);
    await fire("C");
    await fire("D", 2);
    await fire("E");
    await t.rbx.advance(11);
    const [first, second, ...rest] = ingest();
    expect(rest).toEqual([]);
    expect([first.status, second.status]).toEqual([400, 200]);
    expect(second.headers["idempotency-key"]).not.toBe(
      first.headers["idempotency-key"]
    );
    expect(second.at - first.at).toBeLessThan(1);
    expect(await messages()).toEqual(
      ["A", "C", "E"].map((n) => `ServerScriptService.${n}:1: ${n} failed`)
    );
    expect(await dropped()).toEqual({ "error:refused": 7 });
    await t.rbx.run(
      `Monitor.captureMessage("carries the report", "info") return Monitor.flush(10)`
    );
    expect(reportedLosses(t.rbx.requests)).toEqual({ "error:refused": 7 });
  });

  it("drops a batch refused with no usable details (counted), and reports it alone when no batch is going", async () => {
    expect(await start()).toBe(true);
    let refusals = 0;
    let reportsAlone = 0;
    answer = (path) =>
      path === "/api/ingest" && refusals++ === 0
        ? { status: 400, body: "<html>Bad Request</html>" }
        : // a service without the client-reports endpoint (older, or behind a proxy that lacks the route)
          path === "/api/client-reports" && reportsAlone++ === 0
          ? { status: 404, body: { error: "not_found", message: "Not found." } }
          : undefined;
    await fire("A", 3);
    await fire("B");
    await t.rbx.advance(11);
    expect(await groups()).toEqual([]);
    expect(await dropped()).toEqual({ "error:refused": 4 });
    // no errors batch goes: the report goes alone by the next flush, with a key; a 404 leaves the
    // counts for a later try, a minute on
    await t.rbx.advance(10);
    const alone = () => t.rbx.requests.filter((r) => pathOf(r) === "/api/client-reports");
    expect(alone()).toHaveLength(1);
    expect(alone()[0].status).toBe(404);
    expect(alone()[0].headers["idempotency-key"]).toMatch(/^[0-9A-F-]{36}$/i);
    expect(reportOf(alone()[0])?.discarded_events).toEqual([{ reason: "refused", category: "error", quantity: 4 }]);
    expect(reportOf(alone()[0])?.last_warning?.message).toMatch(/refused a batch/);
    await t.rbx.advance(70);
    expect(alone()).toHaveLength(2);
    expect(alone()[1].status).toBe(200);
    expect(reportOf(alone()[1])?.discarded_events).toEqual([{ reason: "refused", category: "error", quantity: 4 }]);
    // the service counted it, once
    expect(await t.app.sql`select category, reason, quantity::int from sdk_discards where project_id = ${t.projectId}`).toEqual([
      { category: "error", reason: "refused", quantity: 4 },
    ]);
    // delivered: the next batch carries nothing
    await t.rbx.run(`Monitor.captureMessage("no report", "info") return Monitor.flush(10)`);
    expect(ingest().slice(-1)[0].status).toBe(200);
    expect(JSON.parse(ingest().slice(-1)[0].body).client_report).toBeUndefined();
  });

  it("splits a batch answered 413 in halves, drops a single event answered 413 as too_large, and resends a 409 once with a new key", async () => {
    expect(await start()).toBe(true);
    answer = (path, body) => {
      if (path !== "/api/ingest") return undefined;
      const errors: { message: string }[] = body?.errors ?? [];
      if (errors.length > 2 || errors.some((e) => e.message.includes("Huge")))
        return {
          status: 413,
          body: { error: "payload_too_large", message: "Too large" },
        };
      return undefined;
    };
    for (const name of ["A", "B", "C", "Huge", "D"])
      await fire(name, name === "Huge" ? 3 : 1);
    await t.rbx.advance(11);
    expect(await messages()).toEqual(
      ["A", "B", "C", "D"].map((n) => `ServerScriptService.${n}:1: ${n} failed`)
    );
    expect(await dropped()).toEqual({ "error:too_large": 3 });

    let conflicts = 0;
    answer = (path) =>
      path === "/api/ingest" && conflicts++ === 0
        ? {
            status: 409,
            body: { error: "idempotency_conflict", message: "Key reused" },
          }
        : undefined;
    await fire("E");
    await t.rbx.advance(11);
    const [conflict, again] = ingest().slice(-2);
    expect([conflict.status, again.status]).toEqual([409, 200]);
    expect(again.headers["idempotency-key"]).not.toBe(
      conflict.headers["idempotency-key"]
    );
    expect((await messages()).at(-1)).toBe("ServerScriptService.E:1: E failed");
  });

  it("freezes the report with its batch across retries: one key, one body, counted once when answered", async () => {
    expect(await start("maxQueueSize = 2")).toBe(true);
    let failures = 0;
    answer = (path) =>
      path === "/api/ingest" && failures++ < 2 ? { status: 503 } : undefined;
    // a full queue drops A; the batch of B and C carries the loss
    await fire("A");
    await fire("B");
    await fire("C");
    await t.rbx.advance(60);
    const carrying = ingest().filter((r) => JSON.parse(r.body).client_report);
    expect(carrying.map((r) => r.status)).toEqual([503, 503, 200]);
    expect(
      new Set(carrying.map((r) => r.headers["idempotency-key"])).size
    ).toBe(1);
    expect(new Set(carrying.map((r) => r.body)).size).toBe(1);
    expect(JSON.parse(carrying[0].body).client_report.discarded_events).toEqual(
      [{ reason: "queue_overflow", category: "error", quantity: 1 }]
    );
    expect(reportedLosses(t.rbx.requests)).toEqual({
      "error:queue_overflow": 1,
    });
    expect(await messages()).toEqual(
      ["B", "C"].map((n) => `ServerScriptService.${n}:1: ${n} failed`)
    );
    // nothing is counted twice (the next batch carries only the newer warning: delivered again),
    // and status() keeps the totals since init
    await t.rbx.run(
      `Monitor.captureMessage("no report", "info") return Monitor.flush(10)`
    );
    const next = JSON.parse(ingest().slice(-1)[0].body).client_report;
    expect(next.discarded_events).toEqual([]);
    expect(next.last_warning.message).toMatch(/delivered again after/);
    expect(await dropped()).toEqual({ "error:queue_overflow": 1 });
    expect((await events()).every((e) => e.context?.sdk === undefined)).toBe(
      true
    );
  });
});
