import net from "node:net";

export type TcpProxy = {
  port: number;
  /** rewrites a postgres:// URL to go through the proxy */
  via: (url: string) => string;
  /** stop forwarding in both directions (new connections are accepted and held): a stalled server */
  stall: () => void;
  /** forward again, including everything held meanwhile */
  resume: () => void;
  /**
   * The next time a client sends COMMIT, its connection is cut before any answer reaches it: with
   * `deliver`, the COMMIT goes on to the server (which commits; the client cannot know); without, it
   * is dropped and the server side is left open (the backend waits, idle in its transaction).
   * `skip` lets that many COMMITs pass first. Resolves once it happened.
   */
  cutOnCommit: (opts: { deliver: boolean; skip?: number }) => Promise<void>;
  close: () => Promise<void>;
};

/** A loopback TCP proxy to `target` that a test can stall, as a stopped database server would. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let stalled = false;
  const pending: (() => void)[] = [];
  const sockets = new Set<net.Socket>();
  let cut: { deliver: boolean; skip: number; done: () => void } | null = null;
  // a COMMIT is sent as a simple query, or as a prepared statement: parsed once under a name, then bound by it
  const commitStatements = new Set<string>();
  const isCommit = (text: string) => {
    for (const m of text.matchAll(/P[\s\S]{4}([^\0]*)\0commit\0/gi)) commitStatements.add(m[1]);
    if (/\bcommit\b/i.test(text)) return true;
    return [...commitStatements].some((name) => name !== "" && text.includes(`\0${name}\0`));
  };

  const forward = (from: net.Socket, to: net.Socket, fromClient: boolean) => {
    from.on("data", (chunk: Buffer) => {
      if (fromClient && cut && isCommit(chunk.toString("latin1")) && cut.skip-- <= 0) {
        const { deliver, done } = cut;
        cut = null;
        if (deliver) to.write(chunk);
        // the server's answer has nowhere to go: the client's side is gone
        to.removeAllListeners("data");
        to.on("data", () => {});
        from.destroy();
        return done();
      }
      if (stalled) pending.push(() => to.write(chunk));
      else to.write(chunk);
    });
    from.on("end", () => (stalled ? pending.push(() => to.end()) : to.end()));
    from.on("error", () => to.destroy());
    from.on("close", () => sockets.delete(from));
  };

  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    sockets.add(client).add(upstream);
    forward(client, upstream, true);
    forward(upstream, client, false);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;

  return {
    port,
    via: (url) => {
      const u = new URL(url);
      u.hostname = "127.0.0.1";
      u.port = String(port);
      return u.toString();
    },
    stall: () => {
      stalled = true;
    },
    resume: () => {
      stalled = false;
      for (const f of pending.splice(0)) f();
    },
    cutOnCommit: ({ deliver, skip = 0 }) => new Promise<void>((done) => (cut = { deliver, skip, done })),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
