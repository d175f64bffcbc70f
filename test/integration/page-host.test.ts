import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../support/server.js";

/** A raw request: fetch cannot send a Host header that makes no address. */
function rawGet(port: number, path: string, host: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1" });
    let got = "";
    socket.on("data", (d) => (got += d.toString("latin1")));
    socket.on("end", () => resolve(got));
    socket.on("error", reject);
    // written, not ended: a client that half-closes is gone before a page's answer is ready
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  });
}

describe("a page request whose Host header makes no address", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app?.close());

  it("is answered 400 with the error body, as the API answers it, never 500", async () => {
    for (const path of ["/api/v1/errors", "/login", "/projects", "/"]) {
      const text = await rawGet(app.port, path, "a b");
      expect(text, path).toMatch(/^HTTP\/1\.1 400 /);
      expect(JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)), path).toEqual({
        error: "invalid_payload",
        message: "The request's Host header is not a valid host.",
      });
    }
    // a valid Host still gets the page (or its redirect)
    const status = Number((await rawGet(app.port, "/login", `127.0.0.1:${app.port}`)).split(" ")[1]);
    expect(status).toBeGreaterThanOrEqual(200);
    expect(status).toBeLessThan(400);
  });
});
