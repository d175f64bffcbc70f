import { redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useParams } from "@remix-run/react";
import { requirePageUser } from "~/accounts/sessions.server";
import { issueData } from "~/dashboard/views.server";
import { formObject, pageAct, pageLoad } from "~/dashboard/page.server";
import { deleteGroup, updateGroupStatus } from "~/team/groups.server";
import { mergedInto, unmergeIssues } from "~/team/merge.server";
import { createShareLink, revokeShare } from "~/team/share-links.server";
import { baseUrl } from "~/team/api.server";
import { BarChart } from "~/components/bar-chart";
import { ago, num, utc } from "~/components/format";
import { ActionMessage, dayLabels, EventList, LevelBadge, StatusBadge } from "~/components/ui";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.group.message.slice(0, 60) ?? "Issue"} · Roblox Monitor` }];

export const loader = async ({ request, params, context }: LoaderFunctionArgs) => {
  const user = await requirePageUser(context.services, request);
  return pageLoad(async () => ({
    ...(await issueData(context.services.sql, user, params.projectId, params.groupId)),
    ...(await mergedInto(context.services.sql, user, params.projectId, params.groupId)),
    now: new Date(),
  }));
};

export const action = async ({ request, params, context }: ActionFunctionArgs) => {
  const { services } = context;
  const form = formObject(await request.clone().formData());
  const intent = String(form.intent ?? "");
  return pageAct(intent, async () => {
    const user = await requirePageUser(services, request);
    const { sql } = services;
    switch (intent) {
      case "status": {
        const g = await updateGroupStatus(sql, user, params.projectId, params.groupId, { status: form.status });
        return { ok: true as const, intent, message: `Marked ${g.status}.` };
      }
      case "share-create": {
        const days = form.expires_in_days ? Number(form.expires_in_days) : null;
        const link = await createShareLink(sql, user, params.projectId, { group_id: params.groupId, role: form.role, expires_in_days: days }, baseUrl(services, request));
        return { ok: true as const, intent, message: `New ${link.role} link created.`, url: link.url };
      }
      case "unmerge": {
        const u = await unmergeIssues(sql, user, params.projectId, params.groupId, { ids: [form.member_id] });
        return { ok: true as const, intent, message: `Split out ${u.unmerged.length} issue; it is listed on its own again.` };
      }
      case "share-revoke":
        await revokeShare(sql, user, params.projectId, String(form.link_id ?? ""));
        return { ok: true as const, intent, message: "Share link revoked." };
      case "delete":
        await deleteGroup(sql, user, params.projectId, params.groupId);
        throw redirect(`/projects/${params.projectId}/issues`);
      default:
        return { ok: false as const, intent, error: "Unknown action." };
    }
  });
};

export default function Issue() {
  const { role, group, series, events, links, members, now } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const stack = events.find((e) => e.stack_trace)?.stack_trace;
  const created = result && "url" in result ? result.url : undefined;
  const manager = role === "owner" || role === "admin";
  const base = `/projects/${useParams().projectId}`;
  return (
    <>
      <p className="small"><Link to={`${base}/issues`}>← Issues</Link></p>
      <div className="panel">
        <div className="row between">
          <div className="row">
            <LevelBadge level={group.level} />
            <StatusBadge status={group.status} />
            <span className="muted small">{group.environment}</span>
          </div>
          <Form method="post" className="row" aria-label="Status">
            <input type="hidden" name="intent" value="status" />
            {group.status !== "resolved" ? <button className="primary" name="status" value="resolved">Resolve</button> : null}
            {group.status !== "ignored" ? <button name="status" value="ignored">Ignore</button> : null}
            {group.status !== "open" ? <button name="status" value="open">Reopen</button> : null}
          </Form>
        </div>
        <h2 className="msg" data-testid="issue-message" style={{ fontSize: "1.25rem" }}>{group.message}</h2>
        {group.culprit ? <p className="culprit">at <code>{group.culprit}</code></p> : null}
        <ActionMessage data={result} intent="status" />
        <dl className="facts">
          <dt>Occurrences</dt><dd>{num(group.count)}</dd>
          <dt>Players affected</dt><dd>{num(group.user_count)}</dd>
          <dt>First seen</dt><dd>{utc(group.first_seen)} <span className="muted">({ago(group.first_seen, now)})</span></dd>
          <dt>Last seen</dt><dd>{utc(group.last_seen)} <span className="muted">({ago(group.last_seen, now)})</span></dd>
          {group.resolved_at ? (<><dt>Resolved</dt><dd>{utc(group.resolved_at)}</dd></>) : null}
          {group.regressed_at ? (<><dt>Regressed</dt><dd>{utc(group.regressed_at)}</dd></>) : null}
        </dl>
      </div>

      {group.merged_into ? (
        <p className="panel" data-testid="merged-into">
          This issue is merged into <Link to={`${base}/issues/${group.merged_into}`}>another issue</Link>, which counts its events.
        </p>
      ) : null}

      <ActionMessage data={result} intent="unmerge" />
      {members.length > 0 ? (
        <section className="panel" aria-label="Merged issues">
          <h2 style={{ marginTop: 0 }}>Merged issues</h2>
          <p className="muted small">Events of each of these fingerprints land in this issue. Unmerge gives an issue back its own events and counts.</p>
          <table>
            <thead><tr><th>Issue</th><th aria-label="Actions" /></tr></thead>
            <tbody>
              {members.map((m) => (
                <tr key={m.id}>
                  <td>
                    <div className="msg">{m.message}</div>
                    <div className="small muted">
                      {m.own ? "this issue's own · " : ""}{num(m.count)} event{m.count === 1 ? "" : "s"} · last seen {ago(m.last_seen, now)}
                    </div>
                  </td>
                  <td>
                    {m.own ? null : (
                      <Form method="post" className="inline">
                        <input type="hidden" name="intent" value="unmerge" />
                        <input type="hidden" name="member_id" value={m.id} />
                        <button type="submit">Unmerge</button>
                      </Form>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ) : null}

      <section className="panel">
        <h2 style={{ marginTop: 0 }}>Occurrences per hour, last 7 days <span className="muted small">(UTC)</span></h2>
        <BarChart
          label="Occurrences of this issue per hour over the last 7 days"
          points={series.map((s) => ({ at: s.bucket, values: { count: s.count } }))}
          series={[{ key: "count", label: "Occurrences", color: "#d64545" }]}
          xLabel={dayLabels}
        />
      </section>

      {stack ? (
        <section className="panel">
          <h2 style={{ marginTop: 0 }}>Stack trace <span className="muted small">(latest event)</span></h2>
          <pre>{stack}</pre>
        </section>
      ) : null}

      <section className="panel">
        <h2 style={{ marginTop: 0 }}>Latest events</h2>
        <EventList events={events} now={now} traceHref={(t) => `${base}/traces/${t}`} />
      </section>

      <section className="panel">
        <h2 style={{ marginTop: 0 }}>Share links</h2>
        <p className="muted small">Anyone with a link sees this issue without signing in (never player names or user ids). Editors can also change its status.</p>
        <ActionMessage data={result} intent="share-create" />
        <ActionMessage data={result} intent="share-revoke" />
        {created ? (
          <p>
            Copy it now, it is shown only once: <code className="secret" data-testid="share-url">{created}</code>
          </p>
        ) : null}
        <Form method="post" className="row">
          <input type="hidden" name="intent" value="share-create" />
          <label htmlFor="share-role" style={{ margin: 0 }}>Role</label>
          <select id="share-role" name="role" defaultValue="viewer">
            <option value="viewer">Viewer (read only)</option>
            <option value="editor">Editor (can change status)</option>
          </select>
          <label htmlFor="share-expiry" style={{ margin: 0 }}>Expires</label>
          <select id="share-expiry" name="expires_in_days" defaultValue="7">
            <option value="1">in 1 day</option>
            <option value="7">in 7 days</option>
            <option value="30">in 30 days</option>
            <option value="">never</option>
          </select>
          <button type="submit">Create share link</button>
        </Form>
        {links.length ? (
          <table style={{ marginTop: 12 }}>
            <thead><tr><th>Role</th><th>Created</th><th>Expires</th><th>State</th><th /></tr></thead>
            <tbody>
              {links.map((l) => {
                const expired = l.expires_at !== null && new Date(l.expires_at) <= new Date(now);
                return (
                  <tr key={l.id}>
                    <td>{l.role}</td>
                    <td className="small">{utc(l.created_at)} <span className="muted">by {l.created_by_email ?? "a former user"}</span></td>
                    <td className="small">{l.expires_at ? utc(l.expires_at) : "never"}</td>
                    <td className="small">{l.revoked_at ? "revoked" : expired ? "expired" : "active"}</td>
                    <td>
                      {!l.revoked_at && !expired ? (
                        <Form method="post" className="inline">
                          <input type="hidden" name="intent" value="share-revoke" />
                          <input type="hidden" name="link_id" value={l.id} />
                          <button className="danger" type="submit">Revoke</button>
                        </Form>
                      ) : null}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        ) : null}
      </section>

      {manager ? (
        <section className="panel">
          <h2 style={{ marginTop: 0 }}>Delete this issue</h2>
          <p className="muted small">Removes the issue with all its stored events and chart data. If the error happens again, it starts a new issue.</p>
          <ActionMessage data={result} intent="delete" />
          <Form method="post" onSubmit={(e) => { if (!confirm("Delete this issue and all its events?")) e.preventDefault(); }}>
            <input type="hidden" name="intent" value="delete" />
            <button className="danger" type="submit">Delete issue</button>
          </Form>
        </section>
      ) : null}
    </>
  );
}
