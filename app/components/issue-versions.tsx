import { ago, num } from "./format";
import { Ago, useTimeFormat } from "./time";

type VersionRow = { version: string; count: number; first_seen: Date | string; last_seen: Date | string };

/**
 * An issue's versions, newest version first in version order (the loader sorts them: 10 after 9,
 * 1.2.10 after 1.2.9). First seen is a date and time, since several versions can share "2 d ago";
 * seconds and the relative time are on hover. Last seen is relative, with its exact time on hover.
 */
export function IssueVersions({ versions, firstVersion, now }: { versions: VersionRow[]; firstVersion: string | null; now: Date | string }) {
  const fmt = useTimeFormat();
  if (versions.length === 0) return <p className="muted small">No event of this issue carried a <code>game_version</code>.</p>;
  return (
    <table className="compact versions" data-testid="versions">
      <thead><tr><th>Version</th><th className="num">Occurrences</th><th>First seen</th><th className="hide-narrow">Last seen</th></tr></thead>
      <tbody>
        {versions.map((v) => (
          <tr key={v.version}>
            <td><span className="version">{v.version}</span>{v.version === firstVersion ? <span className="small muted"> · first</span> : null}</td>
            <td className="num">{num(v.count)}</td>
            <td className="small">
              <time dateTime={new Date(v.first_seen).toISOString()} title={`${fmt(v.first_seen, true)} (${ago(v.first_seen, now)})`}>{fmt(v.first_seen)}</time>
            </td>
            <td className="small hide-narrow"><Ago d={v.last_seen} now={now} /></td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
