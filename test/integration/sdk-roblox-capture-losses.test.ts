import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { LuauState } from "luau-web";
import { bundleSdk } from "../../app/sdk/bundle.js";
import { readSdkSources } from "../../app/sdk/sources.server.js";

/**
 * Every occurrence dropped at capture is counted by reason (State.lose), with one warning for
 * capture failures however many there are. Runs the SDK's own Capture and State modules in real
 * Luau on the test engine: the counts are read from the state they share (no request is made).
 */
const root = path.resolve(import.meta.dirname, "../..");

async function captureModules() {
  const warnings: string[] = [];
  const threadErrors: string[] = [];
  const host = {
    epochMs: Date.now(),
    warn: (m: string) => void warnings.push(m),
    print: () => {},
    threadError: (m: string) => void threadErrors.push(m),
    fireServer: () => {},
    request: async () => [false, "ConnectFail"],
  };
  const state = await LuauState.createAsync({ __host: host });
  const [mock] = (await state.loadstring(readFileSync(path.join(root, "test/sdk/roblox-mock.luau"), "utf8"), "=RobloxMock", true)()) as [any];
  const sources = { ...readSdkSources(root), init: `--!strict\nreturn { State = require(script.State), Capture = require(script.Capture) }` };
  const sdk = state.loadstring(bundleSdk(sources, "test"), "=ReplicatedStorage.RobloxMonitor", true);
  await mock.bind(sdk, "ReplicatedStorage.RobloxMonitor", "ModuleScript");
  const [modules] = (await sdk()) as [unknown];
  return {
    warnings,
    threadErrors,
    run: async (source: string) => {
      const chunk = state.loadstring(`local State, Capture = (...).State, (...).Capture\n${source}`, "=ServerScriptService.Test", true);
      await mock.bind(chunk, "ServerScriptService.Test");
      const [result] = (await mock.spawn(chunk, modules)) as [any];
      for (let waited = 0; !result.done && waited < 10; waited += 0.1) await mock.advance(0.1);
      return result.value as unknown;
    },
  };
}

describe("Roblox SDK capture", () => {
  it("counts every occurrence it drops, by reason, and warns once however often capturing fails", async () => {
    const rbx = await captureModules();
    const counted = await rbx.run(`
      local HttpService = game:GetService("HttpService")
      local function newState(options)
        options.url = "http://127.0.0.1:1"
        return State.new(options, HttpService, "key", Capture.baseEvent(options, false), "ReplicatedStorage.RobloxMonitor", {}, {} :: any)
      end
      local function capture(st, message)
        return Capture.enqueue(st, function()
          return Capture.build(st, message, "error", nil, nil)
        end)
      end
      local sampled = newState({ sampleRate = 0 })
      for _ = 1, 3 do capture(sampled, "sampled") end
      local st
      st = newState({ ignoreErrors = { "ignored" }, beforeSend = function(event)
        if event.message == "vetoed" then return nil end
        if event.message == "recursive" then capture(st, "inside beforeSend") end
        return event
      end })
      for _ = 1, 2 do capture(st, "ignored here") end
      for _ = 1, 4 do capture(st, "vetoed") end
      capture(st, "recursive")
      for _ = 1, 5 do
        Capture.enqueue(st, function() error("build failed") end)
      end
      local function counts(s)
        local out = {}
        for key, n in s.losses do table.insert(out, key .. "=" .. n) end
        table.sort(out)
        return table.concat(out, " ")
      end
      return counts(sampled) .. " | " .. counts(st)
    `);
    expect(counted).toBe("error:sample_rate=3 | error:before_send=5 error:ignored=2 error:internal_sdk_error=5");
    expect(rbx.warnings.filter((w) => w.includes("could not capture an event"))).toHaveLength(1);
    expect(rbx.threadErrors).toEqual([]);
  });
});
