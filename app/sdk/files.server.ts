import { bundleSdk, moduleName, SDK_VERSION } from "./bundle";

// Vite inlines the SDK sources into the server build, so the download needs no files at run time.
const files = import.meta.glob("../../sdk/roblox/src/*.luau", { query: "?raw", import: "default", eager: true }) as Record<string, string>;

let bundled: string | undefined;

/** The bundled SDK, as `npm run sdk:build` writes it. */
export function sdkBundle(): string {
  bundled ??= bundleSdk(Object.fromEntries(Object.entries(files).map(([file, source]) => [moduleName(file), source])), SDK_VERSION);
  return bundled;
}
