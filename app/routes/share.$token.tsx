import type { ActionFunctionArgs, HeadersFunction, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { updateShareStatus, viewShare } from "~/share/share.server";
import { formObject, pageAct, pageLoad } from "~/dashboard/page.server";
import { BarChart } from "~/components/bar-chart";
import { ago, num, utc } from "~/components/format";
import { ActionMessage, dayLabels, EventList, LevelBadge, StatusBadge } from "~/components/ui";

export const meta: MetaFunction = () => [{ title: "Shared issue · Roblox Monitor" }, { name: "robots", content: "noindex" }];

// the token is in the URL: keep it out of caches (Referrer-Policy: no-referrer is set for /share/ with the other security headers)
export const headers: HeadersFunction = () => ({ "Cache-Control": "no-store" });

/** The public page of a share link: same data and rules as GET/POST /api/share/:token. */
export const loader = ({ params, context }: LoaderFunctionArgs) =>
  pageLoad(async () => ({ ...(await viewShare(context.services, context.clientAddress, params.token)), now: new Date() }));

export const action = ({ request, params, context }: ActionFunctionArgs) =>
  pageAct("status", async () => {
    const r = await updateShareStatus(context.services, context.clientAddress, params.token, async () => formObject(await request.formData()));
    return { ok: true as const, intent: "status", message: `Marked ${r.group.status}.` };
  });

export default function SharedIssue() {
  const { role, expires_at, group, events, series, now } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  return (
    <>
      <header className="topbar">
        <span className="brand">Roblox Monitor</span>
        <span className="muted small">Shared issue · {role === "editor" ? "you can change its status" : "read only"}{expires_at ? ` · link expires ${utc(expires_at)}` : ""}</span>
      </header>
      <main className="page">
        <div className="panel">
          <div className="row between">
            <div className="row">
              <LevelBadge level={group.level} />
              <StatusBadge status={group.status} />
              <span className="muted small">{group.environment}</span>
            </div>
            {role === "editor" ? (
              <Form method="post" className="row" aria-label="Status">
                {group.status !== "resolved" ? <button className="primary" name="status" value="resolved">Resolve</button> : null}
                {group.status !== "ignored" ? <button name="status" value="ignored">Ignore</button> : null}
                {group.status !== "open" ? <button name="status" value="open">Reopen</button> : null}
              </Form>
            ) : null}
          </div>
          <h1 className="msg" style={{ marginTop: 12 }}>{group.title}</h1>
          {group.culprit ? <p className="culprit">at <code>{group.culprit}</code></p> : null}
          <ActionMessage data={result} />
          <dl className="facts">
            <dt>Occurrences</dt><dd>{num(group.count)}</dd>
            <dt>Players affected</dt><dd>{num(group.user_count)}</dd>
            <dt>First seen</dt><dd>{utc(group.first_seen)}</dd>
            <dt>Last seen</dt><dd>{utc(group.last_seen)} <span className="muted">({ago(group.last_seen, now)})</span></dd>
          </dl>
        </div>
        <section className="panel">
          <h2 style={{ marginTop: 0 }}>Occurrences per hour, last 7 days <span className="muted small">(UTC)</span></h2>
          <BarChart
            label="Occurrences of this issue per hour over the last 7 days"
            points={series.map((s) => ({ at: s.bucket, values: { count: s.count } }))}
            series={[{ key: "count", label: "Occurrences", color: "#d64545" }]}
            xLabel={dayLabels}
          />
        </section>
        <section className="panel">
          <h2 style={{ marginTop: 0 }}>Latest events</h2>
          <EventList events={events} now={now} />
        </section>
      </main>
    </>
  );
}
