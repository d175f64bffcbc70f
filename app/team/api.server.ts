import type { ActionFunctionArgs, AppLoadContext, LoaderFunctionArgs } from "@remix-run/node";
import type { User } from "../../db/users.js";
import type { Config } from "~/env.server";
import { handle, methodNotAllowed, readJson } from "~/http.server";
import { assertJsonMutation, isMutation } from "~/accounts/csrf.server";
import { requireApiUser } from "~/accounts/sessions.server";

export type TeamContext = {
  /** the route's load context, handed on whole: the handler is the route and passes on what each call uses */
  services: AppLoadContext["services"];
  user: User;
  request: Request;
  params: Record<string, string | undefined>;
  /** the JSON body (415/413/400 as everywhere) */
  body: () => Promise<unknown>;
};

type Handler = (ctx: TeamContext) => Promise<Response>;

/**
 * Wraps a Team API route: a session is required before anything else (401; 403 while the user must
 * still replace a temporary password, unless the route is one that serves that), then mutations must be
 * same-origin JSON (403/415, the CSRF rule), then the method's handler runs; whatever it throws
 * becomes the one error body.
 */
export function teamRoute(handlers: Partial<Record<"GET" | "POST" | "PUT" | "PATCH" | "DELETE", Handler>>, opts: { beforePasswordChange?: boolean } = {}) {
  const allowed = Object.keys(handlers);
  return ({ request, params, context }: LoaderFunctionArgs | ActionFunctionArgs) =>
    handle(async () => {
      const { services } = context;
      const user = await requireApiUser(services, request, opts);
      const fn = handlers[request.method.toUpperCase() as keyof typeof handlers];
      if (!fn) throw methodNotAllowed(allowed);
      if (isMutation(request)) assertJsonMutation(request, services.config.publicUrl);
      return fn({ services, user, request, params, body: () => readJson(request, services.config.maxBodyBytes, services.bodies) });
    });
}

/**
 * Where links handed out by the service point: PUBLIC_URL, else the origin the request came to (its
 * Host, or X-Forwarded-Host/-Proto only when TRUST_PROXY believes them; always http or https).
 */
export function baseUrl(deps: { config: Pick<Config, "publicUrl"> }, request: Request): string {
  if (deps.config.publicUrl) return deps.config.publicUrl;
  const url = new URL(request.url);
  return `${url.protocol === "https:" ? "https" : "http"}://${url.host}`;
}
