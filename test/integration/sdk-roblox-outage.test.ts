import { describe, expect, it } from "vitest";
import { sdkSuite } from "../support/sdk-suite.js";
import { reportedLosses } from "../support/client-reports.js";

/**
 * The Luau SDK through an outage of the service (connections dropped by the proxy, as a wrong URL,
 * DNS or TLS failure would look to RequestAsync), in real Luau on simulated time.
 */
const t = sdkSuite();
const { start, groups, events } = t;

const status = async () => JSON.parse((await t.rbx.run(`return game:GetService("HttpService"):JSONEncode(Monitor.status())`)) as string);
const fire = (name: string, times = 1) => t.rbx.fireError(`ServerScriptService.${name}:1: outage ${name}`, "", `ServerScriptService.${name}`, times);

describe("Roblox SDK when the service cannot be reached", () => {
  it("warns once per outage with the reason, shows it in status(), and says once when it delivers again", async () => {
    expect(await start()).toBe(true);
    t.mode = { kind: "down" };
    for (const name of ["A", "B", "C"]) await fire(name);
    await t.rbx.advance(600);
    expect(t.rbx.requests.length).toBeGreaterThanOrEqual(5);
    expect(t.rbx.requests.every((r) => r.status === "network error")).toBe(true);
    // one warning for the whole outage, naming RequestAsync's error, not one per request
    expect(t.rbx.warnings).toHaveLength(1);
    expect(t.rbx.warnings[0]).toMatch(/cannot deliver to http:\/\/127\.0\.0\.1:\d+: HttpError: ConnectFail/);
    const during = await status();
    // the batch being retried is still queued
    expect(during.queued).toBe(3);
    expect(during.lastError.message).toBe("HttpError: ConnectFail");
    expect(during.lastError.at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(during.failingFor).toBeGreaterThanOrEqual(580);

    t.mode = { kind: "pass" };
    await t.rbx.advance(150);
    expect((await groups()).map((g) => g.message)).toEqual(["A", "B", "C"].map((n) => `ServerScriptService.${n}:1: outage ${n}`));
    expect(t.rbx.warnings).toHaveLength(2);
    expect(t.rbx.warnings[1]).toMatch(/delivered again after \d+ s, 3 events waited/);
    const after = await status();
    expect(after.queued).toBe(0);
    expect(after.failingFor).toBeUndefined();
    expect(after.lastError.message).toBe("HttpError: ConnectFail");
  });

  it("drops a batch that keeps failing past maxRetryTime with one warning and its count, and sends what comes after", async () => {
    expect(await start("maxRetryTime = 120")).toBe(true);
    t.mode = { kind: "down" };
    await fire("A", 3);
    await fire("B");
    await t.rbx.advance(400);
    expect(t.rbx.warnings).toHaveLength(2);
    expect(t.rbx.warnings[1]).toMatch(/a batch failed for \d+ s and was dropped: 2 events \(4 occurrences\) lost\. Last error: HttpError: ConnectFail/);
    expect((await status()).queued).toBe(0);

    t.mode = { kind: "pass" };
    await fire("C");
    await t.rbx.advance(150);
    expect((await groups()).map((g) => g.message)).toEqual(["ServerScriptService.C:1: outage C"]);
    // the loss travels with the next delivered batch, as a full queue's drops do
    expect(reportedLosses(t.rbx.requests)).toEqual({ "error:retry_expired": 4 });
    expect(t.rbx.warnings).toHaveLength(3);
    expect(t.rbx.warnings[2]).toMatch(/delivered again after \d+ s, 1 event waited/);
  });

  it("a batch that keeps getting 503 backs off, is dropped past maxRetryTime, and does not block what comes after", async () => {
    expect(await start("maxRetryTime = 60")).toBe(true);
    t.mode = { kind: "503" };
    await fire("A");
    await t.rbx.advance(200);
    const answered503 = t.rbx.requests.length;
    expect(answered503).toBeGreaterThanOrEqual(3);
    expect(t.rbx.requests.every((r) => r.status === 503)).toBe(true);
    expect(t.rbx.warnings).toHaveLength(2);
    expect(t.rbx.warnings[0]).toMatch(/cannot deliver to .*: HTTP 503/);
    expect(t.rbx.warnings[1]).toMatch(/dropped: 1 event \(1 occurrence\) lost\. Last error: HTTP 503/);

    t.mode = { kind: "pass" };
    await fire("B");
    await t.rbx.advance(150);
    expect((await groups()).map((g) => g.message)).toEqual(["ServerScriptService.B:1: outage B"]);
    expect(t.rbx.warnings).toHaveLength(3);
  });
});
