/**
 * Bundles the Luau SDK's modules (sdk/roblox/src) into one ModuleScript source, so it can be
 * pasted into Studio or downloaded from the service. Pure: the caller reads the files.
 *
 * Each module becomes a function in a table, and `require(script.X)` / `require(script.Parent.X)`
 * become calls to a small loader that runs each module once, in the order Roblox would.
 * `export type` is only legal at a module's top level, so it becomes a local `type`; the bundle is
 * marked `--!nocheck` because cross-module type references cannot resolve inside one file (the
 * sources keep `--!strict` for Rojo and Wally installs).
 */
export type SdkSources = Record<string, string>;

const REQUIRE = /require\(\s*script(?:\.Parent)?\.(\w+)\s*\)/g;

export function bundleSdk(sources: SdkSources, version: string): string {
  const names = Object.keys(sources).sort();
  if (!names.includes("init")) throw new Error("the SDK has no init module");
  const modules = names.map((name) => {
    const body = sources[name]
      .replace(/^--!\w+\s*\n/, "")
      .replace(REQUIRE, (_, dep: string) => {
        if (!names.includes(dep)) throw new Error(`module ${name} requires unknown module ${dep}`);
        return `__require("${dep}")`;
      })
      .replace(/^export type /gm, "type ");
    return `__modules["${name}"] = function()\n${body.trimEnd()}\nend\n`;
  });
  return `--!nocheck
-- RobloxMonitor ${version}: error capture for Roblox Monitor, bundled into one ModuleScript.
-- Put this in a ModuleScript named RobloxMonitor in ReplicatedStorage. Usage and options:
-- the service's README ("Send errors from Roblox") and sdk/roblox/README.md.

local __modules = {}
local __loaded = {}
local function __require(name)
	local loaded = __loaded[name]
	if loaded == nil then
		loaded = __modules[name]()
		__loaded[name] = loaded
	end
	return loaded
end

${modules.join("\n")}
return __require("init")
`;
}

/** Module name from a file path: `src/init.luau` -> `init`. */
export const moduleName = (file: string) => file.replace(/^.*\//, "").replace(/\.luau$/, "");

export const SDK_VERSION = "0.1.0";
