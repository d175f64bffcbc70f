import { execFile } from "node:child_process";
import { mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "../..");

/** Runs `npm run cli -- …` against `databaseUrl`: its exit code and the JSON object of its last line. */
export async function runCli(databaseUrl: string, ...args: string[]): Promise<{ code: number; out: any }> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: databaseUrl, DATA_DIR: mkdtempSync(path.join(os.tmpdir(), "rbx-cli-")), NODE_ENV: "test" };
  try {
    const { stdout } = await run(path.join(root, "node_modules/.bin/tsx"), ["scripts/cli.ts", ...args], { cwd: root, env, encoding: "utf8" });
    return { code: 0, out: JSON.parse(stdout.trim().split("\n").at(-1)!) };
  } catch (err) {
    const e = err as { code: number; stdout: string };
    return { code: e.code, out: JSON.parse(e.stdout.trim().split("\n").at(-1)!) };
  }
}
