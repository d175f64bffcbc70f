import net from "node:net";

export type TcpProxy = {
  port: number;
  /** rewrites a postgres:// URL to go through the proxy */
  via: (url: string) => string;
  /** stop forwarding in both directions (new connections are accepted and held): a stalled server */
  stall: () => void;
  /** forward again, including everything held meanwhile */
  resume: () => void;
  close: () => Promise<void>;
};

/** A loopback TCP proxy to `target` that a test can stall, as a stopped database server would. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let stalled = false;
  const pending: (() => void)[] = [];
  const sockets = new Set<net.Socket>();

  const forward = (from: net.Socket, to: net.Socket) => {
    from.on("data", (chunk) => {
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
    forward(client, upstream);
    forward(upstream, client);
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
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
