import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { queryOf } from "~/errors/params.server";
import { Form, Link, useLoaderData, useParams } from "@remix-run/react";
import { requirePageUser } from "~/accounts/sessions.server";
import { releaseHealthData } from "~/health/pages.server";
import { pageLoad } from "~/dashboard/page.server";
import { num } from "~/components/format";
import { Ago, At } from "~/components/time";
import { Pager } from "~/components/ui";
import { ageBucket, measure, pct, perThousand, SERIES_STEP_HOURS, WINDOW_CHOICES } from "~/components/health/format";
import { LineChart, type LineSeries } from "~/components/health/line-chart";
import { readingAsMember } from "~/services.server";

export const meta: MetaFunction = () => [{ title: "Release health · Roblox Monitor" }];

export const loader = async ({ request, params, context }: LoaderFunctionArgs) => {
  const user = await requirePageUser(context.services, request);
  return pageLoad(() =>
    readingAsMember(context.services, request, user, params.projectId, async (sql) => ({
      ...(await releaseHealthData(sql, user, params.projectId, queryOf(request))),
      now: new Date(),
    })),
  );
};

type Data = ReturnType<typeof useLoaderData<typeof loader>>;
type Release = Data["releases"][number];
type Health = Release["health"];
type Detail = Data["compare"][number];

const WINDOW_WORDS: Record<string, string> = { "24h": "last 24 hours", "7d": "last 7 days", "30d": "last 30 days" };
const HOURS: Record<string, number> = { "24h": 24, "7d": 168, "30d": 720 };

/**
 * Release health: per place version over a window, how many servers and players run it, how many
 * sessions ended without an error, errors per 1,000 player-minutes, abnormal and out-of-memory ends,
 * memory and heartbeat; two versions side by side with their hourly adoption, error rate and memory
 * by server age. Below, what each version broke (new issues, regressions), as the Versions page did.
 * Every choice is a GET form, so the page works without JavaScript.
 */
