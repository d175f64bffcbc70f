import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from "node:http";

export type Exchange = { method: string; url: string; headers: IncomingHttpHeaders; body: Buffer; bodyBytes: number; status: number; responseHeaders: IncomingHttpHeaders };

/**
 * An HTTP proxy on loopback in front of the test server that records every exchange, so a test
 * can see what a real client sent (encoding, headers) and whether it sent anything at all.
 */
export class RecordingProxy {
  readonly exchanges: Exchange[] = [];
  private server: Server | undefined;
  port = 0;

  constructor(private readonly targetPort: number) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks);
        const out = httpRequest(
          { host: "127.0.0.1", port: this.targetPort, method: req.method, path: req.url, headers: req.headers },
          (up) => {
            this.exchanges.push({
              method: req.method ?? "",
              url: req.url ?? "",
              headers: req.headers,
              body,
              bodyBytes: body.length,
              status: up.statusCode ?? 0,
              responseHeaders: up.headers,
            });
            res.writeHead(up.statusCode ?? 502, up.headers);
            up.pipe(res);
          },
        );
        out.on("error", () => {
          res.writeHead(502);
          res.end();
        });
        out.end(body);
      });
    });
    await new Promise<void>((r) => this.server!.listen(0, "127.0.0.1", r));
    const addr = this.server.address();
    this.port = typeof addr === "object" && addr ? addr.port : 0;
    return this;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((r) => (this.server ? this.server.close(() => r()) : r()));
  }
}
