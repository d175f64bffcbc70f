import { Link } from "@remix-run/react";
import { Ago } from "./time";

type NoticeView = {
  id: string;
  project_id: string;
  project_name: string;
  group_id: string;
  title: string;
  status: string;
  actor_email: string | null;
  created_at: Date | string;
  read_at: Date | string | null;
  current: boolean;
};

/** The "Assigned to you" list: newest first, unread ones marked, each linking to its issue. */
export function Notices({ notices, now }: { notices: NoticeView[]; now: Date | string }) {
  return (
    <section className="panel" aria-labelledby="notices-title">
      <h1 id="notices-title" style={{ marginTop: 0, fontSize: "1.3rem" }}>Assigned to you</h1>
      {notices.length === 0 ? (
        <p className="muted">Nobody has assigned you an issue yet. When a teammate does, it shows here and in the count at the top.</p>
      ) : (
        <ul className="plain-list" data-testid="notices">
          {notices.map((n) => (
            <li key={n.id} className={`panel notice${n.read_at ? "" : " unread"}`}>
              <div className="small muted">
                {n.project_name} · {n.actor_email ?? "a former member"} assigned you <Ago d={n.created_at} now={now} />
                {n.read_at ? null : <strong> · new</strong>}
                {n.current ? null : " · no longer yours"}
              </div>
              <Link className="msg" to={`/projects/${n.project_id}/issues/${n.group_id}`}>{n.title}</Link>{" "}
              <span className="small muted">({n.status})</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
