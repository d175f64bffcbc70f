import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData, useParams } from "@remix-run/react";
import { requirePageUser } from "~/accounts/sessions.server";
import { tracesData } from "~/dashboard/views.server";
import { pageLoad } from "~/dashboard/page.server";
import { num } from "~/components/format";
import { Ago, At } from "~/components/time";
import { Pager } from "~/components/ui";
import { queryOf } from "~/errors/params.server";
import { readingAsMember } from "~/services.server";
import { Breakable } from "~/components/issue-text";

export const meta: MetaFunction = () => [{ title: "Traces · Roblox Monitor" }];

export const loader = async ({ request, params, context }: LoaderFunctionArgs) => {
  const user = await requirePageUser(context.services, request);
  return pageLoad(() => readingAsMember(context.services, request, user, params.projectId, async (sql) => ({ ...(await tracesData(sql, user, params.projectId, queryOf(request))), now: new Date() })));
};

/** Traces (events linked by trace_id across servers and issues), newest first. */
export default function Traces() {
  const { traces, total, totalExact, page, pageSize, now } = useLoaderData<typeof loader>();
  const base = `/projects/${useParams().projectId}`;
  return (
    <>
      {total === 0 ? (
        <div className="panel"><p className="muted">No event carried a <code>trace_id</code> yet. Send one to link events across servers and issues.</p></div>
      ) : traces.length ? (
        <div className="table-wrap">
          <table className="panel" data-testid="traces">
            <thead><tr><th>Trace</th><th>First issue</th><th className="num">Events</th><th className="num hide-narrow">Issues</th><th className="hide-narrow">Started</th></tr></thead>
            <tbody>
              {traces.map((t) => (
                <tr key={t.trace_id}>
                  <td><Link to={`${base}/traces/${t.trace_id}`}><code className="trace-id" title={t.trace_id}>{t.trace_id.slice(0, 8)}</code></Link><div className="small muted show-narrow"><Ago d={t.first_seen} now={now} /></div></td>
                  <td className="small"><span className="msg">{t.first_title ? <Breakable text={t.first_title} /> : "—"}</span></td>
                  <td className="num">{num(t.event_count)}</td>
                  <td className="num hide-narrow">{num(t.group_ids.length)}</td>
                  <td className="small hide-narrow"><At d={t.first_seen} /> <span className="muted">(<Ago d={t.first_seen} now={now} />)</span></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {total > 0 ? <Pager page={page} total={total} exact={totalExact} rows={traces.length} pageSize={pageSize} href={(p) => `?page=${p}`} noun="trace" /> : null}
    </>
  );
}
