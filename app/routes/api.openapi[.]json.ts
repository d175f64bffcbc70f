import type { LoaderFunctionArgs } from "@remix-run/node";
import { getOnly } from "~/http.server";
import { openApiText } from "~/openapi/document.server";
import pkg from "../../package.json";

/**
 * The OpenAPI 3.1 document of the public API (docs/api.md, "OpenAPI"): public, made once per process
 * from the endpoints' zod schemas, cacheable (an ETag; a matching `If-None-Match` answers 304).
 */
export const loader = ({ request }: LoaderFunctionArgs) => {
  const { text, etag } = openApiText(pkg.version);
  const headers = { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "public, max-age=300", ETag: etag };
  if (request.headers.get("if-none-match")?.split(",").some((t) => t.trim() === etag)) return new Response(null, { status: 304, headers });
  return new Response(text, { headers });
};

export const action = getOnly;
