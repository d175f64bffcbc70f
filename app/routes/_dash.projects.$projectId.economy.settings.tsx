import { data, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData, useNavigation, useRevalidator } from "@remix-run/react";
import { randomUUID } from "node:crypto";
import { useEffect } from "react";
import { getProfileSample } from "../../db/economy-samples.js";
import { requirePageUser } from "~/accounts/sessions.server";
import { plural } from "~/components/format";
import type { User } from "../../db/users.js";
import type { Services } from "~/services.server";
import { BLANK_CURRENCY, draftFromForm, draftToBody, fieldErrors, mapToDraft, MAX_ROWS, type MapDraft } from "~/economy/map-draft";
import { MapEditor } from "~/economy/map-form";
import { MapPreview } from "~/economy/map-preview";
import { getMapFor, previewMapFor, resetMapFor, saveMapFor, warningsFor, type Preview } from "~/economy/map.server";
import type { MatchWarning } from "~/economy/map-warnings.server";
import { MapWarning } from "~/economy/map-warning";
import { LAYOUTS, type LayoutId } from "~/economy/layouts.server";
import { deleteKey, keyStatus, putKey, startSync, syncStatus } from "~/economy/sync.server";
import { economyAct, economyPage } from "~/economy/views.server";
import { ThresholdSettings } from "~/economy/threshold-form";
import { thresholdFormAction } from "~/economy/threshold-settings.server";
import { LEARNING, thresholdViews } from "~/economy/thresholds.server";
import { ApiError, invalidPayload } from "~/http.server";
import { authorize, EVERYONE, MANAGERS } from "~/team/access.server";
import { readingAsMember } from "~/services.server";
import { retryAfterHeaders } from "~/dashboard/page.server";

export const meta: MetaFunction = () => [{ title: "Economy settings · Roblox Monitor" }];

/** A refused preview's Retry-After reaches the browser with its 429. */
export const headers = retryAfterHeaders;

export const loader = async ({ request, params, context }: LoaderFunctionArgs) => {
  const { services } = context;
  const user = await requirePageUser(services, request);
  return economyPage(() =>
    readingAsMember(services, request, user, params.projectId, async (sql) => {
      const { projectId } = await authorize(sql, user, params.projectId, MANAGERS, "manage the economy settings");
      const [key, sync, map, sample] = await Promise.all([
        keyStatus({ sql }, projectId),
        syncStatus({ sql }, projectId),
        getMapFor(sql, user, projectId),
        getProfileSample(sql, projectId),
      ]);
      const thresholds = await thresholdViews(sql, projectId, map.map, services.config);
      return { projectId, key, sync, map, sample: sample && { user_id: sample.user_id, observed_at: sample.observed_at }, thresholds, minRises: LEARNING.minRises };
    }),
  );
};

/** One form per intent; owner/admin only (the Team gate), same-origin enforced by requirePageUser. */
export const action = async ({ request, params, context }: ActionFunctionArgs) => {
  const { services } = context;
  const user = await requirePageUser(services, request);
  const form = await request.formData();
  const intent = String(form.get("intent") ?? "");
  if (MAP_INTENTS.test(intent)) return mapAction(services, user, params.projectId, intent, form);
  if (intent === "threshold-save" || intent === "threshold-reset") return thresholdFormAction(services.sql, services.config, user, params.projectId, intent, form);
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
        }, user.id);
        return { ok: true as const, message: "The Open Cloud key is saved (encrypted)." };
      case "delete-key":
        await deleteKey(services, projectId, user.id);
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

const MAP_INTENTS = /^(preview-map|save-map|save-map-anyway|reset-map|add-currency|remove-currency:\d+|load-layout:[a-z]+)$/;

type MapResult = {
  kind: "map";
  /** a new value per answer: the editor starts over from `draft` whenever one arrives */
  at: string;
  ok: boolean;
  message?: string;
  error?: string;
  draft: MapDraft;
  details?: { path: string; message: string }[];
  preview?: Preview;
  /** the draft would skip every profile (against the last pushed one, else by its match paths) */
  warning?: MatchWarning;
  /** the warning held a Save: the editor offers "Save anyway" */
  held?: boolean;
};

/**
 * The currency map's intents. Every answer carries the draft back (as posted, or as saved), so the
 * editor shows what was sent with each error beside its field; adding and removing a row are
 * answered here too for a browser without JavaScript.
 */
