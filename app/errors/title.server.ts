import { messageTemplate } from "~/ingest/fingerprint.server";

/**
 * An issue's title: its message in the form it is grouped by, so it names what failed and not whom it
 * happened to (`Players.<player>.PlayerGui.Shop:12: attempt to index nil with 'Price'`,
 * `DataStore request failed. Key = <key>`, `Workspace.Map.Spawns.Spawn<n>`). It is computed when read,
 * from the issue's message (its first event's), with the grouping's own template, so a better template
 * retitles every issue, old ones included. A title is read from the message's first 1,024 characters
 * (the rest is marked with an ellipsis), so it costs a few microseconds, tens for the longest messages.
 */
export const TITLE_SOURCE_CHARS = 1024;

export function issueTitle(message: string): string {
  const kept = titles.get(message);
  if (kept !== undefined) return kept;
  const cut = message.length > TITLE_SOURCE_CHARS;
  const { template, location } = messageTemplate(cut ? message.slice(0, TITLE_SOURCE_CHARS) : message);
  const named = location ? (template ? `${location}: ${template}` : location) : template;
  const title = (named || message.trim() || message.slice(0, TITLE_SOURCE_CHARS)) + (cut ? "…" : "");
  if (!cut) {
    if (titles.size >= TITLES_KEPT) titles.clear();
    titles.set(message, title);
  }
  return title;
}

/**
 * The titles of the messages read lately (a title is the message's alone): a list read again, a page
 * of 50 issues, takes them from here instead of running the template's expressions again (about 15 µs
 * a title). Messages past TITLE_SOURCE_CHARS are not kept, so this holds at most about 2 MB.
 */
const TITLES_KEPT = 2_000;
const titles = new Map<string, string>();

/** The row with its `title` beside its message: a stored title (a named grouping rule's issue) wins. */
export function withTitle<T extends object>(row: T): T & { title: string } {
  const stored = (row as { title?: unknown }).title;
  return { ...row, title: typeof stored === "string" && stored !== "" ? stored : issueTitle(String((row as { message?: unknown }).message ?? "")) };
}
