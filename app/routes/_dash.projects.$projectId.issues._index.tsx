import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useParams, useSearchParams } from "@remix-run/react";
import { requirePageUser } from "~/accounts/sessions.server";
import { issuesData } from "~/dashboard/views.server";
import { formObject, pageAct, pageLoad } from "~/dashboard/page.server";
import { bulkGroupStatus } from "~/team/groups.server";
import { mergeIssues } from "~/team/merge.server";
import { ago, num } from "~/components/format";
import { ActionMessage, LevelBadge, StatusBadge } from "~/components/ui";

export const loader = async ({ request, params, context }: LoaderFunctionArgs) => {
  const user = await requirePageUser(context.services, request);
  return pageLoad(async () => ({
    ...(await issuesData(context.services.sql, user, params.projectId, new URL(request.url).searchParams)),
    now: new Date(),
  }));
};

/** Bulk resolve / ignore / reopen, or merge, of the ticked issues: the Team API's verbs. */
export const action = ({ request, params, context }: ActionFunctionArgs) =>
  pageAct("bulk", async () => {
    const user = await requirePageUser(context.services, request);
    const form = formObject(await request.formData(), ["ids"]);
    if (!Array.isArray(form.ids) || form.ids.length === 0) return { ok: false as const, error: "Tick at least one issue first.", intent: "bulk" };
    if (form.intent === "merge") {
      const m = await mergeIssues(context.services.sql, user, params.projectId, { ids: form.ids });
      return { ok: true as const, message: `Merged ${m.merged.length + 1} issues into “${m.group.message.slice(0, 80)}”.`, intent: "bulk" };
    }
    const r = await bulkGroupStatus(context.services.sql, user, params.projectId, { ids: form.ids, status: form.intent });
    const verb = r.status === "open" ? "Reopened" : r.status === "resolved" ? "Resolved" : "Ignored";
    return { ok: true as const, message: `${verb} ${r.updated} issue${r.updated === 1 ? "" : "s"}.`, intent: "bulk" };
  });

export default function Issues() {
  const { filters, page, pageSize, total, groups, environments, now } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const [params] = useSearchParams();
  const base = `/projects/${useParams().projectId}/issues`;
  const pageHref = (p: number) => {
    const q = new URLSearchParams(params);
    q.set("page", String(p));
    return `?${q}`;
  };
  const pages = Math.max(1, Math.ceil(total / pageSize));
  return (
    <>
      <Form method="get" className="filters panel" role="search">
        <div>
          <label htmlFor="search">Search messages</label>
          <input id="search" name="search" type="search" defaultValue={filters.search} placeholder="attempt to index nil" />
        </div>
        <div>
          <label htmlFor="status">Status</label>
          <select id="status" name="status" defaultValue={filters.status}>
            <option value="open">Open</option>
            <option value="resolved">Resolved</option>
            <option value="ignored">Ignored</option>
            <option value="all">All</option>
          </select>
        </div>
        <div>
          <label htmlFor="level">Level</label>
          <select id="level" name="level" defaultValue={filters.level}>
            <option value="">Any</option>
            <option value="error">Error</option>
            <option value="warn">Warn</option>
            <option value="info">Info</option>
          </select>
        </div>
        <div>
          <label htmlFor="environment">Environment</label>
          <select id="environment" name="environment" defaultValue={filters.environment}>
            <option value="">Any</option>
            {environments.map((e) => <option key={e} value={e}>{e}</option>)}
          </select>
        </div>
        <div>
          <label htmlFor="sort">Sort by</label>
          <select id="sort" name="sort" defaultValue={filters.sort}>
            <option value="last_seen">Last seen</option>
            <option value="first_seen">First seen</option>
            <option value="count">Occurrences</option>
          </select>
        </div>
        <button type="submit">Apply</button>
      </Form>

      <ActionMessage data={result} intent="bulk" />
      <Form method="post">
        <div className="row between" style={{ marginBottom: 8 }}>
          <span className="muted small">{num(total)} issue{total === 1 ? "" : "s"}</span>
          <div className="row">
            <span className="small muted">With ticked:</span>
            <button type="submit" name="intent" value="resolved">Resolve</button>
            <button type="submit" name="intent" value="ignored">Ignore</button>
            <button type="submit" name="intent" value="open">Reopen</button>
            <button type="submit" name="intent" value="merge" title="Merge the ticked issues into one; the issue page can split them out again">Merge</button>
          </div>
        </div>
        {groups.length === 0 ? (
          <div className="panel"><p className="muted">No issues match these filters.</p></div>
        ) : (
          <table className="panel">
            <thead>
              <tr>
                <th aria-label="Select" />
                <th>Issue</th>
                <th>Level</th>
                <th>Status</th>
                <th className="num">Events</th>
                <th className="num">Players</th>
                <th>Last seen</th>
              </tr>
            </thead>
            <tbody>
              {groups.map((g) => (
                <tr key={g.id}>
                  <td><input type="checkbox" name="ids" value={g.id} aria-label={`Select ${g.message}`} /></td>
                  <td>
                    <Link className="msg" to={`${base}/${g.id}`}>{g.message}</Link>
                    {g.culprit ? <div className="culprit">{g.culprit}</div> : null}
                    <div className="small muted">{g.environment}</div>
                  </td>
                  <td><LevelBadge level={g.level} /></td>
                  <td><StatusBadge status={g.status} /></td>
                  <td className="num">{num(g.count)}</td>
                  <td className="num">{num(g.user_count)}</td>
                  <td className="muted small">{ago(g.last_seen, now)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </Form>
      <nav className="pager" aria-label="Pages">
        {page > 1 ? <Link to={pageHref(page - 1)}>← Previous</Link> : null}
        <span className="muted small">Page {page} of {pages}</span>
        {page < pages ? <Link to={pageHref(page + 1)}>Next →</Link> : null}
      </nav>
    </>
  );
}
