import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, useLoaderData, useNavigation, useParams } from "@remix-run/react";
import { requirePageUser } from "~/accounts/sessions.server";
import { playersData } from "~/dashboard/views.server";
import { pageLoad } from "~/dashboard/page.server";
import { num } from "~/components/format";
import { Ago } from "~/components/time";
import { queryOf } from "~/errors/params.server";
import { readingAsMember } from "~/services.server";
import { UserId } from "~/components/issue-text";

export const meta: MetaFunction = () => [{ title: "Players · Roblox Monitor" }];

export const loader = async ({ request, params, context }: LoaderFunctionArgs) => {
  const user = await requirePageUser(context.services, request);
  return pageLoad(() => readingAsMember(context.services, request, user, params.projectId, async (sql) => ({ ...(await playersData(sql, user, params.projectId, queryOf(request))), now: new Date() })));
};

/** Look up a player by user id or name: the players who ran into errors, most recent first. */
export default function Players() {
  const { data, search, now } = useLoaderData<typeof loader>();
  const nav = useNavigation();
  const base = `/projects/${useParams().projectId}`;
  const loading = nav.state === "loading" && nav.location?.pathname === `${base}/players`;
  return (
    <>
      <Form method="get" className="filters panel" role="search">
        <div className="grow">
          <label htmlFor="player-search">User id or name</label>
          <input id="player-search" name="search" type="search" defaultValue={search} placeholder="261 or Builderman" />
        </div>
        <button type="submit" disabled={loading}>{loading ? "Searching…" : "Find"}</button>
      </Form>
      {data.length === 0 ? (
        <div className="panel"><p className="muted">{search ? `No player matching “${search}” ran into an error.` : "No event carried a user_id yet."}</p></div>
      ) : (
        <table className="panel" data-testid="players">
          <thead><tr><th>Player</th><th>User id</th><th className="num">Issues</th><th>Last error</th></tr></thead>
          <tbody>
            {data.map((p) => (
              <tr key={p.user_id}>
                <td><Link to={`${base}/players/${p.user_id}`}>{p.player_name ?? "unknown name"}</Link></td>
                <td className="small"><UserId id={p.user_id} code /></td>
                <td className="num">{num(p.issues)}</td>
                <td className="small"><Ago d={p.last_seen} now={now} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {!search && data.length ? <p className="muted small">The 50 players most recently affected. Search to find anyone else.</p> : null}
    </>
  );
}
