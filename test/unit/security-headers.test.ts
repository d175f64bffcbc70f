import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import express, { type RequestHandler } from "express";
import { helmetHeaders, recordHeaderWrites, securityHeaders } from "../../server/web.js";

/** The raw header lines (names as sent, in order, Date left out) a middleware yields on a real response. */
async function rawHeaders(middleware: RequestHandler, path: string): Promise<string[]> {
  const app = express();
  app.disable("x-powered-by");
  // something set before the middleware, so a removal in it is observable
  app.use((_req, res, next) => (res.setHeader("X-Powered-By", "upstream"), next()));
  app.use(middleware);
  app.use((_req, res) => res.json({ ok: true }));
  const server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  try {
    const { port } = server.address() as AddressInfo;
    const text = await new Promise<string>((resolve, reject) => {
      import("node:net").then(({ connect }) => {
        const socket = connect(port, "127.0.0.1");
        let out = "";
        socket.on("data", (c) => (out += c.toString("latin1")));
        socket.on("end", () => resolve(out));
        socket.on("error", reject);
        socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
      }, reject);
    });
    return text.split("\r\n\r\n")[0].split("\r\n").filter((l) => !/^Date:/i.test(l));
  } finally {
    server.close();
  }
}

/** The middleware as it was written before its header writes were recorded: helmet on every request. */
const perRequestHelmet = (dev: boolean): RequestHandler => {
  const common = helmetHeaders({ dev });
  return (req, res, next) => {
    res.setHeader("Referrer-Policy", /^\/share\//.test(req.path) ? "no-referrer" : "same-origin");
    common(req, res, next);
  };
};

describe("security headers", () => {
  it.each([false, true])("helmet's writes are recorded once (dev %s)", (dev) => {
    const writes = recordHeaderWrites(helmetHeaders({ dev }));
    expect(writes).not.toBeNull();
    expect(writes).toContainEqual(["X-Frame-Options", "DENY"]);
    expect(writes).toContainEqual(["X-Powered-By"]);
  });

  it.each([
    [false, "/api/ingest"],
    [false, "/share/abc"],
    [true, "/"],
  ])("send exactly what helmet run per request sends (dev %s, %s)", async (dev, path) => {
    const replayed = await rawHeaders(securityHeaders({ dev }), path);
    expect(replayed).toEqual(await rawHeaders(perRequestHelmet(dev), path));
    expect(replayed.some((l) => /^X-Powered-By/i.test(l))).toBe(false);
    expect(replayed).toContain(`Referrer-Policy: ${path.startsWith("/share/") ? "no-referrer" : "same-origin"}`);
  });

  it("runs a middleware that reads the request on every request instead of recording it", () => {
    const readsRequest: RequestHandler = (req, res, next) => {
      res.setHeader("X-Path", req.path);
      next();
    };
    expect(recordHeaderWrites(readsRequest)).toBeNull();
    const failing: RequestHandler = (_req, _res, next) => next(new Error("no"));
    expect(recordHeaderWrites(failing)).toBeNull();
  });
});
