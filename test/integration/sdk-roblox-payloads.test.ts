import { describe, expect, it } from "vitest";
import { createRobloxServer } from "../support/roblox.js";
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
    expect(relayed).toMatchObject({ message: cutUtf8(fromClient, 1000), stack_trace: cutUtf8(`${longText(6_000)}\n`, 4000), tags: ["client"] });
    expect(message("byte-cut")?.message).toBe(cutUtf8(`byte-cut ${byteCut}`, 1000));
    expect(rows).toHaveLength(3);
  });
});
