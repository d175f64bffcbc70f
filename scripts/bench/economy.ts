/**
 * (h) The economy reads (the summary over the total and over one currency read from the balances;
 * the anomalies over every currency and over one) at 10,000 players with 10,000 and with
 * BENCH_ECONOMY_HISTORY history rows, compared row by row. The economies are generated inside
 * PostgreSQL (snapshots and a balance history shaped as the push writes them), and both hold the same
 * anomalies under the thresholds the anomaly queries name (learned ones would differ between a
 * history of one row per player and a long one), so the ratio measures the history's size.
 */
import type { Sql } from "../../db/client.js";
import { compareRows, createProject, fmt, measureQueries, type Bench } from "./harness.js";

const ECONOMY_PLAYERS = 10_000;

const QUERIES = [
  { name: "economy summary", path: "/api/v1/economy/summary?days=30" },
  { name: "economy anomalies, all currencies", path: "/api/v1/economy/anomalies?days=30&factor=10&min_amount=100000" },
  { name: "economy summary, gems", path: "/api/v1/economy/summary?days=30&currency=gems" },
  { name: "economy anomalies, gems", path: "/api/v1/economy/anomalies?days=30&currency=gems&factor=10&min_amount=100000" },
];

export async function runEconomyReads(b: Bench, history: number) {
  const { sql } = b;
  const perPlayer = Math.max(1, Math.round(history / ECONOMY_PLAYERS));
  const eSmall = await createProject(b, "bench-economy-small");
  const eBig = await createProject(b, "bench-economy-large");
  await b.step("(h) generating 10,000 players with one history row each", async () => {
    await generateEconomy(sql, eSmall.project_id, ECONOMY_PLAYERS, 1);
    await sql`vacuum analyze`;
  });
  const hSmall = await b.step("(h) economy reads at 10,000 history rows", () => measureQueries(b, eSmall.api_key, QUERIES));
  await b.step(`(h) generating 10,000 players with ${fmt(perPlayer)} history rows each`, async () => {
    await generateEconomy(sql, eBig.project_id, ECONOMY_PLAYERS, perPlayer);
    await sql`vacuum analyze`;
  });
  const hBig = await b.step(`(h) economy reads at ${fmt(perPlayer * ECONOMY_PLAYERS)} history rows`, () => measureQueries(b, eBig.api_key, QUERIES));
  const rows = compareRows(`(h) 10k -> ${fmt(perPlayer * ECONOMY_PLAYERS)} history:`, QUERIES.map((q) => q.name), hSmall, hBig, () => true);
  return { rows, results: { hSmall, hBig, economyHistory: perPlayer * ECONOMY_PLAYERS } };
}

/** The map of the generated economies: the seed's cash (a column) and gems (read from the balances). */
const GENERATED_MAP = {
  currencies: [
    { key: "cash", name: "Cash", paths: ["Wallet.Cash"] },
    { key: "gems", name: "Gems", paths: ["Wallet.Gems"] },
  ],
  names: [],
  data_code: null,
  match: ["Wallet"],
};

/**
 * `players` snapshots and `perPlayer` history rows each over the last 30 days (the latest equal to
 * the snapshot), in two currencies (GENERATED_MAP). The same 200 players end on a
 * duplication-sized jump whatever the history's size (every 100th player's cash, every 100th + 50th
 * player's gems, in their last observation; these players have at least two observations), so the
 * small and the large economy hold the same anomalies and comparing them measures the history's size,
 * not the answer's. Rows carry what any writer leaves: balances, the previous observation and the
 * day's starting point, so the insert trigger only adds the per-currency rises and daily aggregates.
 */
async function generateEconomy(sql: Sql, projectId: string, players: number, perPlayer: number) {
  // n: the player's observations; the last one of a spiking player is the jump
  const cash = (u: string, j: string) => `(case when ${u} % 100 = 0 and ${j} = n then 50000000 else 1000 + (${u} * 31 + ${j} * 17) % 5000 end)::numeric`;
  const gems = (u: string, j: string) => `(case when ${u} % 100 = 50 and ${j} = n then 20000000 else (${u} * 7 + ${j} * 3) % 300 end)::numeric`;
  const at = (j: string) => `now() - make_interval(secs => (30 * 86400.0 * (n - ${j}) / n)::double precision)`;
  const balances = (c: string, g: string) => `jsonb_build_object('cash', ${c}::text, 'bank', '0', 'dark_coin', '0', 'gems', ${g}::text)`;
  await sql.unsafe(
    `insert into economy_history (project_id, user_id, cash, bank, dark_coin, total, balances, observed_at, source,
       prev_total, prev_observed_at, prev_balances, day_start)
     with p as (
       select u, case when u % 50 = 0 then greatest($2::int, 2) else $2::int end as n from generate_series(1, $3::int) u
     ), g as (
       select u, j, ${cash("u", "j")} as cash, ${gems("u", "j")} as gems, ${at("j")} as at,
         case when j > 1 then ${cash("u", "(j - 1)")} end as prev_cash, case when j > 1 then ${gems("u", "(j - 1)")} end as prev_gems,
         case when j > 1 then ${at("(j - 1)")} end as prev_at
       from p cross join lateral generate_series(1, n) j
     ), d as (
       -- the day starts where the player's last observation before it left them, or, on the player's
       -- first day, at their opening balance (the first observation itself)
       select *, first_value(coalesce(prev_cash, cash)) over w as start_cash, first_value(coalesce(prev_gems, gems)) over w as start_gems
       from g window w as (partition by u, (at at time zone 'UTC')::date order by j)
     )
     select $1::uuid, u, cash, 0, 0, cash + gems, ${balances("cash", "gems")}, at, 'push',
       prev_cash + prev_gems, prev_at, case when j > 1 then ${balances("prev_cash", "prev_gems")} end,
       ${balances("start_cash", "start_gems")} || jsonb_build_object('total', (start_cash + start_gems)::text)
     from d order by j, u`,
    [projectId, perPlayer, players],
  );
  await sql`
    insert into economy_snapshots (project_id, user_id, cash, bank, dark_coin, total, balances, observed_at, source, last_logout,
      history_observed_at, day_start, first_observed_at, username)
    select distinct on (user_id) project_id, user_id, cash, bank, dark_coin, total, balances, observed_at, 'push', observed_at,
      observed_at, day_start, now() - interval '30 days' + make_interval(secs => (30 * 86400.0 / ${perPlayer})::double precision),
      'player' || user_id
    from economy_history where project_id = ${projectId} order by user_id, id desc`;
  await sql`insert into economy_maps (project_id, map) values (${projectId}, ${sql.json(GENERATED_MAP)})
    on conflict (project_id) do update set map = excluded.map`;
}
