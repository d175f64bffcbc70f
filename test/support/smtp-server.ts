import type { AddressInfo } from "node:net";
import { SMTPServer, type SMTPServerAddress } from "smtp-server";
import { simpleParser, type ParsedMail } from "mailparser";

/**
 * A real SMTP server (npm smtp-server) on 127.0.0.1 for the email channel's tests. It speaks SMTP as
 * any relay does: a login is required (AUTH PLAIN/LOGIN without TLS, as a local relay allows), and
 * what arrives is parsed with mailparser. Behaviour a test can ask for:
 * - a recipient whose local part starts with `reject` is refused with 550 (permanent);
 * - `busy(n)`: the next n messages are refused with 451 at DATA end (temporary);
 * - `refuseLogins = true`: every login fails with 535.
 */
export class LocalSmtp {
  readonly user = "alerts";
  readonly pass = "smtp-password-123";
  received: { envelope: { from: string; to: string[] }; mail: ParsedMail }[] = [];
  refuseLogins = false;
  /** every MAIL FROM … DATA the server saw, accepted or not */
  transactions = 0;
  private busyLeft = 0;
  private server: SMTPServer | undefined;
  port = 0;

  busy(n: number) {
    this.busyLeft = n;
  }

  /** smtp://user:pass@127.0.0.1:port, with a wrong password when asked */
  url(password = this.pass) {
    return `smtp://${this.user}:${encodeURIComponent(password)}@127.0.0.1:${this.port}`;
  }

  async start(port = 0): Promise<this> {
    this.server = new SMTPServer({
      secure: false,
      disabledCommands: ["STARTTLS"],
      allowInsecureAuth: true,
      authMethods: ["PLAIN", "LOGIN"],
      logger: false,
      onAuth: (auth, _session, cb) => {
        if (!this.refuseLogins && auth.username === this.user && auth.password === this.pass) return cb(null, { user: auth.username });
        const err = Object.assign(new Error("5.7.8 Authentication credentials invalid"), { responseCode: 535 });
        cb(err);
      },
      onRcptTo: (address: SMTPServerAddress, _session, cb) => {
        if (/^reject/i.test(address.address)) return cb(Object.assign(new Error(`5.1.1 <${address.address}>: Recipient address rejected: User unknown`), { responseCode: 550 }));
        cb();
      },
      onData: (stream, session, cb) => {
        this.transactions++;
        const chunks: Buffer[] = [];
        stream.on("data", (c: Buffer) => chunks.push(c));
        stream.on("end", async () => {
          if (this.busyLeft > 0) {
            this.busyLeft--;
            return cb(Object.assign(new Error("4.3.2 Try again later"), { responseCode: 451 }));
          }
          const mail = await simpleParser(Buffer.concat(chunks));
          this.received.push({
            envelope: { from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "", to: session.envelope.rcptTo.map((r) => r.address) },
            mail,
          });
          cb();
        });
      },
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once("error", reject);
      this.server!.listen(port, "127.0.0.1", () => resolve());
    });
    this.port = (this.server.server.address() as AddressInfo).port;
    return this;
  }

  /** Messages that arrived for an address. */
  for(address: string) {
    return this.received.filter((r) => r.envelope.to.includes(address));
  }

  async close() {
    const s = this.server;
    this.server = undefined;
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}
