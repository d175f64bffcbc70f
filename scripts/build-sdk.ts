/** npm run sdk:build: writes sdk/roblox/dist/RobloxMonitor.luau, the file the service serves. */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { readSdkSources } from "../app/sdk/sources.server.js";
import { bundleSdk, SDK_VERSION } from "../app/sdk/bundle.js";

const root = path.resolve(import.meta.dirname, "..");
const out = path.join(root, "sdk/roblox/dist/RobloxMonitor.luau");
mkdirSync(path.dirname(out), { recursive: true });
writeFileSync(out, bundleSdk(readSdkSources(root), SDK_VERSION));
console.log(`wrote ${path.relative(root, out)}`);
