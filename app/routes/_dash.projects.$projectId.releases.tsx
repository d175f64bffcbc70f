import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData, useParams } from "@remix-run/react";
import { requirePageUser } from "~/accounts/sessions.server";
import { releasesData } from "~/dashboard/views.server";
import { pageLoad } from "~/dashboard/page.server";
import { num } from "~/components/format";
import { Ago, At } from "~/components/time";
import { Pager } from "~/components/ui";
import { queryOf } from "~/errors/params.server";
import { readingAsMember } from "~/services.server";

export const meta: MetaFunction = () => [{ title: "Versions · Roblox Monitor" }];

export const loader = async ({ request, params, context }: LoaderFunctionArgs) => {
  const user = await requirePageUser(context.services, request);
  return pageLoad(() => readingAsMember(context.services, request, user, params.projectId, async (sql) => ({ ...(await releasesData(sql, user, params.projectId, queryOf(request))), now: new Date() })));
};

/** Game versions, newest first: what each one broke (new issues), brought back (regressions) and how often it errs. */
export default function Releases() {
  const { data, total, page, pageSize, now } = useLoaderData<typeof loader>();
  const base = `/projects/${useParams().projectId}`;
  const issues = (q: Record<string, string>) => `${base}/issues?${new URLSearchParams({ status: "all", ...q })}`;
  return (
    <>
      <p className="muted small">
        Versions come from each event's <code>game_version</code> (the SDK sends <code>game.PlaceVersion</code>). The error rate is
        occurrences per hour between the version's first and last error.
      </p>
      {total === 0 ? (
        <div className="panel"><p className="muted">No event carried a game version yet.</p></div>
      ) : data.length ? (
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
              {data.map((r) => (
                <tr key={r.version}>
                  <td><strong>{r.version}</strong></td>
                  <td className="num">{r.new_issues ? <Link to={issues({ version: r.version })}>{num(r.new_issues)}</Link> : 0}</td>
                  <td className="num">{num(r.regressions)}</td>
                  <td className="num hide-narrow">{num(r.issues)}</td>
                  <td className="num">{num(r.occurrences)}</td>
                  <td className="num hide-narrow">{num(r.per_hour)}</td>
                  <td className="small hide-narrow"><At d={r.first_seen} /></td>
                  <td className="small hide-narrow"><Ago d={r.last_seen} now={now} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {total > 0 ? <Pager page={page} total={total} pageSize={pageSize} href={(p) => `?page=${p}`} noun="version" /> : null}
    </>
  );
}
