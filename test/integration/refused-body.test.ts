import { execFile } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, startTestApp, type TestApp } from "../support/server.js";

/**
 * A body refused before it is read (413 past the limit) is answered readably: the server reads and
 * discards the rest of it, up to a bound, instead of closing at once, as nginx's lingering close
 * does. Closing a socket with unread bytes in its receive buffer sends a reset, and a client still
 * uploading then sees ECONNRESET or EPIPE instead of the 413.
 *
 * The clients are separate Node processes (Node's fetch), several at once: a client sharing the
 * server's event loop, or alone on the machine, rarely loses the race the reset starts.
 */

const client = path.join(path.dirname(fileURLToPath(import.meta.url)), "../support/fetch-client.mjs");
const THREE_MIB = 3 * 1024 * 1024;

let app: TestApp;
let apiKey: string;

beforeAll(async () => {
  app = await startTestApp();
  ({ apiKey } = await createProject(app.sql));
});
afterAll(() => app?.close());

/** `tries` POSTs of a 3 MiB body, one after another, from a process of its own. */
async function postsFromAnotherProcess(tries: number): Promise<string[]> {
  const { stdout } = await promisify(execFile)(process.execPath, [client, `${app.url}/api/ingest`, apiKey, String(tries), String(THREE_MIB)]);
  return JSON.parse(stdout) as string[];
}

describe("a body over the limit", () => {
  it("is answered 413 on every one of 4 × 50 tries with Node's fetch, never with a reset connection", async () => {
    const outcomes = (await Promise.all([1, 2, 3, 4].map(() => postsFromAnotherProcess(50)))).flat();
    expect(outcomes).toEqual(Array.from({ length: 200 }, () => "413 payload_too_large"));
  }, 120_000);
});
