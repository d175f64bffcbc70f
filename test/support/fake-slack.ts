import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

/**
 * A local Slack incoming webhook (ROBLOX.md): 200 "ok"; 400 invalid_payload; 404 channel_not_found;
 * 410 channel_is_archived; 429 with Retry-After when injected. Plain-text bodies, like Slack.
 */
export class FakeSlack {
  readonly messages: { path: string; body: any }[] = [];
  private server: Server;
  private states = new Map<string, "channel_not_found" | "channel_is_archived">();
  private rateLimits: number[] = [];
  url = "";

  constructor() {
    this.server = createServer((req, res) => void this.handle(req, res));
  }

  async start(): Promise<this> {
    await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
    const a = this.server.address();
    this.url = `http://127.0.0.1:${typeof a === "object" && a ? a.port : 0}`;
    return this;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }

  hookUrl(): string {
    return `${this.url}/services/T000/B${Math.floor(Math.random() * 1e9)}/secret${Math.random().toString(36).slice(2)}`;
  }

  setState(url: string, state: "channel_not_found" | "channel_is_archived") {
    this.states.set(new URL(url).pathname, state);
  }

  rateLimitNext(seconds: number) {
    this.rateLimits.push(seconds);
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const text = (status: number, body: string, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "text/plain", ...headers });
      res.end(body);
    };
    if (req.method !== "POST") return text(405, "invalid_method");
    const state = this.states.get(path);
    if (state === "channel_not_found") return text(404, "channel_not_found");
    if (state === "channel_is_archived") return text(410, "channel_is_archived");
    const limit = this.rateLimits.shift();
    if (limit !== undefined) return text(429, "rate_limited", { "retry-after": String(limit) });
    let body: any;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      return text(400, "invalid_payload");
    }
    if (typeof body?.text !== "string" && !Array.isArray(body?.blocks)) return text(400, "no_text");
    if (body.blocks !== undefined && !Array.isArray(body.blocks)) return text(400, "invalid_blocks");
    this.messages.push({ path, body });
    text(200, "ok");
  }
}
