import { ApiError } from "~/http.server";
import { queryOf } from "~/errors/params.server";
import type { AuditView } from "./audit.server";

/**
 * An audit log page's data: the filters as typed (for the form), one page of entries, the CSV link
 * for the same filters, and a query mistake (a bad date…) as a message beside the form, not an error page.
 * The caller has authorized the reader first.
 */
export async function auditPage(request: Request, apiPath: string, read: (q: URLSearchParams) => Promise<{ data: AuditView[]; next_before: string | null }>) {
  const raw = new URL(request.url).searchParams;
  const filters = { action: raw.get("action") ?? "", actor: raw.get("actor") ?? "", from: raw.get("from") ?? "", to: raw.get("to") ?? "" };
  const csv = new URLSearchParams(Object.entries(filters).filter(([, v]) => v !== ""));
  csv.set("format", "csv");
  const csvHref = `${apiPath}?${csv}`;
  try {
    const page = await read(queryOf(request));
    return { rows: page.data, nextBefore: page.next_before, filters, csvHref, error: null };
  } catch (err) {
    if (ApiError.is(err) && err.status === 400) return { rows: [], nextBefore: null, filters, csvHref, error: err.message };
    throw err;
  }
}
