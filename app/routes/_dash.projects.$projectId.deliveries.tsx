import { data, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Link, useLoaderData, useParams } from "@remix-run/react";
import { requirePageUser } from "~/accounts/sessions.server";
import { ApiError } from "~/http.server";
import { listProjectDeliveries } from "~/alerts/deliveries.server";
import { At } from "~/components/time";
import { queryOf } from "~/errors/params.server";
import { readingAsMember } from "~/services.server";

export const meta: MetaFunction = () => [{ title: "Alert deliveries · Roblox Monitor" }];

export const loader = async ({ request, params, context }: LoaderFunctionArgs) => {
  const user = await requirePageUser(context.services, request);
  try {
    return await readingAsMember(context.services, request, user, params.projectId, (sql) => listProjectDeliveries({ sql }, user, params.projectId, queryOf(request)));
  } catch (err) {
    if (ApiError.is(err)) throw data({ code: err.code, message: err.message }, { status: err.status });
    throw err;
  }
};


/** What an economy alert was about, from its subject (`rise:<id>`, `unexplained:<id>`, `supply:<currency>:<day>`). */
function subjectLabel(subject: string): string {
  const [kind, ...rest] = subject.split(":");
  if (kind === "rise") return `Anomaly (rise ${rest[0]})`;
  if (kind === "unexplained") return `Unexplained gain ${rest[0]}`;
  if (kind === "supply") return `Supply of ${rest.slice(0, -1).join(":")} on ${rest[rest.length - 1]}`;
  if (kind === "summary") return `Summary of ${rest[0]} economy alerts`;
  // health alerts: `fired:<subject>` / `recovered:<subject>`, the subject `version:<v>`, `server:<job_id>`, `project` or `summary:<n>`
  if (kind === "fired" || kind === "recovered") {
    const [what, ...name] = rest;
    const about = what === "version" ? `version ${name.join(":")}` : what === "server" ? `server ${name.join(":")}` : what === "summary" ? `${name[0]} subjects` : "live servers";
    return `${kind === "fired" ? "Fired" : "Recovered"}: ${about}`;
  }
  return subject;
}

/** Every alert delivery attempt, newest first: what was sent where, and what the destination answered. */
export default function Deliveries() {
  const { data: rows, next_before } = useLoaderData<typeof loader>();
  const base = `/projects/${useParams().projectId}`;
  return (
    <section className="panel">
      <p className="row">
        <Link to={`${base}/alerts`}>Alerts</Link>
        <strong>Delivery log</strong>
      </p>
      {rows.length === 0 ? <p className="muted">No deliveries yet. Send a test alert from a channel.</p> : null}
      <div className="table-wrap">
      <table>
        <thead><tr><th>Time</th><th>About</th><th>Trigger</th><th>Rule</th><th>Channel</th><th>Status</th><th>Response</th><th>Attempts</th><th>Error</th></tr></thead>
        <tbody>
          {rows.map((d) => (
            <tr key={d.id} data-testid="delivery">
              <td className="small"><At d={d.created_at} seconds /></td>
              <td className={d.subject ? "small" : "small msg"}>
                {d.subject ? (
                  <span data-testid="delivery-subject">
                    {subjectLabel(d.subject)}
                    {d.subject_user_id ? (
                      <> · <Link to={`${base}/economy/players/${d.subject_user_id}`}>player {d.subject_user_id}</Link>, {d.subject_currency}</>
                    ) : null}
                  </span>
                ) : d.group_id ? (
                  d.group_title !== null ? <Link to={`${base}/issues/${d.group_id}`}>{d.group_title.length > 80 ? `${d.group_title.slice(0, 80)}…` : d.group_title}</Link> : <span className="muted">deleted issue</span>
                ) : <span className="muted">test</span>}
              </td>
              <td data-testid="delivery-trigger" title={d.trigger}>{d.trigger_name}</td>
              <td>{d.rule_name ?? (d.rule_id ? <span className="muted">deleted</span> : "—")}</td>
              <td>{d.channel_name ?? <span className="muted">deleted</span>}</td>
              <td><span className={`badge status-${d.status === "sent" ? "resolved" : "open"}`}>{d.status}</span></td>
              <td>{d.response_code ?? "—"}</td>
              <td>{d.attempts}</td>
              <td className="small">{d.error ?? ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
      </div>
      {next_before ? <p><Link to={`?before=${next_before}`}>Older deliveries</Link></p> : null}
    </section>
  );
}
