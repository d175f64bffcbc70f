import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";

/** A real OIDC provider (npm oidc-provider) on 127.0.0.1 at a free port, in a child process. */
export type LocalProvider = { issuer: string; close: () => Promise<void> };

export type ProviderOptions = {
  /** client ids and secrets; the redirect URI is the app's callback for `provider` at any loopback port */
  clients: { clientId: string; clientSecret: string; provider: string }[];
  /** claims per login name (sub is the login) */
  accounts?: Record<string, Record<string, unknown>>;
  /** the provider's clock runs this far from the real one */
  clockOffsetSeconds?: number;
  /** the host its issuer URL names (it listens on 127.0.0.1 either way) */
  issuerHost?: string;
};

export async function startLocalProvider(o: ProviderOptions): Promise<LocalProvider> {
  const clients = o.clients.map((c) => ({
    client_id: c.clientId,
    client_secret: c.clientSecret,
    // RFC 8252: a loopback redirect URI matches at any port
    application_type: "native",
    redirect_uris: [`http://127.0.0.1/auth/oidc/${c.provider}/callback`],
    token_endpoint_auth_method: "client_secret_basic",
  }));
  const child: ChildProcess = spawn(process.execPath, [path.join(import.meta.dirname, "oidc-provider.mjs")], {
    env: {
      ...process.env,
      NODE_ENV: "development",
      OIDC_CLIENTS: JSON.stringify(clients),
      OIDC_ACCOUNTS: JSON.stringify(o.accounts ?? {}),
      CLOCK_OFFSET_SECONDS: String(o.clockOffsetSeconds ?? 0),
      ...(o.issuerHost ? { ISSUER_HOST: o.issuerHost } : {}),
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const issuer = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on("line", (line) => {
      try {
        const parsed = JSON.parse(line) as { issuer?: string };
        if (parsed.issuer) resolve(parsed.issuer);
      } catch {
        // the provider's own warnings
      }
    });
    child.once("exit", (code) => reject(new Error(`the OIDC provider exited (${code})`)));
  });
  return {
    issuer,
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/** A browser's cookies and redirects, over real HTTP (cookies kept per host, expiry ignored). */
export class Browser {
  private jar = new Map<string, Map<string, string>>();

  cookieHeader(url: string): string {
    const forHost = this.jar.get(new URL(url).host);
    return forHost ? [...forHost].map(([k, v]) => `${k}=${v}`).join("; ") : "";
  }

  /** sets a cookie as if the host had (a session from POST /api/auth/login) */
  setCookie(url: string, pair: string): void {
    const host = new URL(url).host;
    const forHost = this.jar.get(host) ?? new Map<string, string>();
    this.jar.set(host, forHost);
    const eq = pair.indexOf("=");
    forHost.set(pair.slice(0, eq), pair.slice(eq + 1));
  }

  /** the named cookie's value for the host, if any */
  cookie(url: string, name: string): string | undefined {
    return this.jar.get(new URL(url).host)?.get(name);
  }

  async request(url: string, init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {}): Promise<Response> {
    const headers: Record<string, string> = { ...(init.headers ?? {}) };
    const cookie = this.cookieHeader(url);
    if (cookie) headers.cookie = cookie;
    if (init.form) headers["content-type"] = "application/x-www-form-urlencoded";
    const res = await fetch(url, {
      method: init.method ?? (init.form ? "POST" : "GET"),
      headers,
      body: init.form ? new URLSearchParams(init.form).toString() : undefined,
      redirect: "manual",
    });
    const host = new URL(url).host;
    for (const set of res.headers.getSetCookie()) {
      const [pair, ...attrs] = set.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const forHost = this.jar.get(host) ?? new Map<string, string>();
      this.jar.set(host, forHost);
      const gone = value === "" || attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=thu, 01 jan 1970/i.test(a));
      if (gone) forHost.delete(name);
      else forHost.set(name, value);
    }
    return res;
  }

  /** Follows redirects from `url` until a response that is not one; returns it and the URL it came from. */
  async follow(url: string, stopAt?: (url: URL) => boolean): Promise<{ res: Response; url: string }> {
    let current = url;
    for (let i = 0; i < 20; i++) {
      if (stopAt?.(new URL(current))) return { res: new Response(null, { status: 204 }), url: current };
      const res = await this.request(current);
      const location = res.headers.get("location");
      if (res.status < 300 || res.status >= 400 || !location) return { res, url: current };
      await res.arrayBuffer();
      current = new URL(location, current).toString();
    }
    throw new Error("too many redirects");
  }
}

/**
 * Goes through the provider's login and consent pages (its development interactions) as `login`,
 * from the authorization URL to the redirect back to the app; returns the app's callback URL
 * (not yet requested).
 */
export async function passProvider(browser: Browser, authorizationUrl: string, login: string): Promise<string> {
  const isCallback = (u: URL) => u.pathname.startsWith("/auth/oidc/");
  let at = await browser.follow(authorizationUrl, isCallback);
  for (let step = 0; step < 4 && !isCallback(new URL(at.url)); step++) {
    const html = await at.res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    const prompt = /name="prompt" value="(\w+)"/.exec(html)?.[1];
    if (!action || !prompt) throw new Error(`no interaction form at ${at.url} (${at.res.status}): ${html.slice(0, 300)}`);
    const form: Record<string, string> = prompt === "login" ? { prompt, login, password: "any" } : { prompt };
    const posted = await browser.request(new URL(action, at.url).toString(), { form });
    const next = posted.headers.get("location");
    if (!next) throw new Error(`the provider answered ${posted.status} to ${prompt}: ${await posted.text()}`);
    at = await browser.follow(new URL(next, at.url).toString(), isCallback);
  }
  if (!isCallback(new URL(at.url))) throw new Error(`never sent back to the app (at ${at.url})`);
  return at.url;
}
