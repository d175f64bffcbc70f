import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { auditLogs, recordSecrets } from "../support/log-audit.js";

/** The audit the global teardown runs: it must find a planted secret, however it sits in a line. */
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "log-audit-test-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const KEY = "rbx_Zq8UeTn2Vb0PmX4cLs7Ho1Ay9Dk3Jf6W";
const TOKEN = "shr_Kp2Xw9Lm4Qr7Tz1Vb8Nc3Hd6";
const PASSWORD = "correct horse battery";

function logs(lines: string[]) {
  writeFileSync(path.join(dir, "server-1.log"), lines.map((l) => l + "\n").join(""));
}

describe("log audit", () => {
  beforeEach(() => {
    recordSecrets(dir, "api key", [KEY]);
    recordSecrets(dir, "share token", [TOKEN, "short"]);
    recordSecrets(dir, "password", [PASSWORD]);
  });

  it("finds nothing in clean logs", () => {
    logs(['{"level":"info","msg":"request","route":"routes/api.ingest","status":200}', '{"level":"warn","msg":"rbx_[redacted] refused"}']);
    expect(auditLogs(dir)).toEqual([]);
  });

  it("reports a planted key, where it sits, whole or inside a longer word", () => {
    logs(['{"level":"info","msg":"ok"}', `{"level":"error","msg":"bad key ${KEY}"}`, `{"level":"error","msg":"x${TOKEN.slice(4)}y and /share/${TOKEN}"}`]);
    const leaks = auditLogs(dir);
    expect(leaks.map((l) => [l.kind, l.secret, l.line])).toEqual(
      expect.arrayContaining([
        ["api key", KEY, 2],
        ["share token", TOKEN, 3],
      ]),
    );
    expect(leaks).toHaveLength(2);
  });

  it("reports a secret that is not one word, as written or JSON-escaped", () => {
    recordSecrets(dir, "password", ['pa"ss word']);
    logs([`{"msg":"login ${PASSWORD}"}`, `{"msg":${JSON.stringify('pa"ss word')}}`]);
    expect(auditLogs(dir).map((l) => [l.secret, l.line])).toEqual([
      [PASSWORD, 1],
      ['pa"ss word', 2],
    ]);
  });

  it("does not record values too short to be told from chance", () => {
    recordSecrets(dir, "password", ["password"]);
    logs(['{"msg":"short","route":"routes/api.auth.password"}']);
    expect(auditLogs(dir)).toEqual([]);
  });
});
