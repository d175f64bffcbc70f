/**
 * The currency map editor of the economy settings page: one row per currency (key, display name,
 * paths one per line), the name, data-code and match paths, and a profile to preview the map on.
 * One Remix form: Preview, Save map, Add currency and Remove post it, so all of it works before (or
 * without) JavaScript; with JavaScript, adding and removing rows happens in place.
 */
import { Form } from "@remix-run/react";
import { cloneElement, useState, type ReactElement } from "react";
import { utc } from "~/components/format";
import { MapWarning } from "./map-warning";
import { LAYOUT_TITLES, layoutTitle } from "./layout-titles";
import { BLANK_CURRENCY, MAX_ROWS, type CurrencyDraft, type ErrorSlot, type FieldErrors, type MapDraft } from "./map-draft";

type Row = CurrencyDraft & { id: number; origin: number | null };

export function MapEditor(props: {
  draft: MapDraft;
  errors: FieldErrors;
  busy: boolean;
  isDefault: boolean;
  updatedAt: string | Date | null;
  sample: { user_id: string; observed_at: string | Date } | null;
  /** the outcome of the last map action, shown beside the buttons */
  status: { ok: boolean; text: string } | null;
  /** the map as posted would skip every profile */
  warning: { kind: "last_pushed" | "match_paths"; message: string } | null;
  /** a Save was held by the warning: offer to save anyway */
  held: boolean;
  /** the starting layout the saved map is, unchanged, if any */
  layout: string | null;
}) {
  const { draft, errors, busy } = props;
  // rows keep the index they had in the posted draft (`origin`), so a 400's `currencies[1]` stays
  // beside the row it is about after another row is removed in place
  const [rows, setRows] = useState<Row[]>(() => draft.currencies.map((c, i) => ({ ...c, id: i, origin: i })));
  const [nextId, setNextId] = useState(draft.currencies.length);
  const rowErrors = (r: Row, field: "key" | "name" | "paths") => (r.origin === null ? undefined : errors[`currencies[${r.origin}].${field}` as ErrorSlot]);
  const add = (e: React.MouseEvent) => {
    e.preventDefault();
    setRows((rs) => [...rs, { ...BLANK_CURRENCY, id: nextId, origin: null }]);
    setNextId((n) => n + 1);
  };
  const remove = (id: number) => (e: React.MouseEvent) => {
    e.preventDefault();
    setRows((rs) => rs.filter((r) => r.id !== id));
  };
  return (
    <Form method="post" className="map-form" aria-label="Currency map">
      {/* Enter in a field previews (the form's first submit button), never removes a row */}
      <button type="submit" name="intent" value="preview-map" className="map-default-submit" tabIndex={-1} aria-hidden="true">
        Preview
      </button>
      <p className="muted small" data-testid="map-state">
        {props.isDefault
          ? "This project uses the default map (the RP layout: Cash, Bank and Dark coin of RPCharacterOne and RPCharacterTwo)."
          : `Saved map${props.layout ? ` (the ${layoutTitle(props.layout)} layout)` : ""}, last changed ${utc(props.updatedAt)}.`}
      </p>
      <div className="row tight small map-layouts" role="group" aria-label="Start from a layout">
        <span className="muted">Start from a layout (not saved until Save map):</span>
        {LAYOUT_TITLES.map((l) => (
          <button key={l.id} type="submit" name="intent" value={`load-layout:${l.id}`} disabled={busy} className="small">
            {l.title}
          </button>
        ))}
      </div>
      <Errors list={errors.form} />
      <details className="map-syntax" open>
        <summary>Path syntax</summary>
        <p className="small">
          A path leads from the top of a player&rsquo;s saved profile to a value. ProfileStore and ProfileService wrappers
          (<code>{"{Data, MetaData}"}</code>) are unwrapped first, so paths start inside <code>Data</code>.
        </p>
        <dl className="map-syntax-list small">
          <dt><code>Data.Wallet.Coins</code></dt><dd>a key inside a table, then a key inside that</dd>
          <dt><code>Characters.*.Cash</code></dt><dd>every entry of a table (each character&rsquo;s Cash)</dd>
          <dt><code>Slots[*].Gems</code></dt><dd>every element of a list</dd>
          <dt><code>Slots[1].Gems</code></dt><dd>one element of a list (lists count from 1, as in Luau)</dd>
          <dt><code>{'["Key with spaces"]'}</code></dt><dd>a key with spaces or other characters, quoted</dd>
        </dl>
      </details>

      <h4>What each currency sums</h4>
      <p className="muted small">
        Each currency sums every number its paths reach (one path per line). A value that is not a number (text, NaN, infinity) is
        skipped with its reason and adds nothing; a path that reaches nothing adds nothing. The key names the currency in the API
        (lowercase letters, digits and _; not <code>total</code>, which is the sum of all).
      </p>
      <Errors list={errors.currencies} />
      {rows.map((r, i) => (
        <fieldset key={r.id} className="map-currency" data-testid="map-currency">
          <legend>Currency {i + 1}</legend>
          <div className="map-currency-fields">
            <Field label="Key" errors={rowErrors(r, "key")} id={`c${r.id}-key`}>
              <input name={`currencies[${i}].key`} defaultValue={r.key} autoComplete="off" spellCheck={false} placeholder="coins" />
            </Field>
            <Field label="Display name" errors={rowErrors(r, "name")} id={`c${r.id}-name`}>
              <input name={`currencies[${i}].name`} defaultValue={r.name} autoComplete="off" placeholder="Coins" />
            </Field>
            <Field label="Paths, one per line" errors={rowErrors(r, "paths")} id={`c${r.id}-paths`} wide>
              <textarea name={`currencies[${i}].paths`} defaultValue={r.paths} rows={Math.max(2, r.paths.split("\n").length)} spellCheck={false} placeholder="Wallet.Coins" />
            </Field>
          </div>
          <button type="submit" name="intent" value={`remove-currency:${i}`} onClick={remove(r.id)} disabled={busy} className="map-remove" aria-label={`Remove currency ${i + 1}${r.key ? ` (${r.key})` : ""}`}>
            Remove
          </button>
        </fieldset>
      ))}
      {rows.length < MAX_ROWS ? (
        <button type="submit" name="intent" value="add-currency" onClick={add} disabled={busy}>
          Add currency
        </button>
      ) : null}

      <h4>Names, data code and what a profile looks like</h4>
      <div className="map-other-fields">
        <Field label="Name paths, one per line" errors={errors.names} id="map-names" hint="Where the player’s character names are: a text value, or a table named by its Name, DisplayName, CharacterName or FullName (or FirstName and LastName).">
          <textarea name="names" defaultValue={draft.names} rows={Math.max(2, draft.names.split("\n").length)} spellCheck={false} placeholder="Characters.*" />
        </Field>
        <Field label="Data-code path" errors={errors.data_code} id="map-data-code" hint="The first number it reaches is shown as the profile’s data code. Leave empty for none.">
          <input name="data_code" defaultValue={draft.data_code} autoComplete="off" spellCheck={false} placeholder="DataCode" />
        </Field>
        <Field label="Match paths, one per line" errors={errors.match} id="map-match" hint="A value is one of this game’s profiles when one of these paths reaches a table; any other value is skipped, not stored. Leave empty to read every value a currency or name path reaches into.">
          <textarea name="match" defaultValue={draft.match} rows={Math.max(2, draft.match.split("\n").length)} spellCheck={false} placeholder="Wallet" />
        </Field>
      </div>

      <h4>Try it on a profile</h4>
      <Field
        label="Profile to preview (JSON)"
        errors={errors.profile}
        id="map-profile"
        hint={
          props.sample
            ? `Leave empty to read the last pushed profile (player ${props.sample.user_id}, ${utc(props.sample.observed_at)}). Nothing is saved by a preview.`
            : "Paste a player’s saved profile as JSON; once a profile has been pushed, leaving this empty reads the last one. Nothing is saved by a preview."
        }
      >
        <textarea name="profile" defaultValue={draft.profile} rows={6} spellCheck={false} placeholder='{"Data": {"Coins": 120, "Gems": 5}, "MetaData": {}}' />
      </Field>

      <p className="alert note small">
        A new map applies to each player&rsquo;s next push or scan; balances already recorded keep the map they were read with.
      </p>
      {props.warning ? <MapWarning warning={props.warning} /> : null}
      <div className="row">
        <button type="submit" name="intent" value="preview-map" disabled={busy}>Preview</button>
        <button type="submit" name="intent" value="save-map" className="primary" disabled={busy}>Save map</button>
        {props.held ? (
          <button type="submit" name="intent" value="save-map-anyway" className="danger" disabled={busy}>Save anyway</button>
        ) : null}
        {props.status ? (
          <span className={props.status.ok ? "map-status ok" : "map-status error"} role="status" data-testid="map-status">
            {props.status.text}
          </span>
        ) : null}
      </div>
    </Form>
  );
}

function Field(props: { label: string; id: string; errors?: string[]; hint?: string; wide?: boolean; children: ReactElement }) {
  const errId = `${props.id}-error`;
  const hintId = `${props.id}-hint`;
  const describedBy = [props.hint ? hintId : null, props.errors?.length ? errId : null].filter(Boolean).join(" ") || undefined;
  return (
    <div className={props.wide ? "map-field wide" : "map-field"}>
      <label htmlFor={props.id}>{props.label}</label>
      {props.hint ? <p className="muted small map-hint" id={hintId}>{props.hint}</p> : null}
      {cloneElement(props.children, { id: props.id, "aria-invalid": props.errors?.length ? true : undefined, "aria-describedby": describedBy })}
      <Errors list={props.errors} id={errId} />
    </div>
  );
}

function Errors({ list, id }: { list?: string[]; id?: string }) {
  if (!list?.length) return null;
  return (
    <ul className="field-error" id={id}>
      {list.map((t, i) => (
        <li key={i}>{t}</li>
      ))}
    </ul>
  );
}
