/**
 * The currency map as the settings form edits it: every field a string (paths one per line), so a
 * half-typed map survives a round trip through the server (preview, a 400, adding or removing a
 * row without JavaScript). A saved map turns into a draft and back into the same map exactly.
 * Shared by the settings route (server) and the editor (browser): no server imports.
 */
import type { CurrencyMap } from "./currency-map.server";

export type CurrencyDraft = { key: string; name: string; paths: string };
export type MapDraft = { currencies: CurrencyDraft[]; names: string; data_code: string; match: string; profile: string };

/** The editor's ceiling on rows (the map's own limit is checked when it is saved). */
export const MAX_ROWS = 20;

export const BLANK_CURRENCY: CurrencyDraft = { key: "", name: "", paths: "" };

export function mapToDraft(map: CurrencyMap, profile = ""): MapDraft {
  return {
    currencies: map.currencies.map((c) => ({ key: c.key, name: c.name, paths: c.paths.join("\n") })),
    names: map.names.join("\n"),
    data_code: map.data_code ?? "",
    match: map.match.join("\n"),
    profile,
  };
}

/** Non-blank lines, trimmed. */
export const lines = (s: string) => s.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== "");

/** The body the map service validates: blank lines dropped, an empty data-code path is none. */
export function draftToBody(d: MapDraft) {
  return {
    currencies: d.currencies.map((c) => ({ key: c.key.trim(), name: c.name.trim(), paths: lines(c.paths) })),
    names: lines(d.names),
    data_code: d.data_code.trim() === "" ? null : d.data_code.trim(),
    match: lines(d.match),
  };
}

/** The editor's fields (`currencies[0].key`, `names`, ...) as posted. */
export function draftFromForm(form: FormData): MapDraft {
  const text = (k: string) => {
    const v = form.get(k);
    return typeof v === "string" ? v : "";
  };
  const rows = new Map<number, CurrencyDraft>();
  for (const k of form.keys()) {
    const m = /^currencies\[(\d{1,3})\]\.(key|name|paths)$/.exec(k);
    if (!m) continue;
    const i = Number(m[1]);
    if (!rows.has(i)) rows.set(i, { ...BLANK_CURRENCY });
    rows.get(i)![m[2] as keyof CurrencyDraft] = text(k);
  }
  const currencies = [...rows.entries()].sort((a, b) => a[0] - b[0]).slice(0, MAX_ROWS + 5).map(([, c]) => c);
  return { currencies, names: text("names"), data_code: text("data_code"), match: text("match"), profile: text("profile") };
}

/** Where a message shows: beside one field of the editor, or above it ("form"). */
export type ErrorSlot = `currencies[${number}].${"key" | "name" | "paths"}` | "currencies" | "names" | "data_code" | "match" | "profile" | "form";
export type FieldErrors = Partial<Record<ErrorSlot, string[]>>;

const LABEL = { key: "Key", name: "Display name", paths: "Path", names: "Name path", match: "Match path", data_code: "Data-code path" } as const;

/**
 * A 400's details (paths like `currencies[1].paths[0]`) as plain sentences beside the field they are
 * about: "Path “Slots[*.Gems” is not a path: it has an unclosed [ at character 6."
 */
export function fieldErrors(details: { path: string; message: string }[], draft: MapDraft): FieldErrors {
  const out: FieldErrors = {};
  const add = (slot: ErrorSlot, text: string) => (out[slot] ??= []).push(text.endsWith(".") ? text : `${text}.`);
  const quoted = (list: string[], i: string | undefined) => (i !== undefined && list[Number(i)] !== undefined ? ` “${list[Number(i)]}”` : "");
  for (const { path, message } of details) {
    let m: RegExpExecArray | null;
    if ((m = /^currencies\[(\d+)\]\.(key|name)$/.exec(path))) {
      const again = /^repeats the key (.+)$/.exec(message);
      const text = again ? `Key ${again[1]} is already used by a currency above` : `${LABEL[m[2] as "key" | "name"]} ${message}`;
      add(`currencies[${Number(m[1])}].${m[2] as "key" | "name"}`, text);
    }
    else if ((m = /^currencies\[(\d+)\]\.paths(?:\[(\d+)\])?$/.exec(path))) {
      const row = draft.currencies[Number(m[1])];
      const text = m[2] === undefined ? `Paths ${message}` : `${LABEL.paths}${quoted(lines(row?.paths ?? ""), m[2])} ${message}`;
      add(`currencies[${Number(m[1])}].paths`, text);
    } else if ((m = /^currencies(?:\[(\d+)\])?$/.exec(path))) {
      add(m[1] === undefined ? "currencies" : `currencies[${Number(m[1])}].key`, `${m[1] === undefined ? "Currencies" : "This currency"} ${message}`);
    } else if ((m = /^(names|match)(?:\[(\d+)\])?$/.exec(path))) {
      const field = m[1] as "names" | "match";
      add(field, m[2] === undefined ? `${field === "names" ? "Name paths" : "Match paths"} ${message}` : `${LABEL[field]}${quoted(lines(draft[field]), m[2])} ${message}`);
    } else if (path === "data_code") add("data_code", `${LABEL.data_code} ${message}`);
    else if (path === "profile") add("profile", `The profile ${message}`);
    else add("form", path ? `${path} ${message}` : message);
  }
  return out;
}