async function mapAction(services: Services, user: User, projectIdParam: string | undefined, intent: string, form: FormData) {
  const draft = draftFromForm(form);
  const answer = (r: Omit<MapResult, "kind" | "at">): MapResult => ({ kind: "map", at: randomUUID(), ...r });
  if (intent === "add-currency") {
    const currencies = draft.currencies.length < MAX_ROWS ? [...draft.currencies, { ...BLANK_CURRENCY }] : draft.currencies;
    return answer({ ok: true, draft: { ...draft, currencies } });
  }
  if (intent.startsWith("load-layout:")) {
    // a starting layout into the editor, not saved: the draft keeps the pasted profile to preview it on
    const layout = LAYOUTS[intent.slice("load-layout:".length) as LayoutId];
    if (!layout) return answer({ ok: false, error: "Unknown layout.", draft });
    return answer({ ok: true, message: `The ${layout.title} layout is in the editor; preview it, then save.`, draft: mapToDraft(layout.map, draft.profile) });
  }
  if (intent.startsWith("remove-currency:")) {
    const i = Number(intent.slice("remove-currency:".length));
    return answer({ ok: true, draft: { ...draft, currencies: draft.currencies.filter((_, j) => j !== i) } });
  }
  try {
    if (intent === "preview-map") {
      // the profile is parsed only once the preview's rate limit let it through
      const body = () => {
        let profile: unknown = undefined;
        if (draft.profile.trim() !== "") {
          try {
            profile = JSON.parse(draft.profile);
          } catch (err) {
            throw invalidPayload("The profile to preview is not JSON.", [{ path: "profile", message: `is not JSON: ${(err as Error).message}` }]);
          }
        }
        return { map: draftToBody(draft), profile };
      };
      const preview = await previewMapFor(services, user, projectIdParam, body);
      // a pasted profile the map reads may still differ from what the game pushes: check the last pushed one too
      const [warning] = preview.profile_source === "posted" ? await warningsFor(services.sql, (await authorize(services.sql, user, projectIdParam, EVERYONE)).projectId, preview.map) : [];
      return answer({ ok: true, draft, preview, warning });
    }
    if (intent === "save-map" || intent === "save-map-anyway") {
      const saved = await saveMapFor(services.sql, user, projectIdParam, draftToBody(draft), { holdOnWarning: intent === "save-map" });
      if (!saved.saved) {
        return answer({ ok: false, error: "Not saved yet: see the warning above. Save anyway, or change the paths first.", draft, warning: saved.warnings[0], held: true });
      }
      return answer({ ok: true, message: "The currency map is saved.", draft: mapToDraft(saved.map, draft.profile), warning: saved.warnings[0] });
    }
    const reset = await resetMapFor(services.sql, user, projectIdParam);
    return answer({ ok: true, message: "The default map is back.", draft: mapToDraft(reset.map) });
  } catch (err) {
    if (!ApiError.is(err)) throw err;
    const details = err.details ?? [];
    // the service's message names a field by its path (currencies[0].key): the editor shows each
    // problem in words beside its field, so the summary only counts them
    const onMap = details.filter((d) => /^(currencies|names|data_code|match)\b/.test(d.path)).length;
    const error = onMap > 0 ? `The map has ${plural(onMap, "problem")}, marked above; nothing was saved.` : err.message;
    // a 429 carries its Retry-After to the page too; the editor shows its message
    return data(answer({ ok: false, error, details, draft }), { status: err.status, headers: err.headers });
  }
}

export default function EconomySettings() {
  const { projectId, key, sync, map, sample, thresholds, minRises } = useLoaderData<typeof loader>();
  const answer = useActionData<typeof action>();
  const mapResult = answer && "kind" in answer ? answer : null;
  const result = answer && !("kind" in answer) ? answer : null;
  const draft = mapResult?.draft ?? mapToDraft(map.map);
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
      <section className="panel" aria-labelledby="currencies-title">
        <h3 id="currencies-title" style={{ marginTop: 0 }}>Currencies</h3>
        <p className="muted small">
          The currency map says where this game keeps its currencies in a player&rsquo;s saved profile. Pushes and the Open Cloud
          scan read every profile through it.
        </p>
        {map.warnings.length ? <MapWarning warning={map.warnings[0]} saved testId="saved-map-warning" /> : null}
        <MapEditor
          key={mapResult?.at ?? "saved"}
          draft={draft}
          errors={mapResult && !mapResult.ok ? fieldErrors(mapResult.details ?? [], mapResult.draft) : {}}
          busy={busy}
          isDefault={map.is_default}
          updatedAt={map.updated_at}
          sample={sample}
          status={mapResult?.message ? { ok: true, text: mapResult.message } : mapResult?.error ? { ok: false, text: mapResult.error } : null}
          warning={mapResult ? (mapResult.warning ?? null) : null}
          layout={map.layout}
          held={Boolean(mapResult?.held)}
        />
        {map.is_default ? null : (
          <Form method="post" className="map-reset">
            <input type="hidden" name="intent" value="reset-map" />
            <button type="submit" className="danger" disabled={busy}>Reset to the default map</button>
            <p className="muted small">Back to the seed&rsquo;s RP layout (the Team API&rsquo;s default): Cash, Bank and Dark coin of RPCharacterOne and RPCharacterTwo.</p>
          </Form>
        )}
      </section>
      {mapResult?.preview ? <MapPreview preview={mapResult.preview} /> : null}
      <ThresholdSettings currencies={thresholds} minRises={minRises} busy={busy} answer={result && "currency" in result ? result : null} />
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
