import { describe, expect, it } from "vitest";
import { createRobloxServer, notHealth } from "../support/roblox.js";
import { luaString, sdkSuite } from "../support/sdk-suite.js";

/**
 * What the SDK sends is valid UTF-8 and valid JSON whatever the game hands it: long non-ASCII
 * text cut on character boundaries, and context, extra and economy profiles that Roblox's
 * JSONEncode would not encode as JSON objects.
 */
const t = sdkSuite();
const { start, events } = t;

/** The longest prefix of whole characters of `text` that fits in `max` UTF-8 bytes. */
const cutUtf8 = (text: string, max: number) => {
  let out = "";
  for (const ch of text) {
    if (Buffer.byteLength(out + ch) > max) break;
    out += ch;
  }
  return out;
};

// 1 + 7 * k bytes: the server's and the client's limits fall inside a character
const longText = (bytes: number) => "x" + "é日本".repeat(Math.ceil(bytes / 8));

describe("Roblox SDK payloads", () => {
  it("cuts long non-ASCII messages on character boundaries, on the server and from a client", async () => {
    await start();
    await t.rbx.addPlayer(555, "Player555");
    const server = longText(10_000);
    await t.rbx.run(`Monitor.captureMessage(${luaString(server)}, "error") return Monitor.flush(10)`);

    const client = await createRobloxServer({ client: { userId: 555, name: "Player555" } });
    expect(await client.run(`return Monitor.startClient()`)).toBe(true);
    const fromClient = longText(3_000);
    expect(Buffer.byteLength(fromClient)).toBeGreaterThan(3_000);
    await client.fireError(fromClient, `${longText(6_000)}\n`, "Players.Player555.PlayerGui.Hud");
    await client.deliverTo(t.rbx);
    expect(client.threadErrors).toEqual([]);

    // a client that cut by bytes leaves half a character at the end: the relay drops that half
    const byteCut = longText(1_500);
    await t.rbx.run(`
      local remote = game:GetService("ReplicatedStorage"):FindFirstChild("RobloxMonitorClientErrors")
      local player = game:GetService("Players"):FindFirstChild("Player555")
      remote.OnServerEvent:Fire(player, { message = string.sub("byte-cut " .. ${luaString(byteCut)}, 1, 1000) })
    `);
    await t.rbx.advance(1);
    await t.rbx.run(`return Monitor.flush(10)`);

    const rows = await events();
    const message = (start: string) => rows.find((e) => e.message.startsWith(start));
    expect(message("x")?.message).toBe(cutUtf8(server, 8192));
    const relayed = rows.find((e) => e.user_id === "555" && e.message.startsWith("x"));
    expect(relayed).toMatchObject({ message: cutUtf8(fromClient, 1000), stack_trace: cutUtf8(`${longText(6_000)}\n`, 4000), tags: ["origin:client"] });
    expect(message("byte-cut")?.message).toBe(cutUtf8(`byte-cut ${byteCut}`, 1000));
    expect(rows).toHaveLength(3);
  });

  it("sends context that Roblox's JSONEncode would mangle as JSON objects, and keeps a batch with a NaN balance", async () => {
    await start();
    await t.rbx.run(`
      local storage = game:GetService("ReplicatedStorage")
      local cyclic = { name = "loop" }
      cyclic.self = cyclic
      local deep = {}
      local node = deep
      for i = 1, 12 do node.next = {} node = node.next end
      Monitor.setContext(1, "by number")
      Monitor.setContext("mixed", { 10, 20, label = "both" })
      Monitor.captureMessage("array extra", "info", { "a" })
      Monitor.captureMessage("odd values", "info", {
        nan = 0 / 0, inf = math.huge, list = { 1, 0 / 0, 3 }, sparse = { [1] = "a", [3] = "c" },
        keyed = { [true] = "yes", [storage] = "place" }, part = storage, cyclic = cyclic, deep = deep,
      })
      local players = game:GetService("Players")
      for id = 1, 100 do
        local cash = if id == 50 then 0 / 0 elseif id == 51 then -math.huge else id
        Monitor.economy.push({ UserId = id, Name = "p" .. id }, { RPCharacterOne = { Cash = cash, Bag = { 1, 2, x = 3 } } })
      end
      return Monitor.flush(10)
    `);
    expect(t.rbx.requests.filter(notHealth).map((r) => [r.url.replace(/^.*\/api/, ""), r.status])).toEqual([["/ingest", 200], ["/economy/ingest", 200]]);
    const rows = await events();
    const byMessage = Object.fromEntries(rows.map((e) => [e.message, e.context]));
    expect(byMessage["array extra"]).toEqual({ "1": "a", mixed: { "1": 10, "2": 20, label: "both" } });
    const odd = byMessage["odd values"];
    expect(odd).toMatchObject({ "1": "by number", mixed: { "1": 10, "2": 20, label: "both" } });
    // non-finite numbers are left out: a Luau table cannot hold nil, and a reader sees null
    expect(Object.keys(odd)).not.toContain("nan");
    expect(Object.keys(odd)).not.toContain("inf");
    expect(odd.list).toEqual({ "1": 1, "3": 3 });
    expect(odd.sparse).toEqual({ "1": "a", "3": "c" });
    expect(odd.keyed).toEqual({ true: "yes", ReplicatedStorage: "place" });
    expect(odd.part).toBe("ReplicatedStorage");
    expect(odd.cyclic).toEqual({ name: "loop", self: "<cycle>" });
    let node = odd.deep;
    for (let depth = 2; depth <= 10; depth++) node = node.next;
    expect(node).toEqual({ next: "<max depth>" });

    const economy = t.rbx.requests.find((r) => r.url.endsWith("/api/economy/ingest"))!;
    const sent = JSON.parse(economy.body).players;
    expect(sent.find((p: any) => p.user_id === 50).profile.RPCharacterOne.Cash).toBe("NaN");
    expect(sent.find((p: any) => p.user_id === 51).profile.RPCharacterOne.Cash).toBe("-Infinity");
    const stored = await t.app.sql<{ user_id: string; cash: string }[]>`
      select user_id::text, cash::text from economy_snapshots where project_id = ${t.projectId} order by user_id::bigint`;
    expect(stored).toHaveLength(100);
    expect(stored.filter((p) => ["49", "50", "51"].includes(p.user_id))).toEqual([
      { user_id: "49", cash: "49" },
      { user_id: "50", cash: "0" },
      { user_id: "51", cash: "0" },
    ]);
  });

  it("does not capture again the warnings its own beforeSend prints, while the game's warnings are still captured", async () => {
    await start(`captureWarnings = true, beforeSend = function(event)
      warn("beforeSend saw " .. event.message)
      return event
    end`);
    await t.rbx.run(`warn("low health") task.wait() warn("shop closed") task.wait(1) return Monitor.flush(10)`);
    // each game warning once: beforeSend's own "beforeSend saw …" lines are not events, and do not loop
    expect((await events()).map((e) => [e.message, e.count])).toEqual([
      ["low health", 1],
      ["shop closed", 1],
    ]);
  });
});
