import { describe, expect, it } from "vitest";
import { ipLiteral, isPublicAddress } from "../../app/alerts/address.server.js";
import { sendWebhook } from "../../app/alerts/send.server.js";

/** Every non-global range is refused, in every spelling a URL or a resolver can produce. */
const refused: [string, string][] = [
  ["0.0.0.0", "unspecified"],
  ["0.1.2.3", "this network"],
  ["10.1.2.3", "private"],
  ["100.64.0.1", "carrier-grade NAT"],
  ["127.0.0.1", "loopback"],
  ["127.255.255.254", "loopback"],
  ["169.254.169.254", "link-local (cloud metadata)"],
  ["172.16.0.1", "private"],
  ["192.0.0.8", "IETF protocol assignments"],
  ["192.0.2.1", "TEST-NET-1"],
  ["192.88.99.1", "6to4 relay"],
  ["192.168.1.1", "private"],
  ["198.18.0.1", "benchmarking"],
  ["198.51.100.1", "TEST-NET-2"],
  ["203.0.113.1", "TEST-NET-3"],
  ["224.0.0.1", "multicast"],
  ["240.0.0.1", "reserved"],
  ["255.255.255.255", "broadcast"],
  ["::", "unspecified"],
  ["::1", "loopback"],
  ["::127.0.0.1", "IPv4-compatible loopback"],
  ["::7f00:1", "IPv4-compatible loopback, hex"],
  ["::8.8.8.8", "IPv4-compatible (deprecated) even of a public address"],
  ["::ffff:127.0.0.1", "IPv4-mapped loopback"],
  ["::ffff:7f00:1", "IPv4-mapped loopback, hex"],
  ["::ffff:10.0.0.1", "IPv4-mapped private"],
  ["::ffff:0:127.0.0.1", "IPv4-translated (RFC 6145)"],
  ["64:ff9b::7f00:1", "NAT64 (RFC 6052)"],
  ["64:ff9b:1::a00:1", "local-use NAT64"],
  ["100::1", "discard-only"],
  ["2001::1", "Teredo"],
  ["2001:2::1", "benchmarking"],
  ["2001:db8::1", "documentation"],
  ["2002:7f00:1::1", "6to4"],
  ["fc00::1", "unique local"],
  ["fd12:3456::1", "unique local"],
  ["fe80::1", "link-local"],
  ["fe80::1%eth0", "link-local with a zone"],
  ["fec0::1", "site-local (deprecated)"],
  ["ff02::1", "multicast"],
  ["1::1", "outside 2000::/3"],
  ["3fff::1", "documentation (RFC 9637)"],
  ["not an address", "not an IP address"],
];

describe("webhook destination filter", () => {
  it.each(refused)("refuses %s (%s)", (address) => {
    expect(isPublicAddress(address)).toBe(false);
  });

  it.each(["8.8.8.8", "1.1.1.1", "162.159.128.233", "2606:4700::6810:84e5", "2001:4860:4860::8888", "::ffff:8.8.8.8"])("allows the global unicast address %s", (address) => {
    expect(isPublicAddress(address)).toBe(true);
  });

  it("reads IP literals the way URLs spell them", () => {
    expect(ipLiteral(new URL("https://[::127.0.0.1]/").hostname)).toBe("::7f00:1");
    expect(ipLiteral(new URL("https://2130706433/").hostname)).toBe("127.0.0.1");
    expect(ipLiteral(new URL("https://0x7f.1/").hostname)).toBe("127.0.0.1");
    expect(ipLiteral(new URL("https://discord.com/").hostname)).toBeUndefined();
  });

  it.each([
    "https://[::127.0.0.1]/hook",
    "https://[::ffff:127.0.0.1]/hook",
    "https://[fec0::1]/hook",
    "https://[64:ff9b::7f00:1]/hook",
    "https://[2002:7f00:1::1]/hook",
    "https://2130706433/hook",
    "https://0x7f.1/hook",
    "https://100.64.0.1/hook",
  ])("the sender refuses %s before connecting", async (url) => {
    const r = await sendWebhook({ url, body: "{}" }, { allowPrivate: false });
    expect(r).toMatchObject({ ok: false, attempts: 0 });
    expect(r.error).toMatch(/private or loopback/);
  });
});
