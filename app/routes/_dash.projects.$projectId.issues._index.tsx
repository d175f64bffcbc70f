import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useNavigation, useParams, useSearchParams } from "@remix-run/react";
import { useEffect, useRef, useState } from "react";
import { requirePageUser } from "~/accounts/sessions.server";
import { filterBody, issueFilters, issuesData } from "~/dashboard/views.server";
import { formObject, pageAct, pageLoad } from "~/dashboard/page.server";
import { bulkGroupStatus, bulkGroupStatusByFilter } from "~/team/groups.server";
import { allOf, capitalize, num, plural, pluralTotal } from "~/components/format";
import { Ago } from "~/components/time";
import { Sparkline } from "~/components/sparkline";
import { ActionMessage, LevelBadge, Pager, RegressedBadge, StatusBadge, Submit } from "~/components/ui";
import { mergeIssues, mergePreview } from "~/team/merge.server";
import { queryOf } from "~/errors/params.server";
import { issueTitle } from "~/errors/title.server";
import { readingAsMember } from "~/services.server";
import { listAssignAct } from "~/dashboard/collaboration.server";
import { AssignedFilter, AssigneeTag, BulkAssign } from "~/components/collaboration";
import { Breakable, EnvironmentBadges, OriginBadge, OriginFilter } from "~/components/issue-text";

export const loader = async ({ request, params, context }: LoaderFunctionArgs) => {
  const user = await requirePageUser(context.services, request);
  return pageLoad(() =>
    readingAsMember(context.services, request, user, params.projectId, async (sql) => ({
      ...(await issuesData(sql, user, params.projectId, queryOf(request))),
      now: new Date(),
    })),
  );
};

const VERBS: Record<string, [string, string]> = { resolved: ["Resolve", "Resolved"], ignored: ["Ignore", "Ignored"], open: ["Reopen", "Reopened"] };

/**
 * Bulk resolve / ignore / reopen (or merge, of ticked issues only): of the ticked issues, or (after a confirmation that shows the count)
 * of every issue matching the filters, through the Team API's verbs. A merge first answers the ticked issues for a
 * confirmation in which the user picks the one that stays; only the confirmed form merges.
 */
export const action = ({ request, params, context }: ActionFunctionArgs) =>
  pageAct("bulk", async () => {
    const user = await requirePageUser(context.services, request);
    const form = formObject(await request.formData(), ["ids"]);
    if (form.scope === "filter") {
      const filters = issueFilters(new URLSearchParams(String(form.filter ?? "")));
      const r = await bulkGroupStatusByFilter(context.services.sql, user, params.projectId, {
        filter: filterBody(filters),
        status: form.intent,
        as_of: typeof form.as_of === "string" && form.as_of ? form.as_of : undefined,
      });
      const updated = ("updated" in r ? r.updated : undefined) ?? 0;
      return { ok: true as const, message: `${VERBS[r.status][1]} ${plural(updated, "issue")} matching the filters.`, intent: "bulk" };
    }
    if (!Array.isArray(form.ids) || form.ids.length === 0) return { ok: false as const, error: "Tick at least one issue first.", intent: "bulk" };
    if (form.intent === "assign") return listAssignAct(context.services.sql, user, params.projectId, form);
    if (form.intent === "merge") {
      return { ok: true as const, intent: "bulk", merge: await mergePreview(context.services.sql, user, params.projectId, { ids: form.ids }) };
    }
    if (form.intent === "merge-confirmed") {
      const target = typeof form.target_id === "string" && form.target_id ? form.target_id : undefined;
      const m = await mergeIssues(context.services.sql, user, params.projectId, { ids: form.ids, target_id: target });
      return { ok: true as const, message: `Merged ${m.merged.length + 1} issues into “${issueTitle(String(m.group.message)).slice(0, 80)}”.`, intent: "bulk" };
    }
    const r = await bulkGroupStatus(context.services.sql, user, params.projectId, { ids: form.ids, status: form.intent });
    const verb = VERBS[r.status][1];
    return { ok: true as const, message: `${verb} ${plural(r.updated, "issue")}.`, intent: "bulk" };
  });

