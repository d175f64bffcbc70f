/**
 * Records what the API answers during the integration suite, so the run's teardown can check every
 * answer against the OpenAPI document (test/support/contract-audit.ts). Loaded in each test worker
 * (vitest `setupFiles`): `globalThis.fetch` is wrapped, and every answer a local server gives on an
 * `/api/...` path appends one JSON line (method, path, status, content type and, for JSON, the
 * body) to a file of this worker in the run's directory.
 *
 * Kept cheap, as it runs in the whole suite: the wrapper returns the caller's Response untouched and
 * reads a clone's text only when the answer is JSON; the line is written when that text arrives.
 */
import { appendFileSync, mkdirSync } from "node:fs";
import path from "node:path";
import { inject } from "vitest";
import { contractRecordFile, type RecordedResponse } from "./contract-files.js";

const LOCAL_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

const FLAG = Symbol.for("rbx-monitor.contract-record");
type Flagged = typeof fetch & { [FLAG]?: true };

function install(): void {
  const original = globalThis.fetch as Flagged;
  if (original[FLAG]) return;
  const file = contractRecordFile(inject("testRunId"), process.pid);
  let dirMade = false;
  const write = (line: RecordedResponse) => {
    if (!dirMade) {
      mkdirSync(path.dirname(file), { recursive: true });
      dirMade = true;
    }
    appendFileSync(file, JSON.stringify(line) + "\n");
  };

  const wrapped = async function fetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    const res = await original(input, init);
    try {
      const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
      if (!LOCAL_HOSTS.has(url.hostname) || !url.pathname.toLowerCase().startsWith("/api/")) return res;
      // every answer of the service carries its request id; one without it came from a test's own
      // stand-in (a proxy answering 403 as a firewall would), not from the service
      if (!res.headers.has("x-request-id")) return res;
      const method = (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
      const contentType = res.headers.get("content-type");
      const line: RecordedResponse = { method, path: url.pathname, status: res.status, contentType };
      if (method === "HEAD" || !contentType || !/\bjson\b/i.test(contentType) || res.bodyUsed) {
        write(line);
        return res;
      }
      res
        .clone()
        .text()
        .then(
          (text) => write({ ...line, body: text }),
          () => write({ ...line, unread: true }),
        );
    } catch {
      // a URL this recorder cannot read is not an API answer
    }
    return res;
  } as Flagged;
  wrapped[FLAG] = true;
  globalThis.fetch = wrapped;
}

install();
