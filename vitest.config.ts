import { configDefaults, defineConfig } from "vitest/config";

const FAULTS = ["test/integration/faults.test.ts", "test/integration/hostile-load.test.ts"];
// the SDK suite runs twice: under Deferred signals (in "main") and under Immediate ones, Roblox's two
// Workspace.SignalBehavior settings (test/support/roblox.ts reads ROBLOX_SIGNAL_BEHAVIOR)
const SDK_SUITE = ["test/integration/sdk-roblox*.test.ts"];

export default defineConfig({
  resolve: { alias: { "~": new URL("./app", import.meta.url).pathname } },
  test: {
    globalSetup: ["test/support/global-setup.ts"],
    // records the API's answers for the OpenAPI contract audit at the end of the run
    setupFiles: ["test/support/contract-record.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    maxWorkers: 2,
    minWorkers: 1,
    // the fault and hostile-load tests load the machine hard (processes killed, backends terminated,
    // stalls, floods of bombs), so they run after the rest instead of beside tests that measure time
    projects: [
      { extends: true, test: { name: "main", include: ["test/**/*.test.ts"], env: { ROBLOX_SIGNAL_BEHAVIOR: "Deferred" }, exclude: [...configDefaults.exclude, ...FAULTS], sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: "sdk-immediate", include: SDK_SUITE, env: { ROBLOX_SIGNAL_BEHAVIOR: "Immediate" }, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: "faults", include: FAULTS, sequence: { groupOrder: 1 } } },
    ],
  },
});
