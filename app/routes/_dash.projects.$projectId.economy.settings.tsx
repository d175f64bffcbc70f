import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useNavigation, useRevalidator } from "@remix-run/react";
import { useEffect } from "react";
import { requirePageUser } from "~/accounts/sessions.server";
import { deleteKey, keyStatus, putKey, startSync, syncStatus } from "~/economy/sync.server";
import { economyAct, economyPage } from "~/economy/views.server";
import { authorize, MANAGERS } from "~/team/access.server";

export const meta: MetaFunction = () => [{ title: "Economy settings · Roblox Monitor" }];

export const loader = async ({ request, params, context }: LoaderFunctionArgs) => {
  const { services } = context;
  const user = await requirePageUser(services, request);
  return economyPage(async () => {
    const { projectId } = await authorize(services.sql, user, params.projectId, MANAGERS, "manage the Open Cloud scan");
    const [key, sync] = await Promise.all([keyStatus(services, projectId), syncStatus(services, projectId)]);
    return { projectId, key, sync };
  });
};

/** One form per intent; owner/admin only (the Team gate), same-origin enforced by requirePageUser. */
export const action = async ({ request, params, context }: ActionFunctionArgs) => {
  const { services } = context;
  const user = await requirePageUser(services, request);
  const form = await request.formData();
  const field = (k: string) => {
    const v = form.get(k);
    return typeof v === "string" && v.trim() !== "" ? v.trim() : undefined;
  };
  return economyAct(async () => {
    const { projectId } = await authorize(services.sql, user, params.projectId, MANAGERS, "manage the Open Cloud scan");
    switch (form.get("intent")) {
      case "save-key":
        await putKey(services, projectId, {
          project_id: projectId,
          api_key: field("api_key"),
          universe_id: field("universe_id"),
          datastore_name: field("datastore_name"),
          scope: field("scope"),
          key_prefix: field("key_prefix") ?? null,
        });
        return { ok: true as const, message: "The Open Cloud key is saved (encrypted)." };
      case "delete-key":
        await deleteKey(services, projectId);
        return { ok: true as const, message: "The Open Cloud key is deleted." };
      case "start-scan": {
        const { job_id } = await startSync(services, projectId, { project_id: projectId, restart: form.get("restart") === "on" });
        return { ok: true as const, message: `Scan ${job_id.slice(0, 8)} queued.` };
      }
      default:
        return { ok: false as const, error: "Unknown action.", details: [] };
    }
  });
};

export default function EconomySettings() {
  const { projectId, key, sync } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const busy = useNavigation().state !== "idle";
  const revalidator = useRevalidator();
  const live = sync.state === "queued" || sync.state === "running";
  // progress: refresh every 2 s while a scan is live
  useEffect(() => {
    if (!live) return;
    const t = setInterval(() => revalidator.state === "idle" && revalidator.revalidate(), 2000);
    return () => clearInterval(t);
  }, [live, revalidator]);
  return (
    <>
      <p><Link to={`/projects/${projectId}/economy`}>← Economy</Link></p>
      <h2>Economy settings</h2>
      {result ? <p className={result.ok ? "success" : "error"} role="status">{result.ok ? result.message : result.error}</p> : null}
      <section className="panel">
        <h3 style={{ marginTop: 0 }}>Open Cloud key</h3>
        <p className="muted small">
          Needs the universe-datastores.objects:list and :read scopes for the universe. Stored encrypted; only its last four characters are ever shown.
        </p>
        {key.configured ? (
          <p data-testid="key-status">
            Key …{key.key_last4} for universe {key.universe_id}, data store “{key.datastore_name}” (scope {key.scope}
            {key.key_prefix ? `, keys starting with “${key.key_prefix}”` : ""}), updated {new Date(key.updated_at!).toISOString().slice(0, 16).replace("T", " ")} UTC
          </p>
        ) : (
          <p data-testid="key-status">No key stored.</p>
        )}
        <Form method="post" className="stack">
          <input type="hidden" name="intent" value="save-key" />
          <label>API key <input name="api_key" type="password" autoComplete="off" required /></label>
          <label>Universe id <input name="universe_id" inputMode="numeric" defaultValue={key.universe_id ?? ""} required /></label>
          <label>Data store name <input name="datastore_name" defaultValue={key.datastore_name ?? ""} required /></label>
          <label>Scope <input name="scope" placeholder="global" defaultValue={key.scope ?? ""} /></label>
          <label>Key prefix <input name="key_prefix" placeholder="(all keys)" defaultValue={key.key_prefix ?? ""} /></label>
          <button type="submit" className="primary" disabled={busy}>Save key</button>
        </Form>
        {key.configured ? (
          <Form method="post">
            <input type="hidden" name="intent" value="delete-key" />
            <button type="submit" disabled={busy}>Delete key</button>
          </Form>
        ) : null}
      </section>
      <section className="panel">
        <h3 style={{ marginTop: 0 }}>Scan</h3>
        <p data-testid="scan-progress">
          State: <strong>{sync.state}</strong> · scanned {sync.scanned} · stored {sync.stored} · skipped {sync.skipped} · failed {sync.failed}
          {sync.started_at ? ` · started ${new Date(sync.started_at).toISOString().slice(0, 16).replace("T", " ")} UTC` : ""}
          {sync.finished_at ? ` · finished ${new Date(sync.finished_at).toISOString().slice(0, 16).replace("T", " ")} UTC` : ""}
        </p>
        {sync.error ? <p className="error">{sync.error}</p> : null}
        <Form method="post" className="row">
          <input type="hidden" name="intent" value="start-scan" />
          <label className="small"><input type="checkbox" name="restart" /> Start over (ignore a failed scan's cursor)</label>
          <button type="submit" className="primary" disabled={busy || live || !key.configured}>Start scan</button>
        </Form>
      </section>
    </>
  );
}
