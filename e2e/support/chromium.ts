import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { brotliDecompressSync } from "node:zlib";

const SYSTEM_CHROMIUM = "/usr/bin/chromium";

/** Shared libraries `executable` needs that the machine lacks (ldd's "not found" lines). */
function missingLibraries(executable: string): string[] {
  try {
    return execFileSync("ldd", [executable], { encoding: "utf8" })
      .split("\n")
      .filter((line) => line.includes("not found"))
      .map((line) => line.trim().split(/\s/)[0]);
  } catch {
    return [];
  }
}

/**
 * The Chromium the browser tests launch: `CHROMIUM_PATH` when set to a path; else Debian's
 * /usr/bin/chromium when installed; else (or with `CHROMIUM_PATH=bundled`) the Chromium that the
 * npm package @sparticuz/chromium ships, unpacked into the temp folder on first use, so that
 * `npm install && npm test` needs nothing else on the machine. That build is made for Amazon
 * Linux: where the machine lacks the NSS libraries it links against, the package's own copies are
 * unpacked beside it and put on LD_LIBRARY_PATH (the browser inherits the test runner's
 * environment), and where the machine has no fontconfig setup, the package's fonts are used.
 */
export async function chromiumExecutable(): Promise<string> {
  const chosen = process.env.CHROMIUM_PATH;
  if (chosen && chosen !== "bundled") return chosen;
  if (!chosen && existsSync(SYSTEM_CHROMIUM)) return SYSTEM_CHROMIUM;

  const { default: chromium } = await import("@sparticuz/chromium");
  const executable = await chromium.executablePath();
  if (missingLibraries(executable).length > 0) {
    const libDir = path.join(os.tmpdir(), "al2023", "lib");
    if (!existsSync(path.join(libDir, "libnss3.so"))) {
      const archive = path.join(path.dirname(createRequire(import.meta.url).resolve("@sparticuz/chromium")), "..", "..", "bin", "al2023.tar.br");
      const target = path.join(os.tmpdir(), "al2023");
      mkdirSync(target, { recursive: true });
      execFileSync("tar", ["-x", "-C", target], { input: brotliDecompressSync(readFileSync(archive)) });
    }
    process.env.LD_LIBRARY_PATH = [libDir, process.env.LD_LIBRARY_PATH].filter(Boolean).join(":");
    const still = missingLibraries(executable);
    if (still.length > 0) throw new Error(`the bundled Chromium cannot start: missing ${still.join(", ")} (install Debian's chromium, or set CHROMIUM_PATH)`);
  }
  if (!existsSync("/etc/fonts/fonts.conf")) process.env.FONTCONFIG_PATH ??= path.join(os.tmpdir(), "fonts");
  return executable;
}
