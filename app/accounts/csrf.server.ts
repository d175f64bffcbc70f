import { ApiError, forbidden } from "~/http.server";

const SAFE = new Set(["GET", "HEAD", "OPTIONS"]);
export const isMutation = (request: { method: string }) => !SAFE.has(request.method.toUpperCase());

/**
 * Refuses cross-site requests that would ride on the session cookie. Browsers send `Origin` on
 * every POST/PATCH/DELETE (and `Sec-Fetch-Site` on all requests), so a form or fetch from another
 * site is caught here; clients that send neither (curl, scripts) are not browsers carrying a
 * victim's cookie. The host is compared, not the scheme: behind a TLS-terminating proxy the server
 * may see http while the browser says https.
 */
export function assertSameOrigin(request: Request, publicUrl?: string): void {
  const origin = request.headers.get("origin");
  if (origin !== null) {
    let host: string | undefined;
    try {
      host = new URL(origin).host;
    } catch {
      host = undefined;
    }
    // the request URL's host is the Host header, or X-Forwarded-Host when TRUST_PROXY believes it
    const expected = new URL(request.url).host;
    const allowed = [expected, publicUrl ? new URL(publicUrl).host : undefined].filter(Boolean).map((h) => h!.toLowerCase());
    if (host === undefined || !allowed.includes(host.toLowerCase())) {
      throw forbidden("Cross-site requests are refused; send this request from the dashboard's own origin.");
    }
  }
  if (request.headers.get("sec-fetch-site") === "cross-site") {
    throw forbidden("Cross-site requests are refused; send this request from the dashboard's own origin.");
  }
}

/** Team API mutations: same origin, and a JSON content type (which a plain HTML form cannot send). */
export function assertJsonMutation(request: Request, publicUrl?: string): void {
  assertSameOrigin(request, publicUrl);
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/([\w.+-]+\+)?json\b/i.test(type.trim())) {
    throw new ApiError(415, "unsupported_media_type", "Send Team API changes with content-type: application/json.");
  }
}
