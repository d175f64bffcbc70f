import type { LoaderFunctionArgs } from "@remix-run/node";
import { Link, useLoaderData, useParams } from "@remix-run/react";
import { requirePageUser } from "~/accounts/sessions.server";
import { traceData } from "~/dashboard/views.server";
import { pageLoad } from "~/dashboard/page.server";
import { num } from "~/components/format";
import { At } from "~/components/time";
import { EventList } from "~/components/ui";
import { readingAsMember } from "~/services.server";

export const loader = async ({ request, params, context }: LoaderFunctionArgs) => {
  const user = await requirePageUser(context.services, request);
  return pageLoad(() => readingAsMember(context.services, request, user, params.projectId, async (sql) => ({ ...(await traceData(sql, user, params.projectId, params.traceId)), now: new Date() })));
};

/** Every stored event of one trace, across issues, in time order. */
export default function Trace() {
  const { trace, events, now } = useLoaderData<typeof loader>();
  const base = `/projects/${useParams().projectId}`;
  return (
    <>
      <p className="small"><Link to={`${base}/traces`}>← Traces</Link></p>
      <div className="panel">
        <h2 style={{ marginTop: 0 }}>Trace <code>{trace.trace_id}</code></h2>
        <dl className="facts">
          <dt>Events</dt><dd>{num(trace.event_count)}</dd>
          <dt>Issues involved</dt><dd>{trace.group_ids.length}</dd>
          <dt>First event</dt><dd><At d={trace.first_seen} seconds /></dd>
          <dt>Last event</dt><dd><At d={trace.last_seen} seconds /></dd>
        </dl>
      </div>
      <table className="panel">
        <thead><tr><th>Time</th><th>Issue</th><th>Player</th></tr></thead>
        <tbody>
          {events.map((e) => (
            <tr key={e.id}>
              <td className="small"><At d={e.timestamp} seconds /></td>
              <td><Link className="msg" to={`${base}/issues/${e.group_id}`}>{e.message}</Link> <span className="small muted">{e.level}</span></td>
              <td className="small">{e.player_name ?? (e.user_id ? String(e.user_id) : "—")}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Details</h2>
      <EventList events={events} now={now} playerHref={(u) => `${base}/players/${u}`} />
    </>
  );
}
