import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { moduleName, type SdkSources } from "./bundle";

/** The SDK's modules read from disk (for `npm run sdk:build` and the tests). */
export function readSdkSources(root = path.resolve(import.meta.dirname, "../..")): SdkSources {
  const dir = path.join(root, "sdk/roblox/src");
  return Object.fromEntries(
    readdirSync(dir)
      .filter((f) => f.endsWith(".luau"))
      .map((f) => [moduleName(f), readFileSync(path.join(dir, f), "utf8")]),
  );
}
