import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useLoaderData, useParams } from "@remix-run/react";
import { requirePageUser } from "~/accounts/sessions.server";
import { playerData } from "~/dashboard/views.server";
import { pageLoad } from "~/dashboard/page.server";
import { num } from "~/components/format";
import { Ago } from "~/components/time";
import { EventList, LevelBadge, RegressedBadge, StatusBadge } from "~/components/ui";
import { readingAsMember } from "~/services.server";
import { Breakable, UserId } from "~/components/issue-text";

export const meta: MetaFunction<typeof loader> = ({ data }) => [{ title: `${data?.player.player_name ?? "Player"} · Roblox Monitor` }];

export const loader = async ({ request, params, context }: LoaderFunctionArgs) => {
  const user = await requirePageUser(context.services, request);
  return pageLoad(() => readingAsMember(context.services, request, user, params.projectId, async (sql) => ({ ...(await playerData(sql, user, params.projectId, params.userId)), now: new Date() })));
};

/** One player: the issues they ran into and their latest events, with a way to their economy page. */
export default function Player() {
  const { player, issues, events, hasEconomy, now } = useLoaderData<typeof loader>();
  const base = `/projects/${useParams().projectId}`;
  return (
    <>
      <p className="small"><Link to={`${base}/players`}>← Players</Link></p>
      <div className="panel">
        <h2 style={{ marginTop: 0 }} data-testid="player-name">{player.player_name ?? "Unknown name"}</h2>
        <p className="muted">
          User id <UserId id={player.user_id} code /> · last error <Ago d={player.last_seen} now={now} /> ·{" "}
          <a href={`https://www.roblox.com/users/${player.user_id}/profile`} rel="noreferrer noopener" target="_blank">Roblox profile</a>
          {hasEconomy ? <> · <Link to={`${base}/economy/players/${player.user_id}`}>Economy balances</Link></> : null}
        </p>
      </div>
      <section className="panel">
        <h2 style={{ marginTop: 0 }}>Issues ({num(issues.length)})</h2>
        <table data-testid="player-issues" className="player-issues">
          <thead><tr><th>Issue</th><th className="hide-narrow">Status</th><th className="num">Occurrences <span className="hide-narrow">(all players)</span></th><th className="hide-narrow">Last seen</th></tr></thead>
          <tbody>
            {issues.map((g) => (
              <tr key={g.id}>
                <td>
                  <Link className="msg" to={`${base}/issues/${g.id}`}><Breakable text={g.title} /></Link>
                  <div className="small row tight"><LevelBadge level={g.level} />{g.regressed_at && g.status === "open" ? <RegressedBadge /> : null}</div>
                </td>
                <td className="hide-narrow"><StatusBadge status={g.status} /></td>
                <td className="num" data-label={`${Number(g.count) === 1 ? "occurrence" : "occurrences"} (all players)`}>{num(g.count)}</td>
                <td className="small hide-narrow"><Ago d={g.last_seen} now={now} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      <section className="panel">
        <h2 style={{ marginTop: 0 }}>Latest events</h2>
        <EventList events={events} now={now} traceHref={(t) => `${base}/traces/${t}`} />
      </section>
    </>
  );
}
