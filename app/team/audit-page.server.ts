import { ApiError } from "~/http.server";
import { queryOf } from "~/errors/params.server";
import type { AuditView } from "./audit.server";

/**
 * An audit log page's data: the filters as typed (for the form), one page of entries, the CSV link
 * for the same filters, and a query mistake (a bad date…) as a message beside the form, not an error page.
 * The caller has authorized the reader first.
 */
export async function auditPage(request: Request, apiPath: string, read: (q: URLSearchParams) => Promise<{ data: AuditView[]; next_before: string | null }>) {
  const q = queryOf(request);
  // a value the read refuses (a NUL) shows as empty in the form; the read below names it
  const typed = (name: string) => {
    try {
      return q.get(name) ?? "";
    } catch {
      return "";
    }
  };
  const filters = { action: typed("action"), actor: typed("actor"), from: typed("from"), to: typed("to") };
  const csv = new URLSearchParams(Object.entries(filters).filter(([, v]) => v !== ""));
  csv.set("format", "csv");
  const csvHref = `${apiPath}?${csv}`;
  try {
    const page = await read(q);
    return { rows: page.data, nextBefore: page.next_before, filters, csvHref, error: null };
  } catch (err) {
    if (ApiError.is(err) && err.status === 400) return { rows: [], nextBefore: null, filters, csvHref, error: err.message };
    throw err;
  }
}
