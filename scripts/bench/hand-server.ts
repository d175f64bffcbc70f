/**
 * (b-hand): what a studio would write without the service, as the benchmark's anchor for a single
 * event's write (and, with the refused bodies, (b0-hand) for a POST that writes nothing). Plain
 * Express with `express.json()` and postgres.js: the key compared with one secret, the message and
 * level checked, a fingerprint hashed from message and first stack line, then one
 * counter upsert and one event insert per request, each its own autocommit statement. No batching,
 * no throttle, no rollups, no users, no idempotency. Started as a child process with the port as
 * the argument, BENCH_HAND_DATABASE_URL and BENCH_HAND_KEY in its environment.
 */
import { createHash } from "node:crypto";
import express from "express";
import postgres from "postgres";

const sql = postgres(process.env.BENCH_HAND_DATABASE_URL!, { max: 10, onnotice: () => {} });
const key = process.env.BENCH_HAND_KEY!;

await sql`create table if not exists hand_groups (
  fingerprint text primary key, message text not null, level text not null,
  count bigint not null, first_seen timestamptz not null, last_seen timestamptz not null)`;
await sql`create table if not exists hand_events (
  id bigserial primary key, fingerprint text not null, message text not null, level text not null,
  stack_trace text, user_id bigint, player_name text, environment text, game_version text, received_at timestamptz not null)`;

const app = express();
app.disable("x-powered-by");
app.use(express.json({ limit: "1mb" }));
app.get("/api/ingest", (_req, res) => void res.json({ status: "ok" }));
app.post("/api/ingest", async (req, res) => {
  if (req.get("x-api-key") !== key) return void res.status(401).json({ error: "unauthorized" });
  const e = req.body as Record<string, unknown>;
  if (typeof e?.message !== "string" || e.message === "") return void res.status(400).json({ error: "invalid_payload" });
  const stack = typeof e.stack_trace === "string" ? e.stack_trace : null;
  const level = e.level === undefined ? "error" : e.level;
  if (level !== "error" && level !== "warn" && level !== "info") return void res.status(400).json({ error: "invalid_payload" });
  const fingerprint = createHash("sha1").update(`${e.message}\n${stack?.split("\n")[0] ?? ""}`).digest("hex");
  try {
    await sql`insert into hand_groups (fingerprint, message, level, count, first_seen, last_seen)
      values (${fingerprint}, ${e.message}, ${level}, 1, now(), now())
      on conflict (fingerprint) do update set count = hand_groups.count + 1, last_seen = now()`;
    await sql`insert into hand_events (fingerprint, message, level, stack_trace, user_id, player_name, environment, game_version, received_at)
      values (${fingerprint}, ${e.message}, ${level}, ${stack}, ${typeof e.user_id === "number" ? e.user_id : null},
        ${typeof e.player_name === "string" ? e.player_name : null}, ${typeof e.environment === "string" ? e.environment : null},
        ${typeof e.game_version === "string" ? e.game_version : null}, now())`;
    res.json({ success: true });
  } catch {
    res.status(500).json({ error: "internal" });
  }
});
app.listen(Number(process.argv[2]), "127.0.0.1", () => console.log("listening"));
// exits, so that a CPU profile (--cpu-prof) is written
process.on("SIGTERM", () => process.exit(0));
