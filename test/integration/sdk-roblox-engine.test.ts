import { describe, expect, it } from "vitest";
import { createRobloxServer } from "../support/roblox.js";
import { luaString, sdkSuite } from "../support/sdk-suite.js";

/**
 * The test engine held to Roblox's documented behaviour: RequestAsync's Timeout, the 500 a minute
 * limit, requests that take time to leave, a Secret's domain, the close and exit reasons,
 * MessageOut's context. The file runs under both signal behaviors (see vitest.config.ts).
 */
const t = sdkSuite();

const json = async (source: string) => JSON.parse((await t.rbx.run(`return game:GetService("HttpService"):JSONEncode((function() ${source} end)())`)) as string);
// a port nothing listens on: a request there leaves the engine and fails at once
const NOWHERE = "http://127.0.0.1:9/";

describe("the test engine, as Roblox documents it", () => {
  it("accepts RequestAsync's Timeout and fails a slower request with a timeout once it has waited that long", async () => {
    t.rbx = await createRobloxServer({ httpLatency: 5 });
    const [ok, problem, waited] = await json(`
      local HttpService = game:GetService("HttpService")
      local before = os.clock()
      local ok, problem = pcall(function()
        return HttpService:RequestAsync({ Url = ${luaString(t.app.url)} .. "/api/health", Method = "GET", Timeout = 2 })
      end)
      return { ok, problem, os.clock() - before }
    `);
    expect(ok).toBe(false);
    expect(problem).toBe("HttpError: Timedout");
    // the start delay, then the 2 s it waited for the answer
    expect(waited).toBeCloseTo(2.02, 5);
    // it did leave: the service may have acted on it
    expect(t.rbx.requests).toHaveLength(1);
    // within its Timeout, an answer comes back
    const [status] = await json(`
      mock.setHttpLatency(0.1)
      local response = game:GetService("HttpService"):RequestAsync({ Url = ${luaString(t.app.url)} .. "/api/health", Method = "GET", Timeout = 1 })
      return { response.StatusCode }
    `);
    expect(typeof status).toBe("number");
  });

  it("fails requests over 500 a minute per server, at once, until the minute has passed", async () => {
    t.rbx = await createRobloxServer();
    const [left, refused, problem] = await json(`
      local HttpService = game:GetService("HttpService")
      local left, refused, problem = 0, 0, nil
      local done = 0
      for _ = 1, 505 do
        task.spawn(function()
          local ok, err = pcall(HttpService.RequestAsync, HttpService, { Url = ${luaString(NOWHERE)}, Method = "GET" })
          if not ok and string.find(err, "Number of requests exceeded limit", 1, true) then
            refused += 1
            problem = err
          else
            left += 1
          end
          done += 1
        end)
      end
      while done < 505 do task.wait() end
      return { left, refused, problem }
    `);
    expect([left, refused]).toEqual([500, 5]);
    expect(problem).toBe("HttpError: Number of requests exceeded limit");
    expect(t.rbx.requests).toHaveLength(500);
    await t.rbx.advance(60);
    const [again] = await json(`
      local ok, err = pcall(function() return game:GetService("HttpService"):RequestAsync({ Url = ${luaString(NOWHERE)}, Method = "GET" }) end)
      return { err }
    `);
    expect(again).toBe("HttpError: ConnectFail");
  });

  it("a request begun just before the server closes never leaves; one in flight reaches the service and its answer is never seen", async () => {
    t.rbx = await createRobloxServer({ httpLatency: 2 });
    await t.rbx.run(`
      local HttpService = game:GetService("HttpService")
      game:BindToClose(function()
        task.wait(29.99)
        pcall(HttpService.RequestAsync, HttpService, { Url = ${luaString(NOWHERE)} .. "late", Method = "GET" })
        mock.lateReturned = true
      end)
      game:BindToClose(function()
        task.wait(29)
        pcall(HttpService.RequestAsync, HttpService, { Url = ${luaString(NOWHERE)} .. "in-flight", Method = "GET" })
        mock.inFlightReturned = true
      end)
    `);
    expect(await t.rbx.shutdown()).toBe(false);
    expect(t.rbx.requests.map((r) => r.url)).toEqual([`${NOWHERE}in-flight`]);
    expect(await t.rbx.run(`return tostring(mock.lateReturned == true) .. " " .. tostring(mock.inFlightReturned == true)`)).toBe("false false");
  });

  it("uses a Secret only towards its allowed domain, in a header or the Url", async () => {
    t.rbx = await createRobloxServer({
      secrets: { elsewhere: { value: "k1", domain: "monitor.example.com" }, local_key: { value: "k2", domain: "127.0.0.1" }, wild: { value: "k3", domain: "*.example.com" } },
    });
    const outcomes = await json(`
      local HttpService = game:GetService("HttpService")
      local function try(request)
        local ok, err = pcall(HttpService.RequestAsync, HttpService, request)
        return if ok then "sent" else err
      end
      return {
        try({ Url = ${luaString(NOWHERE)}, Method = "GET", Headers = { ["x-api-key"] = HttpService:GetSecret("elsewhere") } }),
        try({ Url = HttpService:GetSecret("elsewhere"):AddPrefix(${luaString(NOWHERE)} .. "?key="), Method = "GET" }),
        try({ Url = ${luaString(NOWHERE)}, Method = "GET", Headers = { ["x-api-key"] = HttpService:GetSecret("wild") } }),
        try({ Url = ${luaString(NOWHERE)}, Method = "GET", Headers = { ["x-api-key"] = HttpService:GetSecret("local_key") } }),
      }
    `);
    expect(outcomes[0]).toMatch(/secret "elsewhere" is not allowed for the domain 127\.0\.0\.1/);
    expect(outcomes[1]).toMatch(/secret "elsewhere" is not allowed/);
    expect(outcomes[2]).toMatch(/secret "wild" is not allowed/);
    expect(outcomes[3]).toBe("HttpError: ConnectFail");
    // only the allowed one left, carrying the value
    expect(t.rbx.requests.map((r) => r.headers["x-api-key"])).toEqual(["k2"]);
  });

  it("passes BindToClose an Enum.CloseReason, PlayerRemoving a PlayerExitReason, MessageOut a context dictionary", async () => {
    t.rbx = await createRobloxServer();
    await t.rbx.addPlayer(11, "Kicked");
    await t.rbx.addPlayer(12, "Stayed");
    await t.rbx.run(`
      mock.seen = {}
      game:GetService("Players").PlayerRemoving:Connect(function(player, reason)
        table.insert(mock.seen, player.Name .. " " .. tostring(reason))
      end)
      game:GetService("LogService").MessageOut:Connect(function(message, messageType, context)
        table.insert(mock.seen, message .. " " .. typeof(context))
      end)
      game:BindToClose(function(reason)
        table.insert(mock.seen, "close " .. tostring(reason))
      end)
      print("hello")
    `);
    await t.rbx.removePlayer(11, "CreatorKick");
    expect(await t.rbx.shutdown("OutOfMemory")).toBe(true);
    expect(await t.rbx.run(`return table.concat(mock.seen, ";")`)).toBe(
      "hello table;Kicked Enum.PlayerExitReason.CreatorKick;Stayed Enum.PlayerExitReason.Unknown;close Enum.CloseReason.OutOfMemory",
    );
  });
});
