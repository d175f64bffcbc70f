import type { LoaderFunctionArgs } from "@remix-run/node";
import { Link, useLoaderData, useParams } from "@remix-run/react";
import { requirePageUser } from "~/accounts/sessions.server";
import { overviewData } from "~/dashboard/views.server";
import { pageLoad } from "~/dashboard/page.server";
import { baseUrl } from "~/team/api.server";
import { BarChart } from "~/components/bar-chart";
import { num } from "~/components/format";
import { Ago } from "~/components/time";
import { LevelBadge, StatusBadge } from "~/components/ui";
import { Onboarding } from "~/components/onboarding";
import { SdkHealthPanel } from "~/components/sdk-health";
import { onboardingData } from "~/sdk/onboarding.server";
import { useRef } from "react";
import { queryOf } from "~/errors/params.server";
import { readingAsMember } from "~/services.server";

export const loader = async ({ request, params, context }: LoaderFunctionArgs) => {
  const user = await requirePageUser(context.services, request);
  return pageLoad(() =>
    readingAsMember(context.services, request, user, params.projectId, async (sql) => {
      // overviewData checks the project's access first
      const overview = await overviewData(sql, user, params.projectId, queryOf(request));
      const base = baseUrl(context.services, request);
      return {
        ...overview,
        onboarding: await onboardingData(sql, params.projectId!, base, Boolean(context.services.config.publicUrl)),
        now: new Date(),
      };
    }),
  );
};

const TIMEFRAMES = ["1h", "24h", "7d", "30d"] as const;
const pad = (n: number) => String(n).padStart(2, "0");
/** Where the x axis gets a label, per timeframe: every 10 min, every 3 h, each day, every 5 days. */
const xLabel = {
  "1h": (d: Date) => (d.getUTCMinutes() % 10 === 0 ? `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}` : null),
  "24h": (d: Date) => (d.getUTCHours() % 3 === 0 ? `${pad(d.getUTCHours())}:00` : null),
  "7d": (d: Date) => (d.getUTCHours() === 0 ? `${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}` : null),
  "30d": (d: Date, i: number) => (i % 5 === 0 ? `${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}` : null),
} as const;
const bucketName = { "1h": "minute", "24h": "hour", "7d": "6 hours", "30d": "day" } as const;

export default function Overview() {
  const { timeframe, stats, series, hasEvents, onboarding, now, sdkHealth, sdkHealthDays } = useLoaderData<typeof loader>();
  const projectId = useParams().projectId!;
  const projectPath = `/projects/${projectId}`;
  // the panel stays for this visit once the first event arrives, to link to it (per project: the
  // page stays mounted when moving between projects)
  const seenEmpty = useRef(new Set<string>());
  if (!hasEvents) seenEmpty.current.add(projectId);
  const showOnboarding = seenEmpty.current.has(projectId);
  return (
    <>
      <div className="row between">
        <div className="row small" role="group" aria-label="Timeframe">
          {TIMEFRAMES.map((t) => (
            <Link key={t} to={`?timeframe=${t}`} className={`button${t === timeframe ? " primary" : ""}`} aria-current={t === timeframe ? "true" : undefined}>
              {t}
            </Link>
          ))}
        </div>
        <span className="muted small">Chart buckets in UTC</span>
      </div>
      {showOnboarding ? <Onboarding {...onboarding} projectPath={projectPath} /> : null}
      <div className="cards" style={{ marginTop: 16 }}>
        <div className="card"><div className="value" data-testid="total-errors">{num(stats.total_errors)}</div><div className="label">Occurrences ({timeframe})</div></div>
        <div className="card"><div className="value" style={{ color: "var(--error)" }}>{num(stats.by_level.error)}</div><div className="label">Errors</div></div>
        <div className="card"><div className="value" style={{ color: "var(--warn-text)" }}>{num(stats.by_level.warn)}</div><div className="label">Warnings</div></div>
        <div className="card"><div className="value" style={{ color: "var(--info)" }}>{num(stats.by_level.info)}</div><div className="label">Info</div></div>
        <div className="card"><div className="value">{num(stats.open_groups)}</div><div className="label">Open issues seen</div></div>
        <div className="card"><div className="value">{num(stats.affected_users)}</div><div className="label">Affected players</div></div>
      </div>
      <section className="panel">
        <h2 style={{ marginTop: 0 }}>Occurrences over the last {timeframe} <span className="muted small">(per {bucketName[timeframe]})</span></h2>
        <BarChart
          label={`Occurrences per ${bucketName[timeframe]} over the last ${timeframe}, by level`}
          points={series.map((p) => ({ at: p.bucket, values: { error: p.error, warn: p.warn, info: p.info } }))}
          series={[
            { key: "error", label: "Errors", color: "#d64545" },
            { key: "warn", label: "Warnings", color: "#e0a100" },
            { key: "info", label: "Info", color: "#3b82c4" },
          ]}
          xLabel={xLabel[timeframe]}
          totals={stats.by_level}
        />
      </section>
      <section className="panel">
        <h2 style={{ marginTop: 0 }}>Top issues ({timeframe})</h2>
        {stats.top_errors.length === 0 ? (
          <p className="muted">Nothing happened in this timeframe.</p>
        ) : (
          <table>
            <thead>
              <tr><th>Issue</th><th className="hide-narrow">Level</th><th className="hide-narrow">Status</th><th className="num">Occurrences</th><th className="hide-narrow">Last seen</th></tr>
            </thead>
            <tbody>
              {stats.top_errors.map((t) => (
                <tr key={String(t.id)}>
                  <td className="msg"><Link to={`${projectPath}/issues/${t.id}`}>{t.title}</Link></td>
                  <td className="hide-narrow"><LevelBadge level={String(t.level)} /></td>
                  <td className="hide-narrow"><StatusBadge status={String(t.status)} /></td>
                  <td className="num">{num(t.count)}</td>
                  <td className="muted hide-narrow"><Ago d={t.last_seen as Date} now={now} /></td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <SdkHealthPanel health={sdkHealth} days={sdkHealthDays} now={now} />
    </>
  );
}
