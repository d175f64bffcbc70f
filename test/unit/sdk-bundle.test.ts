import { describe, expect, it } from "vitest";
import { LuauState } from "luau-web";
import { bundleSdk } from "../../app/sdk/bundle";
import { readSdkSources } from "../../app/sdk/sources.server";

describe("the SDK's sources and bundle", () => {
  it("every module compiles as Luau on its own (the Rojo and Wally layout)", async () => {
    const state = await LuauState.createAsync({});
    const sources = readSdkSources();
    expect(Object.keys(sources).sort()).toEqual(["Actors", "Breadcrumbs", "Capture", "Client", "ClientRelay", "Economy", "EventQueue", "Health", "Hooks", "JsonSafe", "OutputGuard", "RaisedErrors", "Sending", "State", "TokenBucket", "Transport", "Validate", "init"]);
    for (const [name, source] of Object.entries(sources)) {
      expect(source.startsWith("--!strict\n"), name).toBe(true);
      expect(typeof state.loadstring(source, `=RobloxMonitor.${name}`, false), name).toBe("function");
    }
  });

  it("rewrites requires to the bundle's loader, runs each module once, and refuses unknown modules", async () => {
    const bundle = bundleSdk(
      {
        init: `--!strict\nlocal A = require(script.A)\nlocal B = require(script.B)\nexport type T = number\nreturn A.n + B.n + A.loads()`,
        A: `local loads = 0\nloads += 1\nreturn { n = 1, loads = function() return loads end }`,
        B: `local A = require(script.Parent.A)\nreturn { n = A.n + 10 }`,
      },
      "test",
    );
    expect(bundle).not.toMatch(/require\(script/);
    const state = await LuauState.createAsync({});
    expect(await state.loadstring(bundle, "=bundle", true)()).toEqual([13]);
    expect(() => bundleSdk({ init: "return require(script.Missing)" }, "test")).toThrow(/unknown module Missing/);
  });
});
