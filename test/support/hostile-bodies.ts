import { readFileSync } from "node:fs";
import zlib from "node:zlib";

/**
 * Bodies that cost the receiver more than the sender: stacked content-codings and decompression
 * bombs. Used by the hostile-load test and by `scripts/measure-decode.ts`.
 */

/**
 * `body` gzipped `layers` times, each layer optionally padded with `padBytes` zeros before it is
 * gzipped again (gunzip ignores zeros after a gzip member, so every layer inflates to the padding's
 * size). `encoding` lists one `gzip` per layer, as the header declares them.
 */
export function stackedGzip(body: Buffer, layers: number, padBytes = 0): { body: Buffer; encoding: string } {
  let out = body;
  for (let i = 0; i < layers; i++) {
    const inner = padBytes > 0 ? Buffer.concat([out, Buffer.alloc(Math.max(0, padBytes - out.length))]) : out;
    out = zlib.gzipSync(inner, { level: 9 });
  }
  return { body: out, encoding: Array(layers).fill("gzip").join(",") };
}

/**
 * About `compressedBytes` of gzip that inflate to about 1,000 times as many zeros: gzip members of
 * 64 MiB of zeros each, concatenated (a multi-member gzip stream is one valid body).
 */
export function gzipBomb(compressedBytes: number): Buffer {
  const member = zlib.gzipSync(Buffer.alloc(64 * 1024 * 1024), { level: 9 });
  const n = Math.max(1, Math.round(compressedBytes / member.length));
  return Buffer.concat(Array(n).fill(member));
}

/** A Sentry envelope of one event; `dsn` in its header when given. */
export function envelopeOf(message: string, dsn?: string): Buffer {
  const header = JSON.stringify({ event_id: "9ec79c33ec9942ab8353589fcb2e04dc", ...(dsn ? { dsn } : {}) });
  const event = JSON.stringify({ message, level: "error", platform: "other" });
  return Buffer.from(`${header}\n${JSON.stringify({ type: "event", length: Buffer.byteLength(event) })}\n${event}\n`);
}

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // fields after the command (which may hold spaces) start after the last ')'; utime and stime are 14 and 15
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** Linux's USER_HZ, the unit of /proc/<pid>/stat times (100 on every mainstream build). */
const CLOCK_TICKS = 100;

/** Resident memory of a process in MiB, from /proc/<pid>/status. */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)\s+kB/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}
