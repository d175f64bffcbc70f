import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { queryOf } from "~/errors/params.server";
import { Link, useLoaderData, useParams } from "@remix-run/react";
import { requirePageUser } from "~/accounts/sessions.server";
import { liveServersData } from "~/health/pages.server";
import { pageLoad } from "~/dashboard/page.server";
import { num, plural } from "~/components/format";
import { Ago, At } from "~/components/time";
import { LevelBadge, Pager, StatusBadge } from "~/components/ui";
import { measure, uptime } from "~/components/health/format";
import { readingAsMember } from "~/services.server";

export const meta: MetaFunction = () => [{ title: "Live servers · Roblox Monitor" }];

export const loader = async ({ request, params, context }: LoaderFunctionArgs) => {
  const user = await requirePageUser(context.services, request);
  return pageLoad(() =>
    readingAsMember(context.services, request, user, params.projectId, async (sql) => ({
      ...(await liveServersData(sql, user, params.projectId, queryOf(request))),
      now: new Date(),
    })),
  );
};

/**
 * Game servers running now (from their health reports, one a minute), each with its errors of the
 * last 10 minutes and a link to the issues it met; below, the servers that went silent without
 * closing (ended abnormally), latest first.
 */
export default function LiveServers() {
  const d = useLoaderData<typeof loader>();
  const base = `/projects/${useParams().projectId}`;
  const errorsOf = (job: string) => `?${new URLSearchParams({ job })}#server-errors`;
  return (
    <>
      <p className="muted small">
        Servers report their players, memory and heartbeat once a minute. A server that sends no report for 3 minutes without closing
        ended abnormally (a crash or a lost connection); a later report brings it back.
      </p>
      {!d.hasHealth ? (
        <div className="panel health-empty" data-testid="health-empty">
          <p>
            No game server has reported its health yet. Update the SDK (the latest{" "}
            <a href="/sdk/RobloxMonitor.luau" download="RobloxMonitor.luau">RobloxMonitor.luau</a>): it reports servers and players by default.
            See <Link to={`${base}/releases`}>Release health</Link> for what it sends.
          </p>
        </div>
      ) : null}

      {d.errors ? (
        <section className="panel" id="server-errors" data-testid="server-errors">
          <h2>Errors on server <code>{d.errors.job_id}</code></h2>
          <p className="muted small">
            {d.errors.known ? <>Events from this JobId since the server started</> : <>Events from this JobId in the last 24 hours</>}
            : {plural(d.errors.occurrences, "occurrence")} in {plural(d.errors.issues.length, "issue")}. <Link to="?">Close</Link>
          </p>
          {d.errors.issues.length ? (
            <div className="table-wrap">
              <table className="stack-narrow">
                <thead>
                  <tr>
                    <th>Issue</th>
                    <th className="num">On this server</th>
                    <th>Last</th>
                  </tr>
                </thead>
                <tbody>
                  {d.errors.issues.map((i) => (
                    <tr key={i.id}>
                      <td>
                        <LevelBadge level={i.level} /> <StatusBadge status={i.status} />{" "}
                        <Link to={`${base}/issues/${i.id}`} className="msg">{i.title}</Link>
                      </td>
                      <td className="num" data-label="On this server">{num(i.occurrences)}</td>
                      <td className="small" data-label="Last"><Ago d={i.last_seen} now={d.now} /></td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : (
            <p className="muted">No stored event came from this server.</p>
          )}
        </section>
      ) : null}

      <section>
        <h2>Running now <span className="muted small">{plural(d.liveTotal, "server")}</span></h2>
        {d.live.length ? (
          <div className="table-wrap">
            <table className="panel servers-table stack-narrow" data-testid="live-servers">
              <thead>
                <tr>
                  <th>Server (JobId)</th>
                  <th>Version</th>
                  <th className="num">Players</th>
                  <th className="num">Uptime</th>
                  <th className="num">Memory</th>
                  <th className="num">Heartbeat</th>
                  <th className="num">Errors 10 min</th>
                  <th className="hide-narrow">Last report</th>
                </tr>
              </thead>
              <tbody>
                {d.live.map((s) => (
                  <tr key={s.job_id} data-job={s.job_id}>
                    <td><Link to={errorsOf(s.job_id)} title="This server's errors"><code className="job">{s.job_id}</code></Link>{s.environment !== "production" ? <div className="muted small">{s.environment}</div> : null}</td>
                    <td data-label="Version">v{s.place_version}</td>
                    <td data-label="Players" className="num">{s.players === null ? "—" : num(s.players)}</td>
                    <td data-label="Uptime" className="num">{uptime(s.uptime_s)}</td>
                    <td data-label="Memory" className="num">{measure(s.memory_mb, "MB", 0)}</td>
                    <td data-label="Heartbeat" className="num">{measure(s.heartbeat_ms, "ms")}</td>
                    <td data-label="Errors 10 min" className={`num${s.errors_10m ? " bad" : ""}`}>{s.errors_10m ? <Link to={errorsOf(s.job_id)}>{num(s.errors_10m)}</Link> : 0}</td>
                    <td data-label="Last report" className="small hide-narrow"><Ago d={s.last_seen} now={d.now} /></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : (
          <div className="panel"><p className="muted">No game server is running now.</p></div>
        )}
        <Pager page={d.page} total={d.liveTotal} pageSize={d.pageSize} href={(p) => `?page=${p}`} noun="server" />
      </section>

      <section>
        <h2>Ended abnormally <span className="muted small">{d.abnormalTotal > d.abnormal.length ? `latest ${d.abnormal.length} of ${num(d.abnormalTotal)}` : plural(d.abnormalTotal, "server")}</span></h2>
        {d.abnormal.length ? (
          <div className="table-wrap">
            <table className="panel servers-table stack-narrow" data-testid="abnormal-servers">
              <thead>
                <tr>
                  <th>Server (JobId)</th>
                  <th>Version</th>
                  <th>Last report</th>
                  <th className="num">Uptime</th>
                  <th className="num">Players</th>
                  <th className="num">Memory</th>
                  <th className="hide-narrow">Started</th>
                </tr>
              </thead>
              <tbody>
                {d.abnormal.map((s) => (
                  <tr key={s.job_id} data-job={s.job_id}>
                    <td><Link to={errorsOf(s.job_id)} title="This server's errors"><code className="job">{s.job_id}</code></Link></td>
                    <td data-label="Version">v{s.place_version}</td>
                    <td data-label="Last report" className="small"><Ago d={s.last_seen} now={d.now} /></td>
                    <td data-label="Uptime" className="num">{uptime(s.uptime_s)}</td>
                    <td data-label="Players" className="num">{s.players === null ? "—" : num(s.players)}</td>
                    <td data-label="Memory" className="num">{measure(s.memory_mb, "MB", 0)}</td>
                    <td data-label="Started" className="small hide-narrow"><At d={s.started_at} /></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : (
          <div className="panel"><p className="muted">No server ended abnormally.</p></div>
        )}
      </section>
    </>
  );
}
