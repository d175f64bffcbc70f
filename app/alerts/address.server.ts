import ipaddr from "ipaddr.js";

/**
 * Whether an alert may be delivered to an IP address: only globally routed unicast. The ranges come
 * from ipaddr.js's `range()` classification (IANA special-purpose registries), not from a hand list:
 * anything it names (private, loopback, linkLocal, carrierGradeNat, reserved, uniqueLocal,
 * deprecatedSiteLocal, 6to4, teredo, rfc6052, benchmarking…) is refused.
 *
 * Forms that embed an IPv4 address are judged strictly: IPv4-mapped (`::ffff:a.b.c.d`) by the
 * embedded address; the deprecated IPv4-compatible block (`::a.b.c.d`, all of ::/96) is refused
 * outright, as are NAT64 and the tunnelling prefixes (they carry any IPv4 address, private ones
 * included). IPv6 must also lie in 2000::/3, the only block IANA allocates for global unicast.
 */
export function isPublicAddress(address: string): boolean {
  const host = canonical(address.replace(/^\[|\]$/g, "").replace(/%.*$/, ""));
  if (host === undefined || !ipaddr.isValid(host)) return false;
  const ip = ipaddr.parse(host);
  if (ip.kind() === "ipv6") {
    const v6 = ip as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) return isPublicV4(v6.toIPv4Address());
    if (v6.match(IPV4_COMPATIBLE)) return false;
    if (!v6.match(GLOBAL_UNICAST)) return false;
    return v6.range() === "unicast";
  }
  return isPublicV4(ip as ipaddr.IPv4);
}

/**
 * IPv6 in the WHATWG URL parser's canonical hex form: ipaddr.js reads a dotted tail such as
 * `::8.8.8.8` as IPv4-mapped, which would let an IPv4-compatible address pass as mapped.
 */
function canonical(host: string): string | undefined {
  if (!host.includes(":")) return host;
  try {
    return new URL(`http://[${host}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
}

const isPublicV4 = (ip: ipaddr.IPv4) => ip.range() === "unicast";

const IPV4_COMPATIBLE = ipaddr.parseCIDR("::/96") as [ipaddr.IPv6, number];
const GLOBAL_UNICAST = ipaddr.parseCIDR("2000::/3") as [ipaddr.IPv6, number];

/** A URL host that is an IP literal (IPv6 in brackets or dotted IPv4), or undefined for a name. */
export function ipLiteral(hostname: string): string | undefined {
  const h = hostname.replace(/^\[|\]$/g, "");
  return ipaddr.isValid(h) && (hostname.startsWith("[") || ipaddr.IPv4.isValidFourPartDecimal(h)) ? h : undefined;
}
