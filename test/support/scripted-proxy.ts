import http from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";

/** A scripted answer: its status and body (a string is sent as an HTML page, anything else as JSON). */
export type Scripted = { status: number; body?: unknown } | undefined;

/**
 * A proxy in front of the service whose answers a test scripts per request: `answer(path, body)`
 * gets the path and the parsed JSON body (gunzipped; null when it is not JSON) and returns an
 * answer, or undefined to pass the request on to the service (at `target()`) as it came.
 */
export async function scriptedProxy(target: () => string, answer: (path: string, body: any) => Scripted | Promise<Scripted>) {
  const agent = new http.Agent({ keepAlive: false });
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    let parsed: unknown = null;
    try {
      parsed = JSON.parse((req.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw).toString("utf8"));
    } catch {
      parsed = null;
    }
    const scripted = await answer(req.url ?? "", parsed);
    if (scripted) {
      const page = typeof scripted.body === "string";
      res.writeHead(scripted.status, { "content-type": page ? "text/html" : "application/json" });
      res.end(page ? scripted.body : JSON.stringify(scripted.body ?? { error: "scripted", message: `HTTP ${scripted.status}` }));
      return;
    }
    // anything else goes on to the service as it came, and its answer back as it is
    // a fresh connection each time (as the suite's proxy does): a kept-alive one the service closed
    // while idle would fail the request for a reason no game server meets
    const to = new URL(target());
    const out = http.request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers, agent }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    out.on("error", () => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: "bad_gateway", message: "The service could not be reached." }));
    });
    out.end(raw);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
