import { type ActionFunctionArgs, type MetaFunction } from "@remix-run/node";
import { useActionData } from "@remix-run/react";
import { assertSameOrigin } from "~/accounts/csrf.server";
import { startOidc } from "~/accounts/oidc.server";
import { formObject, pageAct, safeNext } from "~/dashboard/page.server";
import { SignInRefused } from "~/components/sign-in-providers";

export const meta: MetaFunction = () => [{ title: "Sign in · Roblox Monitor" }];

// opened directly (not through a button): the page says where to start
export const loader = () => null;

/** The sign-in page's and Account page's provider buttons: off to the provider (see docs/sign-in.md). */
export const action = ({ request, params, context }: ActionFunctionArgs) =>
  pageAct("oidc", async () => {
    assertSameOrigin(request, context.services.config.publicUrl);
    const form = formObject(await request.clone().formData());
    const intent = form.intent === "link" ? "link" : "login";
    const next = intent === "link" ? "/account" : safeNext(typeof form.next === "string" ? form.next : null);
    return startOidc(context.services, request, params.provider ?? "", { intent, next });
  });

export default function OidcStart() {
  const result = useActionData<typeof action>();
  return <SignInRefused message={result && "error" in result ? result.error : "Start again from the sign-in page."} />;
}
