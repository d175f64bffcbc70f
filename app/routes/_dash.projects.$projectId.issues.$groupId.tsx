import { redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useParams } from "@remix-run/react";
import { requirePageUser } from "~/accounts/sessions.server";
import { issueData } from "~/dashboard/views.server";
import { formObject, pageAct, pageLoad } from "~/dashboard/page.server";
import { deleteGroup, updateGroupStatus } from "~/team/groups.server";
import { mergesOf, unmergeIssues } from "~/team/merge.server";
import { createShareLink, revokeShare } from "~/team/share-links.server";
import { baseUrl } from "~/team/api.server";
import { BarChart } from "~/components/bar-chart";
import { num, plural } from "~/components/format";
import { Ago, At } from "~/components/time";
import { ActionMessage, dayLabels, EventList, LevelBadge, RegressedBadge, StatusBadge, Submit, useResetOnSuccess } from "~/components/ui";
import { queryOf } from "~/errors/params.server";
import { readingAsMember } from "~/services.server";
import { issueCollaboration, issueCollaborationAct, readIssueNotices } from "~/dashboard/collaboration.server";
import { AssigneeForm, Timeline } from "~/components/collaboration";
import { urlProblem } from "~/sdk/onboarding.server";
import { Breakable, EnvironmentBadges, OriginBadge, UserId } from "~/components/issue-text";
import { IssueVersions } from "~/components/issue-versions";
import { ShareLinkCreated } from "~/components/share-link-created";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.group.title.slice(0, 60) ?? "Issue"} · Roblox Monitor` }];

export const loader = async ({ request, params, context }: LoaderFunctionArgs) => {
  const user = await requirePageUser(context.services, request);
  return pageLoad(() =>
    readingAsMember(context.services, request, user, params.projectId, async (sql) => {
      // the issue's own read first: it checks the project's access and answers 404 for a missing or
      // malformed id, before any other read is sent with it; then the other two side by side, from
      // the project and the group it read
      const { scope, ...issue } = await issueData(sql, user, params.projectId, params.groupId, queryOf(request));
      const [merged, collab] = await Promise.all([
        mergesOf(sql, scope.projectId, scope.group.id),
        issueCollaboration(sql, user, scope.projectId, scope.group),
      ]);
      return { ...issue, ...merged, collab, now: new Date() };
    }).then(async (d) => (await readIssueNotices(context.services.sql, user, params.projectId, params.groupId), d)),
  );
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
      case "snooze": {
        const n = Number(form.n);
        const kind = String(form.kind ?? "");
        const snooze =
          kind === "forever" ? undefined
          : kind === "occurrences" || kind === "users" ? { [kind]: form.n === "" || !Number.isFinite(n) ? undefined : n }
          : { minutes: Number(kind) };
        const g = await updateGroupStatus(sql, user, params.projectId, params.groupId, { status: "ignored", snooze });
        return { ok: true as const, intent, message: g.snooze_until || g.snooze_count || g.snooze_users ? "Snoozed: it reopens by itself." : "Ignored." };
      }
      case "share-create": {
        const days = form.expires_in_days ? Number(form.expires_in_days) : null;
        const link = await createShareLink(sql, user, params.projectId, { group_id: params.groupId, role: form.role, expires_in_days: days }, baseUrl(services, request));
        return { ok: true as const, intent, message: `New ${link.role} link created.`, url: link.url, problem: urlProblem(link.url, Boolean(services.config.publicUrl)) };
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
        return (await issueCollaborationAct(sql, user, params.projectId, params.groupId, intent, form)) ?? { ok: false as const, intent, error: "Unknown action." };
    }
  });
};

export default function Issue() {
  const { role, group, series, events, newer, older, paged, latestStack, latestMessage, links, environments, versions, players, tags, members, learned, mergedInto, collab, now } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const created = result && "url" in result ? result.url : undefined;
  const manager = role === "owner" || role === "admin";
  const base = `/projects/${useParams().projectId}`;
  const shareForm = useResetOnSuccess("share-create");
  const snoozeForm = useResetOnSuccess("snooze");
  // merged into another issue: no status of its own (that issue has it), so no status actions
  const away = group.merged_into !== null;
  const snoozed = !away && group.status === "ignored" && (group.snooze_until || group.snooze_count || group.snooze_users);
  return (
    <>
      <p className="small"><Link to={`${base}/issues`}>← Issues</Link></p>
      {mergedInto ? (
        <div className="alert note" role="note" data-testid="merged-into">
          <strong>Merged into another issue.</strong> This issue is part of{" "}
          <Link to={`${base}/issues/${mergedInto.id}`} className="msg">{mergedInto.title}</Link>, which counts its
          occurrences and has its status. Below is this part alone; to split it out again, use Unmerge on that issue.
        </div>
      ) : null}
      <div className="panel">
        <div className="row between">
          <div className="row">
            <LevelBadge level={group.level} />
            {away ? <span className="badge status-ignored">merged</span> : <StatusBadge status={group.status} snooze={group} />}
            {!away && group.regressed_at && group.status === "open" ? <RegressedBadge /> : null}
            <OriginBadge clientOnly={group.client_only} />
            <EnvironmentBadges list={environments.length ? environments : [{ environment: group.environment, count: group.count }]} max={4} />
          </div>
          {away ? (
            <Link to={`${base}/issues/${group.merged_into}`}>Go to the issue it is in →</Link>
          ) : (
            <Form method="post" className="row" aria-label="Status">
              <input type="hidden" name="intent" value="status" />
              {group.status !== "resolved" ? <Submit className="primary" name="status" value="resolved" pending="Resolving…">Resolve</Submit> : null}
              {group.status !== "ignored" ? <Submit name="status" value="ignored" pending="Ignoring…">Ignore</Submit> : null}
              {group.status !== "open" ? <Submit name="status" value="open" pending="Reopening…">Reopen</Submit> : null}
            </Form>
          )}
        </div>
        <h2 className="msg" data-testid="issue-message" style={{ fontSize: "1.25rem" }}><Breakable text={group.title} /></h2>
        {latestMessage !== null ? (
          <p className="latest-message small" data-testid="latest-message">
            <span className="muted">Latest message: </span><span className="msg"><Breakable text={latestMessage} /></span>
          </p>
        ) : null}
        {group.culprit ? <p className="culprit">at <code><Breakable text={group.culprit} /></code></p> : null}
        <ActionMessage data={result} intent="status" />
        <AssigneeForm teammates={collab.teammates} assigneeId={collab.assigneeId} me={collab.me} disabled={away} />
        <ActionMessage data={result} intent="assign" />
        <dl className="facts">
          <dt>Occurrences</dt><dd>{num(group.count)}</dd>
          <dt>Players affected</dt><dd>{num(group.user_count)}</dd>
          <dt>First seen</dt><dd><At d={group.first_seen} /> <span className="muted">(<Ago d={group.first_seen} now={now} />)</span>{group.first_version ? <> in version <strong>{group.first_version}</strong></> : null}</dd>
          <dt>Last seen</dt><dd><At d={group.last_seen} /> <span className="muted">(<Ago d={group.last_seen} now={now} />)</span>{group.last_version ? <> in version <strong>{group.last_version}</strong></> : null}</dd>
          {group.resolved_at ? (<><dt>Resolved</dt><dd><At d={group.resolved_at} /></dd></>) : null}
          {group.regressed_at ? (
            <>
              <dt>Regressed</dt>
              <dd data-testid="regressed">
                <At d={group.regressed_at} /> <span className="muted">(<Ago d={group.regressed_at} now={now} />)</span>
                {group.regressed_version ? <> in version <strong>{group.regressed_version}</strong></> : " (no version on that event)"}
              </dd>
            </>
          ) : null}
          {learned ? (
            <>
              <dt>Learned</dt>
              <dd data-testid="learned-template">
                <code>
                  {learned.template.split(" ").map((w, i) => {
                    const v = learned.variables.find((x) => x.position === i);
                    return (
                      <span key={i}>
                        {i > 0 ? " " : ""}
                        {v ? <mark title={`varies: ${v.samples.join(", ")}`}>‹any›</mark> : w}
                      </span>
                    );
                  })}
                </code>{" "}
                <span className="muted">
                  — the marked {learned.variables.length === 1 ? "word varies" : "words vary"} at this location (
                  {learned.variables.map((v) => v.samples.slice(0, 5).join(", ")).join("; ")}
                  {learned.variables.some((v) => v.samples.length > 5) ? ", …" : ""}); covers {plural(learned.texts, "text")} from{" "}
                  {plural(learned.issues, "issue")}, merged here
                </span>
              </dd>
            </>
          ) : null}
          {snoozed ? (
            <>
              <dt>Snoozed</dt>
              <dd data-testid="snooze">
                reopens {[
                  group.snooze_until ? <>at <At d={group.snooze_until} /></> : null,
                  group.snooze_count ? <>at {plural(group.snooze_count, "occurrence")} ({num(Math.max(0, group.snooze_count - group.count))} more)</> : null,
                  group.snooze_users ? <>at {plural(group.snooze_users, "player")} ({num(Math.max(0, group.snooze_users - group.user_count))} more)</> : null,
                ].filter(Boolean).map((x, i) => <span key={i}>{i > 0 ? " or " : ""}{x}</span>)}
              </dd>
            </>
          ) : null}
        </dl>
        {!away && group.status !== "resolved" ? (
          <details className="snooze-form">
            <summary className="small">Snooze: ignore until…</summary>
            <ActionMessage data={result} intent="snooze" />
            <Form method="post" className="row" ref={snoozeForm}>
              <input type="hidden" name="intent" value="snooze" />
              <label htmlFor="snooze-kind" style={{ margin: 0 }}>Ignore</label>
              <select id="snooze-kind" name="kind" defaultValue="60">
                <option value="60">for 1 hour</option>
                <option value="1440">for 24 hours</option>
                <option value="10080">for 7 days</option>
                <option value="occurrences">until N more occurrences</option>
                <option value="users">until N more players</option>
                <option value="forever">until I reopen it</option>
              </select>
              <label htmlFor="snooze-n" style={{ margin: 0 }}>N (more occurrences or players)</label>
              <input id="snooze-n" name="n" type="number" min={1} step={1} inputMode="numeric" style={{ width: 110 }} placeholder="100" />
              <Submit pending="Snoozing…">Snooze</Submit>
            </Form>
          </details>
        ) : null}
      </div>

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
                    <div className="msg">{m.title}</div>
                    <div className="small muted">
                      {m.own ? "this issue's own · " : ""}{plural(m.count, "occurrence")} · last seen <Ago d={m.last_seen} now={now} />
                    </div>
                  </td>
                  <td>
                    {m.own ? null : (
                      <Form method="post" className="inline">
                        <input type="hidden" name="intent" value="unmerge" />
                        <input type="hidden" name="member_id" value={m.id} />
                        <Submit pending="Unmerging…">Unmerge</Submit>
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

      <div className="split">
        <section className="panel" aria-labelledby="env-title">
          <h2 id="env-title" style={{ marginTop: 0 }}>Environments</h2>
          <table className="compact">
            <thead><tr><th>Environment</th><th className="num">Occurrences</th><th>Last seen</th></tr></thead>
            <tbody>
              {environments.map((e) => (
                <tr key={e.environment}>
                  <td><Link to={`${base}/issues?status=all&environment=${encodeURIComponent(e.environment)}`}>{e.environment}</Link></td>
                  <td className="num">{num(e.count)}</td>
                  <td className="small"><Ago d={e.last_seen} now={now} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
        <section className="panel" aria-labelledby="versions-title">
          <h2 id="versions-title" style={{ marginTop: 0 }}>Versions</h2>
          <IssueVersions versions={versions} firstVersion={group.first_version} now={now} />
        </section>
      </div>

      <section className="panel" aria-labelledby="players-title">
        <h2 id="players-title" style={{ marginTop: 0 }}>Affected players {group.user_count > players.length ? <span className="muted small">(latest {players.length} of {num(group.user_count)})</span> : null}</h2>
        {players.length === 0 ? (
          <p className="muted small">No event of this issue carried a <code>user_id</code>.</p>
        ) : (
          <ul className="chips" data-testid="affected-players">
            {players.map((p) => (
              <li key={p.user_id}>
                <Link to={`${base}/players/${p.user_id}`}>{p.player_name ?? "unknown name"}</Link> <span className="muted small"><UserId id={p.user_id} /></span>
              </li>
            ))}
          </ul>
        )}
      </section>

      {tags.tags.length ? (
        <section className="panel" aria-labelledby="tags-title">
          <h2 id="tags-title" style={{ marginTop: 0 }}>Tags <span className="muted small">(latest {num(tags.sampled)} stored events)</span></h2>
          <div className="tag-grid" data-testid="tag-breakdown">
            {tags.tags.map((t) => (
              <div key={t.key}>
                <h3 className="small">{t.key}</h3>
                {t.values.map((v) => {
                  const pct = t.total ? Math.round((v.count / t.total) * 100) : 0;
                  return (
                    <div key={v.value} className="tag-row" title={`${num(v.count)} of ${num(t.total)}`}>
                      <span className="tag-value">{v.value}</span>
                      <span className="tag-pct">{pct}%</span>
                      <span className="tag-bar" style={{ width: `${pct}%` }} />
                    </div>
                  );
                })}
              </div>
            ))}
          </div>
        </section>
      ) : null}

      {latestStack ? (
        <section className="panel">
          <h2 style={{ marginTop: 0 }}>Stack trace <span className="muted small">(latest event)</span></h2>
          <pre>{latestStack}</pre>
        </section>
      ) : null}

      {/* the pager's links come back to this section (#events), not to the top of the page */}
      <section className="panel" id="events" aria-labelledby="events-title">
        <div className="row between">
          <h2 id="events-title" style={{ margin: 0 }}>{paged ? "Events" : "Latest events"}</h2>
          <nav className="row small" aria-label="Event pages">
            {newer ? <Link to={`?after=${newer}#events`}>← Newer</Link> : <span className="muted">← Newer</span>}
            {paged ? <Link to="?#events">Latest</Link> : null}
            {older ? <Link to={`?before=${older}#events`}>Older →</Link> : <span className="muted">Older →</span>}
          </nav>
        </div>
        <EventList events={events} now={now} traceHref={(t) => `${base}/traces/${t}`} playerHref={(u) => `${base}/players/${u}`} />
      </section>

      <Timeline items={collab.timeline} me={collab.me} manager={manager} issueId={group.id} base={base} now={now} result={result} />

      <section className="panel">
        <h2 style={{ marginTop: 0 }}>Share links</h2>
        <p className="muted small">Anyone with a link sees this issue without signing in (never player names or user ids). Editors can also change its status.</p>
        <ActionMessage data={result} intent="share-create" />
        <ActionMessage data={result} intent="share-revoke" />
        {created ? <ShareLinkCreated url={created} problem={result && "problem" in result ? result.problem : undefined} /> : null}
        <Form method="post" className="row" ref={shareForm}>
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
          <Submit pending="Creating…">Create share link</Submit>
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
                    <td className="small"><At d={l.created_at} /> <span className="muted">by {l.created_by_email ?? "a former user"}</span></td>
                    <td className="small">{l.expires_at ? <At d={l.expires_at} /> : "never"}</td>
                    <td className="small">{l.revoked_at ? "revoked" : expired ? "expired" : "active"}</td>
                    <td>
                      {!l.revoked_at && !expired ? (
                        <Form method="post" className="inline">
                          <input type="hidden" name="intent" value="share-revoke" />
                          <Submit className="danger" name="link_id" value={l.id} pending="Revoking…" confirm="Revoke this share link? Anyone using it loses access at once.">Revoke</Submit>
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

      {manager && !away ? (
        <section className="panel">
          <h2 style={{ marginTop: 0 }}>Delete this issue</h2>
          <p className="muted small">Removes the issue with all its stored events and chart data. If the error happens again, it starts a new issue.</p>
          <ActionMessage data={result} intent="delete" />
          <Form method="post">
            <input type="hidden" name="intent" value="delete" />
            <Submit className="danger" pending="Deleting…" confirm="Delete this issue and all its events?">Delete issue</Submit>
          </Form>
        </section>
      ) : null}
    </>
  );
}
