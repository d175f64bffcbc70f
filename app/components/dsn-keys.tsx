import { Form } from "@remix-run/react";
import { ActionMessage, useResetOnSuccess } from "./ui";
import { CopyButton } from "./copy-button";
import { ago, plural, utc } from "./format";
import type { UrlProblem } from "~/sdk/onboarding.server";

export type DsnKeyView = {
  id: string;
  name: string | null;
  dsn: string;
  created_at: Date | string;
  last_used_at: Date | string | null;
  revoked_at: Date | string | null;
  /** events per minute; null: no limit */
  rate_limit_per_minute: number | null;
};

/**
 * The settings panel of Sentry DSN keys: every member sees and copies them; managers create and revoke.
 * `problem` is the service address's reachability (urlProblem): a DSN holds that address, so a
 * loopback or private one is flagged, as the SDK onboarding flags it.
 */
export function DsnKeysPanel({ keys, manager, result, now, problem = null, defaultLimit = 6000 }: {
  keys: DsnKeyView[];
  manager: boolean;
  result: unknown;
  now: Date | string;
  problem?: UrlProblem;
  /** the create form's rate limit to start with: a new key's default (db/migrations/093_ingest_limits.sql) */
  defaultLimit?: number;
}) {
  const active = keys.filter((k) => !k.revoked_at);
  const revoked = keys.filter((k) => k.revoked_at);
  // after a DSN is made the form empties (and its limit goes back to the default) for the next one
  const createForm = useResetOnSuccess("dsn-create");
  return (
    <section className="panel" aria-labelledby="dsn-keys-title">
      <h2 id="dsn-keys-title" style={{ marginTop: 0 }}>Sentry DSN</h2>
      <p className="muted small">
        Any Sentry SDK (the Roblox Sentry ports, <code>@sentry/node</code>, browser and mobile SDKs) reports here when given this DSN
        instead of sentry.io&apos;s. A DSN key can only send events: it is safe in game and web clients, and it cannot read anything.
        Past its rate limit a key is answered 429 until the minute ends, and Sentry SDKs hold back; leave the limit empty for none.
      </p>
      <ActionMessage data={result} intent="dsn-create" />
      <ActionMessage data={result} intent="dsn-revoke" />
      <ActionMessage data={result} intent="dsn-limit" />
      {active.length > 0 && (problem === "loopback" || problem === "private") ? (
        <p className="alert error" role="note" data-testid="dsn-warning">
          These DSNs point at a {problem === "loopback" ? "loopback" : "private network"} address, which Roblox game servers and
          players&apos; devices cannot reach. Set <code>PUBLIC_URL</code> to the service&apos;s public https address (behind a proxy or
          a tunnel) and copy the DSN again.
        </p>
      ) : null}
      {active.length === 0 ? <p className="muted">No active DSN key.{manager ? " Create one below." : " Ask an owner or admin to create one."}</p> : null}
      <ul className="dsn-list">
        {active.map((k) => (
          <li key={k.id} data-testid="dsn-key">
            <div className="row between">
              <strong>{k.name ?? <span className="muted">unnamed</span>}</strong>
              <span className="muted small">created {utc(k.created_at)} · last used {ago(k.last_used_at, now)}</span>
            </div>
            <div className="row dsn-row">
              <code className="dsn" data-testid="dsn">{k.dsn}</code>
              <CopyButton text={k.dsn} label={`Copy the DSN${k.name ? ` ${k.name}` : ""}`} />
              {manager ? (
                <Form method="post" className="inline">
                  <input type="hidden" name="intent" value="dsn-revoke" />
                  <input type="hidden" name="key_id" value={k.id} />
                  <button className="danger" type="submit">Revoke</button>
                </Form>
              ) : null}
            </div>
            <div className="row small" data-testid="dsn-limit">
              {manager ? (
                <Form method="post" className="row inline">
                  <input type="hidden" name="intent" value="dsn-limit" />
                  <input type="hidden" name="key_id" value={k.id} />
                  <label className="muted">
                    Rate limit{" "}
                    <input
                      name="rate_limit_per_minute"
                      inputMode="numeric"
                      defaultValue={k.rate_limit_per_minute ?? ""}
                      placeholder="no limit"
                      size={10}
                      aria-label={`Events per minute${k.name ? ` of ${k.name}` : ""}`}
                    />{" "}
                    events per minute
                  </label>
                  <button type="submit">Save</button>
                </Form>
              ) : (
                <span className="muted">
                  {k.rate_limit_per_minute === null ? "No rate limit" : `Rate limit: ${plural(k.rate_limit_per_minute, "event")} per minute`}
                </span>
              )}
            </div>
          </li>
        ))}
      </ul>
      {revoked.length ? <p className="muted small">{plural(revoked.length, "revoked DSN key")} (refused at once).</p> : null}
      {manager ? (
        <Form method="post" className="row dsn-create" style={{ marginTop: 12 }} ref={createForm}>
          <input type="hidden" name="intent" value="dsn-create" />
          <label>
            DSN name <span className="muted small">(optional)</span>
            <input name="name" maxLength={100} />
          </label>
          <label>
            Rate limit <span className="muted small">(events per minute; empty: none)</span>
            <input name="rate_limit_per_minute" inputMode="numeric" defaultValue={defaultLimit} size={10} />
          </label>
          <button type="submit">Create DSN</button>
        </Form>
      ) : null}
    </section>
  );
}
