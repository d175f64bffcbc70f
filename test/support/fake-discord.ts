import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";

/**
 * A local Discord webhook that answers like the real one (ROBLOX.md):
 * POST /api/webhooks/{id}/{token} -> 204 (200 with the message under ?wait=true);
 * 400 for an embed over Discord's limits; 429 {message, retry_after, global} + Retry-After when a
 * rate limit is injected; 404 {"message": "Unknown Webhook", "code": 10015} for a deleted webhook.
 */
export type DiscordMessage = { webhook: string; body: any; receivedAt: number; headers: IncomingMessage["headers"] };

const LIMITS = { title: 256, description: 4096, fields: 25, fieldName: 256, fieldValue: 1024, footer: 2048, total: 6000, content: 2000, embeds: 10 };

/** Discord's embed checks; returns the first violation or null. */
export function embedProblem(body: any): string | null {
  if (typeof body?.content === "string" && body.content.length > LIMITS.content) return "content: Must be 2000 or fewer in length.";
  const embeds: any[] = body?.embeds ?? [];
  if (!body?.content && embeds.length === 0) return "Cannot send an empty message";
  if (embeds.length > LIMITS.embeds) return "embeds: Must be 10 or fewer in length.";
  let total = 0;
  const L = (s: unknown) => (typeof s === "string" ? [...s].length : 0);
  for (const e of embeds) {
    if (L(e.title) > LIMITS.title) return "embeds.0.title: Must be 256 or fewer in length.";
    if (L(e.description) > LIMITS.description) return "embeds.0.description: Must be 4096 or fewer in length.";
    if ((e.fields ?? []).length > LIMITS.fields) return "embeds.0.fields: Must be 25 or fewer in length.";
    for (const f of e.fields ?? []) {
      if (L(f.name) > LIMITS.fieldName || L(f.value) > LIMITS.fieldValue) return "embeds.0.fields: field too long";
      if (!f.name || !f.value) return "embeds.0.fields: name and value are required";
      total += L(f.name) + L(f.value);
    }
    if (L(e.footer?.text) > LIMITS.footer) return "embeds.0.footer.text: Must be 2048 or fewer in length.";
    total += L(e.title) + L(e.description) + L(e.footer?.text) + L(e.author?.name);
  }
  if (total > LIMITS.total) return "Embed size exceeds maximum size of 6000";
  return null;
}

export class FakeDiscord {
  readonly messages: DiscordMessage[] = [];
  /** every request, accepted or not */
  readonly requests: { webhook: string; status: number; at: number }[] = [];
  private server: Server;
  private rateLimits: { retryAfter: number; global: boolean }[] = [];
  private deleted = new Set<string>();
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

  /** A webhook URL on this fake; each call makes a distinct webhook. */
  webhookUrl(id = String(Math.floor(Math.random() * 1e15)), token = `tok-${Math.random().toString(36).slice(2)}`): string {
    return `${this.url}/api/webhooks/${id}/${token}`;
  }

  /** The next request gets a 429 asking to wait `retryAfter` seconds. */
  rateLimitNext(retryAfter: number, global = false) {
    this.rateLimits.push({ retryAfter, global });
  }

  deleteWebhook(url: string) {
    this.deleted.add(new URL(url).pathname);
  }

  for(url: string): DiscordMessage[] {
    const p = new URL(url).pathname;
    return this.messages.filter((m) => m.webhook === p);
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url ?? "/", "http://x");
    const send = (status: number, body?: unknown, headers: Record<string, string> = {}) => {
      this.requests.push({ webhook: url.pathname, status, at: Date.now() });
      res.writeHead(status, { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers });
      res.end(body === undefined ? undefined : JSON.stringify(body));
    };
    const m = /^\/api(?:\/v\d+)?\/webhooks\/(\d+)\/([\w-]+)$/.exec(url.pathname);
    if (req.method !== "POST" || !m) return send(405, { message: "405: Method Not Allowed", code: 0 });
    if (this.deleted.has(url.pathname)) return send(404, { message: "Unknown Webhook", code: 10015 });
    const limit = this.rateLimits.shift();
    if (limit) {
      return send(
        429,
        { message: "You are being rate limited.", retry_after: limit.retryAfter, global: limit.global },
        { "retry-after": String(Math.ceil(limit.retryAfter)), "x-ratelimit-remaining": "0", "x-ratelimit-reset-after": String(limit.retryAfter) },
      );
    }
    let body: any;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      return send(400, { message: "The request body contains invalid JSON.", code: 50109 });
    }
    const problem = embedProblem(body);
    if (problem) return send(400, { message: "Invalid Form Body", code: 50035, errors: { detail: problem } });
    this.messages.push({ webhook: url.pathname, body, receivedAt: Date.now(), headers: req.headers });
    if (url.searchParams.get("wait") === "true") return send(200, { id: String(this.messages.length), ...body });
    send(204);
  }
}
