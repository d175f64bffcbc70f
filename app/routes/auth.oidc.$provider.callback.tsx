import { data, redirect, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { isRouteErrorResponse, useRouteError } from "@remix-run/react";
import { clearFlowCookies, completeOidc } from "~/accounts/oidc.server";
import { ApiError } from "~/http.server";
import { SignInRefused } from "~/components/sign-in-providers";

export const meta: MetaFunction = () => [{ title: "Sign in · Roblox Monitor" }];

/** Where the provider sends the browser back: sign in or link, or a page that says why not. */
export const loader = async ({ request, params, context }: LoaderFunctionArgs) => {
  const cleared = clearFlowCookies(request);
  try {
    const { headers, location } = await completeOidc(context.services, context.clientAddress, request, params.provider ?? "");
    throw redirect(location, { headers });
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const headers = new Headers();
    for (const c of cleared) headers.append("Set-Cookie", c);
    throw data({ code: err.code, message: err.message }, { status: err.status, headers });
  }
};

export default function OidcCallback() {
  return null;
}

export function ErrorBoundary() {
  const error = useRouteError();
  const message = isRouteErrorResponse(error) && typeof error.data?.message === "string" ? error.data.message : "Something went wrong on our side.";
  return <SignInRefused message={message} />;
}
