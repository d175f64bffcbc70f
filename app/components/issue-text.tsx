import { Fragment } from "react";
import { num } from "./format";

/**
 * Text of an issue (title, culprit, script path) that may break only after a path separator: a
 * `<wbr>` after each `.`, `/`, `\` and `:` that a word continues, so on a phone "ServerScriptService.Combat:123: attempt…" breaks as "ServerScriptService." /
 * "Combat:123:" rather than mid-word. CSS (`.brk`) breaks inside a segment only when one segment
 * alone is wider than the line. The text itself (copy, search, accessible name) is unchanged.
 */
export function Breakable({ text }: { text: string }) {
  const parts = text.split(/(?<=[./\\:])(?=[^\s./\\:])/);
  if (parts.length === 1) return <>{text}</>;
  return (
    <>
      {parts.map((p, i) => (
        <Fragment key={i}>
          {i > 0 ? <wbr /> : null}
          {p}
        </Fragment>
      ))}
    </>
  );
}

/**
 * A Roblox user id: never broken across lines; where it does not fit it ends in an ellipsis, and
 * the whole id is in its title (hover) and in the text (copy, screen readers).
 */
export function UserId({ id, code = false }: { id: string | number; code?: boolean }) {
  const s = String(id);
  return code ? <code className="uid" title={s}>{s}</code> : <span className="uid" title={s}>{s}</span>;
}

/**
 * The mark of a client-only issue: every event of it was reported by a game client (tagged
 * `origin:client`), so its text is whatever a player's client sent, possibly made up. An issue with
 * one event raised on the server is server-origin (no badge), as the issues list's origin filter
 * reads it.
 */
export function OriginBadge({ clientOnly }: { clientOnly: boolean }) {
  if (!clientOnly) return null;
  return (
    <span
      className="badge origin-client"
      data-testid="client-only"
      title="Client-only: every event of this issue was reported by a game client, so its text may be made up by a player"
    >
      client
    </span>
  );
}

/** The environments an issue occurred in, most occurrences first: `max` chips, then "+N" for the rest; all of them on hover. */
export function EnvironmentBadges({ list, max = 3 }: { list: { environment: string; count: number }[]; max?: number }) {
  if (list.length === 0) return null;
  const shown = list.slice(0, max);
  const all = list.map((e) => `${e.environment} (${num(e.count)})`).join(", ");
  return (
    <span className="envs" title={`Occurred in ${all}`} data-testid="environments">
      {shown.map((e) => <span key={e.environment} className="tag env">{e.environment}</span>)}
      {list.length > shown.length ? <span className="tag">+{list.length - shown.length}</span> : null}
    </span>
  );
}

/**
 * The issues list's origin filter: client-only issues (text a player's client sent, possibly made
 * up) or the rest, as Roblox's Error Report separates client and server errors.
 */
export function OriginFilter({ value }: { value: string }) {
  return (
    <div>
      <label htmlFor="origin">Origin</label>
      <select id="origin" name="origin" defaultValue={value}>
        <option value="">Any</option>
        <option value="server">Server</option>
        <option value="client">Client only</option>
      </select>
    </div>
  );
}