export default function ReleaseHealth() {
  const d = useLoaderData<typeof loader>();
  const { choices: c } = d;
  const base = `/projects/${useParams().projectId}`;
  const issues = (q: Record<string, string>) => `${base}/issues?${new URLSearchParams({ status: "all", ...q })}`;
  const versions = d.releases.map((r) => r.version);
  const options = (chosen: string) => (versions.includes(chosen) || !chosen ? versions : [chosen, ...versions]);
  const keep = (extra: Record<string, string>) => {
    const q = new URLSearchParams({ window: c.window });
    if (c.environment) q.set("environment", c.environment);
    for (const [k, v] of Object.entries(extra)) q.set(k, v);
    return `?${q}`;
  };
  return (
    <>
      <p className="muted small">
        Per place version (<code>game.PlaceVersion</code>) over the {WINDOW_WORDS[c.window]}: game servers and players report their
        health once a minute. A session is error-free when the player met no error in it; rates count the sessions that ended in the window.
        See <code>docs/health.md</code> for every definition.
      </p>
      {d.hasHealth ? (
        <Form method="get" className="filters panel health-filters" data-testid="health-form">
          <div>
            <label htmlFor="window">Window</label>
            <select id="window" name="window" defaultValue={c.window}>
              {WINDOW_CHOICES.map((w) => <option key={w} value={w}>{w}</option>)}
            </select>
          </div>
          <div>
            <label htmlFor="environment">Environment</label>
            <select id="environment" name="environment" defaultValue={c.environment}>
              <option value="">All</option>
              {d.environments.map((e) => <option key={e} value={e}>{e}</option>)}
            </select>
          </div>
          {versions.length > 1 ? (
            <>
              <div>
                <label htmlFor="a">Compare</label>
                <select id="a" name="a" defaultValue={c.a}>
                  {options(c.a).map((v) => <option key={v} value={v}>v{v}</option>)}
                </select>
              </div>
              <div>
                <label htmlFor="b">with</label>
                <select id="b" name="b" defaultValue={c.b}>
                  {options(c.b).map((v) => <option key={v} value={v}>v{v}</option>)}
                </select>
              </div>
            </>
          ) : null}
          {c.page > 1 ? <input type="hidden" name="page" value={c.page} /> : null}
          <div><button type="submit" className="primary">Show</button></div>
        </Form>
      ) : null}

      {!d.hasHealth ? <HealthEmpty /> : null}

      {d.total === 0 ? (
        <div className="panel"><p className="muted">No event carried a game version yet, and no game server reported its health.</p></div>
      ) : (
        <>
          {d.hasHealth ? (
            <section>
              <h2>Health by version</h2>
              <div className="table-wrap">
                <table className="panel health-table stack-narrow" data-testid="release-health">
                  <thead>
                    <tr>
                      <th>Version</th>
                      <th className="num">Live servers</th>
                      <th className="num">Players now</th>
                      <th className="num">Error-free sessions</th>
                      <th className="num">Error-free players</th>
                      <th className="num" title="Errors per 1,000 player-minutes">Errors / 1k player-min</th>
                      <th className="num">Abnormal ends</th>
                      <th className="num">Out of memory</th>
                      <th className="num">Memory p50 / p90</th>
                      <th className="num">Heartbeat p50 / p90</th>
                    </tr>
                  </thead>
                  <tbody>
                    {d.releases.map((r) => (
                      <tr key={r.version} data-version={r.version}>
                        <td><Link to={keep({ a: r.version, b: r.version === c.a ? c.b : c.a })}><strong>v{r.version}</strong></Link></td>
                        <td data-label="Live servers" className="num">{num(r.health.servers.live)} <span className="muted small">{pct(r.health.adoption.servers_share)}</span></td>
                        <td data-label="Players now" className="num">{num(r.health.players.live)} <span className="muted small">{pct(r.health.adoption.players_share)}</span></td>
                        <td data-label="Error-free sessions" className="num">{pct(r.health.sessions.error_free_rate)} <div className="muted small">{num(r.health.sessions.error_free)} of {num(r.health.sessions.ended)} · {num(r.health.sessions.open)} open</div></td>
                        <td data-label="Error-free players" className="num">{pct(r.health.players.error_free_rate)} <div className="muted small">{num(r.health.players.error_free)} of {num(r.health.players.distinct)}</div></td>
                        <td data-label="Errors / 1k player-min" className="num">{perThousand(r.health.errors_per_1000_player_minutes)} <div className="muted small">{num(r.health.player_minutes)} player-min</div></td>
                        <td data-label="Abnormal ends" className={`num${r.health.servers.abnormal ? " bad" : ""}`}>{num(r.health.servers.abnormal)}</td>
                        <td data-label="Out of memory" className={`num${r.health.servers.out_of_memory ? " bad" : ""}`}>{num(r.health.servers.out_of_memory)}</td>
                        <td data-label="Memory p50 / p90" className="num">{measure(r.health.memory_mb.p50, "MB", 0)} <div className="muted small">{measure(r.health.memory_mb.p90, "MB", 0)}</div></td>
                        <td data-label="Heartbeat p50 / p90" className="num">{measure(r.health.heartbeat_ms.p50, "ms")} <div className="muted small">{measure(r.health.heartbeat_ms.p90, "ms")}</div></td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            </section>
          ) : null}

          {d.hasHealth && d.compare.length ? <Compare compare={d.compare} window={c.window} now={d.now} /> : null}

          <section>
            <h2>Errors by version</h2>
            <p className="muted small">
              From each event's <code>game_version</code>, since the version's first error. The error rate is occurrences per hour between its
              first and last error.
            </p>
            <div className="table-wrap">
              <table className="panel" data-testid="releases">
                <thead>
                  <tr>
                    <th>Version</th>
                    <th className="num">New issues</th>
                    <th className="num">Regressions</th>
                    <th className="num hide-narrow">Issues seen</th>
                    <th className="num">Occurrences</th>
                    <th className="num hide-narrow">Per hour</th>
                    <th className="hide-narrow">First error</th>
                    <th className="hide-narrow">Last error</th>
                  </tr>
                </thead>
                <tbody>
                  {d.releases.map((r) => (
                    <tr key={r.version}>
                      <td><strong>{r.version}</strong></td>
                      <td className="num">{r.new_issues ? <Link to={issues({ version: r.version })}>{num(r.new_issues)}</Link> : 0}</td>
                      <td className="num">{num(r.regressions)}</td>
                      <td className="num hide-narrow">{num(r.issues)}</td>
                      <td className="num">{num(r.occurrences)}</td>
                      <td className="num hide-narrow">{num(r.per_hour)}</td>
                      <td className="small hide-narrow">{r.occurrences ? <At d={r.first_seen} /> : "—"}</td>
                      <td className="small hide-narrow">{r.occurrences ? <Ago d={r.last_seen} now={d.now} /> : "—"}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </section>
          <Pager page={c.page} total={d.total} pageSize={d.pageSize} href={(p) => keep({ page: String(p) })} noun="version" />
        </>
      )}
    </>
  );
}

function HealthEmpty() {
  return (
    <div className="panel health-empty" data-testid="health-empty">
      <h2>No health reports yet</h2>
      <p>
        Release health needs your game servers to report themselves: one server session per JobId, one player session per join, and a
        health sample a minute (players, memory, heartbeat).
      </p>
      <p>
        The Roblox SDK sends them by default once it is updated: replace the module with the latest{" "}
        <a href="/sdk/RobloxMonitor.luau" download="RobloxMonitor.luau">RobloxMonitor.luau</a> (or update it with Wally or Rojo) and publish the
        place. No code changes are needed; the SDK's README (<code>sdk/roblox/README.md</code>) lists what it sends and its options. Figures
        appear here within a minute of the first server starting.
      </p>
    </div>
  );
}

const HOUR = 3_600_000;

/** What one point of the compared series spans (SERIES_STEP_HOURS). */
const STEP_WORDS: Record<number, string> = { 1: "per hour", 6: "per 6 hours", 24: "per day" };

function Compare({ compare, window, now }: { compare: Detail[]; window: keyof typeof SERIES_STEP_HOURS; now: string | Date }) {
  const per = STEP_WORDS[SERIES_STEP_HOURS[window]];
  const [a, b] = compare;
  const tone = (i: number) => (i === 0 ? "a" : "b") as "a" | "b";
  const end = new Date(now).getTime();
  const start = Math.floor((end - HOURS[window] * HOUR) / HOUR) * HOUR;
  const hourTicks = timeTicks(start, end, window);
  const rows: [string, (h: Health) => React.ReactNode][] = [
    ["Live servers", (h) => <>{num(h.servers.live)} <span className="muted small">{pct(h.adoption.servers_share)}</span></>],
    ["Players now", (h) => <>{num(h.players.live)} <span className="muted small">{pct(h.adoption.players_share)}</span></>],
    ["Servers started", (h) => num(h.servers.started)],
    ["Servers ended", (h) => num(h.servers.ended)],
    ["Abnormal ends", (h) => num(h.servers.abnormal)],
    ["Out-of-memory closes", (h) => num(h.servers.out_of_memory)],
    ["Players", (h) => num(h.players.distinct)],
    ["Error-free players", (h) => <>{pct(h.players.error_free_rate)} <span className="muted small">{num(h.players.error_free)}</span></>],
    ["Sessions ended", (h) => <>{num(h.sessions.ended)} <span className="muted small">{num(h.sessions.open)} open</span></>],
    ["Error-free sessions", (h) => <>{pct(h.sessions.error_free_rate)} <span className="muted small">{num(h.sessions.error_free)}</span></>],
    ["Player-minutes", (h) => num(h.player_minutes)],
    ["Errors / 1,000 player-min", (h) => perThousand(h.errors_per_1000_player_minutes)],
    ["Memory p50", (h) => measure(h.memory_mb.p50, "MB")],
    ["Memory p90", (h) => measure(h.memory_mb.p90, "MB")],
    ["Heartbeat p50", (h) => measure(h.heartbeat_ms.p50, "ms")],
    ["Heartbeat p90", (h) => measure(h.heartbeat_ms.p90, "ms")],
  ];
  const at = (t: string | Date) => new Date(t).getTime();
  const adoption: LineSeries[] = compare.flatMap((v, i) => [
    { key: `${v.version}-servers`, label: `v${v.version} servers`, tone: tone(i), points: v.adoption.map((p) => ({ x: at(p.at), y: p.servers_share })) },
    { key: `${v.version}-players`, label: `v${v.version} players`, tone: tone(i), dashed: true, points: v.adoption.map((p) => ({ x: at(p.at), y: p.players_share })) },
  ]);
  const errors: LineSeries[] = compare.map((v, i) => ({
    key: v.version,
    label: `v${v.version}`,
    tone: tone(i),
    points: v.errors_per_1000_player_minutes.map((p) => ({ x: at(p.at), y: p.errors_per_1000_player_minutes })),
  }));
  const memory: LineSeries[] = compare.map((v, i) => ({
    key: v.version,
    label: `v${v.version}`,
    tone: tone(i),
    points: v.memory_by_age.map((p, k) => ({ x: k, y: p.memory_mb_p50 })),
  }));
  const buckets = a.memory_by_age.map((p, k) => ({ x: k, label: ageBucket(p.age_minutes_from, p.age_minutes_to).replace(" min", "") }));
  return (
    <section data-testid="compare">
      <h2>{b ? <>v{a.version} and v{b.version} side by side</> : <>v{a.version}</>}</h2>
      <div className="split health-compare">
        <div className="panel">
          <table className="compact compare-table" data-testid="compare-table">
            <thead>
              <tr>
                <th></th>
                {compare.map((v, i) => <th key={v.version} className={`num tone-${tone(i)}`}>v{v.version}</th>)}
              </tr>
            </thead>
            <tbody>
              {rows.map(([name, cell]) => (
                <tr key={name}>
                  <th scope="row">{name}</th>
                  {compare.map((v) => <td key={v.version} className="num">{cell(v.health)}</td>)}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <div>
          <div className="panel">
            <h3 className="chart-title">Adoption {per} <span className="muted small">share of server-minutes (solid) and player-minutes (dashed)</span></h3>
            <LineChart testId="adoption-chart" series={adoption} xTicks={hourTicks} xMin={start} xMax={end} yMax={1} yFormat={(v) => `${Math.round(v * 100)}%`} label={`Adoption ${per} of ${compare.map((v) => `v${v.version}`).join(" and ")}`} />
          </div>
          <div className="panel">
            <h3 className="chart-title">Errors per 1,000 player-minutes, {per}</h3>
            <LineChart testId="errors-chart" series={errors} xTicks={hourTicks} xMin={start} xMax={end} yFormat={(v) => perThousand(v)} label={`Errors per 1,000 player-minutes ${per}`} />
          </div>
          <div className="panel">
            <h3 className="chart-title">Memory by server age <span className="muted small">p50 MB by minutes since start; a rising line is a leak</span></h3>
            <LineChart testId="memory-age-chart" series={memory} xTicks={buckets} xMin={0} xMax={Math.max(1, buckets.length - 1)} yFormat={(v) => `${Math.round(v).toLocaleString("en-US")}`} label="Memory p50 by server age" />
          </div>
        </div>
      </div>
    </section>
  );
}

/** Time labels in UTC: every 6 hours over a day, every day over a week, every 5 days over a month. */
function timeTicks(start: number, end: number, window: string) {
  const pad = (n: number) => String(n).padStart(2, "0");
  const out: { x: number; label: string }[] = [];
  for (let t = start; t <= end; t += HOUR) {
    const d = new Date(t);
    if (window === "24h" ? d.getUTCHours() % 6 === 0 : d.getUTCHours() === 0 && (window === "7d" || d.getUTCDate() % 5 === 0)) {
      out.push({ x: t, label: window === "24h" ? `${pad(d.getUTCHours())}:00` : `${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}` });
    }
  }
  return out;
}