export default function Issues() {
  const { filters, page, pageSize, total, totalExact, groups, environments, versions, hourly, teammates, me, now } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const [params] = useSearchParams();
  const nav = useNavigation();
  const base = `/projects/${useParams().projectId}/issues`;
  // "all 30 issues", or "all 10,000+ issues" past the counted 10,000
  const allMatching = totalExact ? allOf(total, "issue") : `all ${num(total)}+ issues`;
  const withParams = (set: Record<string, string | null>) => {
    const q = new URLSearchParams(params);
    for (const [k, v] of Object.entries(set)) {
      if (v === null) q.delete(k);
      else q.set(k, v);
    }
    return `?${q}`;
  };
  const confirming = params.get("confirm");
  const filterQuery = (() => {
    const q = new URLSearchParams(params);
    for (const k of ["page", "confirm", "index"]) q.delete(k);
    return q.toString();
  })();
  const loading = nav.state === "loading" && nav.location?.pathname === base;
  const merge = result && "merge" in result ? result.merge : undefined;
  const ticks = useTicks(groups.map((g) => g.id).join());
  return (
    <>
      {/* keyed by the filters in force: after a link or Back the fields show them, not what was last typed */}
      <Form key={JSON.stringify(filters)} method="get" className="filters panel" role="search">
        <div>
          <label htmlFor="search">Search</label>
          <input id="search" name="search" type="search" defaultValue={filters.search} placeholder="message or player"
            aria-describedby={filters.search ? "search-scope" : undefined} />
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
          <label htmlFor="version">New in version</label>
          <select id="version" name="version" defaultValue={filters.version}>
            <option value="">Any</option>
            {versions.map((v) => <option key={v} value={v}>{v}</option>)}
          </select>
        </div>
        <OriginFilter value={filters.origin} />
        <div>
          <label htmlFor="sort">Sort by</label>
          <select id="sort" name="sort" defaultValue={filters.sort}>
            <option value="last_seen">Last seen</option>
            <option value="first_seen">First seen</option>
            <option value="count">Occurrences</option>
          </select>
        </div>
        <AssignedFilter value={filters.assigned} teammates={teammates} me={me} />
        <div className="check">
          <input id="regressed" name="regressed" type="checkbox" value="1" defaultChecked={filters.regressed} />
          <label htmlFor="regressed">Regressed only</label>
        </div>
        <button type="submit" disabled={loading} aria-busy={loading || undefined}>{loading ? "Loading…" : "Apply"}</button>
        {filters.search ? (
          <p id="search-scope" className="search-scope small muted" data-testid="search-scope">
            Searched messages, culprits, script paths and function names in stack frames, player names and user ids, and the messages of every stored event.
          </p>
        ) : null}
      </Form>

      <ActionMessage data={result} intent="bulk" />
      {confirming && VERBS[confirming] && total > 0 ? (
        <div className="panel confirm" role="alertdialog" aria-labelledby="confirm-title">
          <p id="confirm-title" style={{ marginTop: 0 }}>
            <strong>{VERBS[confirming][0]} {allMatching} matching these filters?</strong>{" "}
            <span className="muted small">Not only this page. Issues that appear after now are left alone.</span>
          </p>
          <Form method="post" className="row" action={`${base}?index&${filterQuery}`}>
            <input type="hidden" name="scope" value="filter" />
            <input type="hidden" name="filter" value={filterQuery} />
            <input type="hidden" name="as_of" value={new Date(now).toISOString()} />
            <Submit className="primary" name="intent" value={confirming} pending="Working…">
              {VERBS[confirming][0]} {pluralTotal(total, totalExact, "issue")}
            </Submit>
            <Link to={withParams({ confirm: null })}>Cancel</Link>
          </Form>
        </div>
      ) : null}
      {merge ? (
        <div className="panel confirm" role="alertdialog" aria-labelledby="merge-title">
          <h2 id="merge-title" style={{ marginTop: 0 }}>Merge {merge.issues.length} issues into one?</h2>
          <p className="small">
            Pick the issue that stays. It keeps its id, status and share links, and counts the others&apos; occurrences, players
            and events; the others leave the list. Any of them can be split out again from the merged issue&apos;s page.
          </p>
          <Form method="post">
            {merge.issues.map((g) => <input key={g.id} type="hidden" name="ids" value={g.id} />)}
            <fieldset className="choices">
              <legend className="small muted">Issue that stays</legend>
              {merge.issues.map((g) => (
                <label key={g.id} className="choice">
                  <input type="radio" name="target_id" value={g.id} defaultChecked={g.id === merge.target} />
                  <span className="grow">
                    <span className="msg">{g.title}</span>
                    <span className="small muted row tight">
                      <LevelBadge level={g.level} /> <StatusBadge status={g.status} />
                      <span>{plural(g.count, "occurrence")} · {plural(g.user_count, "player")} · <Ago d={g.last_seen} now={now} /></span>
                    </span>
                  </span>
                </label>
              ))}
            </fieldset>
            <div className="row">
              <Submit className="primary" name="intent" value="merge-confirmed" pending="Merging…">Merge {merge.issues.length} issues</Submit>
              <Link to={withParams({ index: null })}>Cancel</Link>
            </div>
          </Form>
        </div>
      ) : null}
      <Form method="post" ref={ticks.form} onChange={ticks.recount}>
        <div className="row between bulkbar">
          <span className="muted small" data-testid="issue-total">{pluralTotal(total, totalExact, "issue")}</span>
          <div className="row">
            <span className="small muted">With ticked:</span>
            <Submit name="intent" value="resolved" pending="Resolving…">Resolve</Submit>
            <Submit name="intent" value="ignored" pending="Ignoring…">Ignore</Submit>
            <Submit name="intent" value="open" pending="Reopening…">Reopen</Submit>
            <Submit name="intent" value="merge" pending="Opening…">Merge…</Submit>
            <BulkAssign teammates={teammates} me={me} />
          </div>
        </div>
        {total > 0 ? (
          <div className="row small bulkbar">
            <span className="muted">{capitalize(allMatching)} matching:</span>
            {filters.status !== "resolved" ? <Link to={withParams({ confirm: "resolved" })}>Resolve all…</Link> : null}
            {filters.status !== "ignored" ? <Link to={withParams({ confirm: "ignored" })}>Ignore all…</Link> : null}
            {filters.status !== "open" ? <Link to={withParams({ confirm: "open" })}>Reopen all…</Link> : null}
          </div>
        ) : null}
        {groups.length > 0 && ticks.count === groups.length && total > groups.length ? (
          <p className="small muted" role="status" data-testid="page-ticked">
            All {num(groups.length)} issues on this page are ticked. To change all {totalExact ? num(total) : `${num(total)}+`} matching, use the links above.
          </p>
        ) : null}
        {groups.length === 0 ? (
          page === 1 ? (
            <div className="panel">
              <p className="muted">{filters.search ? <>No issues match “{filters.search}” with these filters.</> : "No issues match these filters."}</p>
            </div>
          ) : null
        ) : (
          <div className="table-wrap">
            <table className="panel issues">
              <thead>
                <tr>
                  <th>
                    <input
                      type="checkbox"
                      aria-label={`Select all ${groups.length} issues on this page`}
                      disabled={!ticks.ready}
                      checked={ticks.count > 0 && ticks.count === groups.length}
                      ref={(el) => {
                        if (el) el.indeterminate = ticks.count > 0 && ticks.count < groups.length;
                      }}
                      onChange={(e) => ticks.setAll(e.currentTarget.checked)}
                    />
                  </th>
                  <th>Issue</th>
                  <th className="hide-narrow spark-col">Last 24 h</th>
                  <th className="hide-narrow">Level</th>
                  <th className="hide-narrow">Status</th>
                  <th className="num">{filters.environment ? `In ${filters.environment}` : "Occurrences"}</th>
                  <th className="num">Players</th>
                  <th className="hide-narrow">Last seen</th>
                </tr>
              </thead>
              <tbody>
                {groups.map((g) => (
                  <tr key={g.id}>
                    <td><input type="checkbox" name="ids" value={g.id} aria-label={`Select ${g.title}`} /></td>
                    <td>
                      <Link className="msg" to={`${base}/${g.id}`}><Breakable text={g.title} /></Link>
                      {g.culprit ? <div className="culprit"><Breakable text={g.culprit} /></div> : null}
                      <div className="small muted row tight">
                        <OriginBadge clientOnly={g.client_only} />
                        <EnvironmentBadges list={g.environments.length ? g.environments : [{ environment: g.environment, count: Number(g.count) }]} />
                        {g.last_version ? <span title="The game version of the latest occurrence">last seen in v{g.last_version}</span> : null}
                        {g.regressed_at && g.status === "open" ? <RegressedBadge /> : null}
                        <AssigneeTag id={g.assignee_id} teammates={teammates} me={me} />
                        <span className="show-narrow"><LevelBadge level={g.level} /> <StatusBadge status={g.status} snooze={g} until /> · <Ago d={g.last_seen} now={now} /></span>
                      </div>
                    </td>
                    <td className="hide-narrow"><Sparkline counts={hourly[g.id] ?? []} label="Occurrences per hour, last 24 hours" /></td>
                    <td className="hide-narrow"><LevelBadge level={g.level} /></td>
                    <td className="hide-narrow"><StatusBadge status={g.status} snooze={g} until /></td>
                    <td className="num" data-label={filters.environment ? `in ${filters.environment}` : Number(g.count) === 1 ? "occurrence" : "occurrences"}>
                      {num(filters.environment ? g.environment_count ?? 0 : g.count)}
                      {filters.environment ? <div className="small muted">of {num(g.count)}</div> : null}
                    </td>
                    <td className="num" data-label={Number(g.user_count) === 1 ? "player" : "players"}>{num(g.user_count)}</td>
                    <td className="muted small hide-narrow"><Ago d={g.last_seen} now={now} /></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Form>
      <Pager page={page} total={total} exact={totalExact} rows={groups.length} pageSize={pageSize} href={(p) => withParams({ page: String(p), confirm: null })} noun="issue" />
    </>
  );
}

/**
 * The ticked rows of the list's form, for the header checkbox that ticks or clears every row of the
 * page (Sentry's select-all). The header box works once the page is interactive; `key` changes with
 * the page's rows, which are counted again then.
 */
function useTicks(key: string) {
  const form = useRef<HTMLFormElement>(null);
  const [count, setCount] = useState(0);
  const [ready, setReady] = useState(false);
  const boxes = () => [...(form.current?.querySelectorAll<HTMLInputElement>('input[type="checkbox"][name="ids"]') ?? [])];
  const recount = () => setCount(boxes().filter((b) => b.checked).length);
  useEffect(() => {
    recount();
    setReady(true);
  }, [key]);
  const setAll = (on: boolean) => {
    for (const b of boxes()) b.checked = on;
    recount();
  };
  return { form, count, ready, recount, setAll };
}
