import { redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, useActionData, useLoaderData, useSearchParams } from "@remix-run/react";
import { assertSameOrigin } from "~/accounts/csrf.server";
import { authenticator } from "~/accounts/login.server";
import { publicProviders } from "~/accounts/oidc.server";
import { SignInProviders } from "~/components/sign-in-providers";
import { currentUser, startSession } from "~/accounts/sessions.server";
import { setupNeeded } from "~/accounts/users.server";
import { pageAct, pageLoad, safeNext } from "~/dashboard/page.server";
import { ActionMessage, Submit } from "~/components/ui";
import { queryOf } from "~/errors/params.server";
import { challengeCookie, twoFactorPage } from "~/accounts/two-factor-page.server";

export const meta: MetaFunction = () => [{ title: "Sign in · Roblox Monitor" }];

export const loader = async ({ request, context }: LoaderFunctionArgs) => {
  const { services } = context;
  if (await setupNeeded(services.sql)) throw redirect("/setup");
  const next = await pageLoad(async () => safeNext(queryOf(request).get("next")));
  if (await currentUser(services, request)) throw redirect(next);
  return { providers: publicProviders(services.config) };
};

/** remix-auth's form strategy over the same credential check (and failed-login limit) as the Team API. */
export const action = ({ request, context }: ActionFunctionArgs) =>
  pageAct("login", async () => {
    const { services, clientAddress } = context;
    assertSameOrigin(request, services.config.publicUrl);
    const next = safeNext(queryOf(request).get("next"));
    const signIn = await authenticator(services, clientAddress).authenticate("form", request);
    // two-factor on: the password was right, the code is asked on a page of its own
    if ("secondFactor" in signIn) throw redirect(twoFactorPage(next), { headers: { "Set-Cookie": challengeCookie(request, signIn.secondFactor.challenge) } });
    const { user, deviceCookie } = signIn;
    const headers = new Headers();
    headers.append("Set-Cookie", await startSession(services, request, user.id));
    headers.append("Set-Cookie", deviceCookie);
    throw redirect(next, { headers });
  });

export default function Login() {
  const result = useActionData<typeof action>();
  const { providers } = useLoaderData<typeof loader>();
  const [params] = useSearchParams();
  return (
    <main className="narrow">
      <div className="panel stack">
        <h1>Sign in</h1>
        <ActionMessage data={result} />
        <Form method="post" action={`/login${params.get("next") ? `?next=${encodeURIComponent(params.get("next")!)}` : ""}`}>
          <label htmlFor="email">Email</label>
          <input id="email" name="email" type="email" autoComplete="username" required />
          <label htmlFor="password">Password</label>
          <input id="password" name="password" type="password" autoComplete="current-password" required />
          <p>
            <Submit className="primary" pending="Signing in…">Sign in</Submit>
          </p>
        </Form>
        <SignInProviders providers={providers} next={params.get("next")} />
      </div>
    </main>
  );
}
