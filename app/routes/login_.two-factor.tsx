import { redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useSearchParams } from "@remix-run/react";
import { assertSameOrigin } from "~/accounts/csrf.server";
import { authenticator } from "~/accounts/login.server";
import { currentUser, startSession } from "~/accounts/sessions.server";
import { challengeCookie, readChallenge } from "~/accounts/two-factor-page.server";
import { formObject, pageAct, pageLoad, safeNext } from "~/dashboard/page.server";
import { ActionMessage, Submit } from "~/components/ui";
import { queryOf } from "~/errors/params.server";

export const meta: MetaFunction = () => [{ title: "Two-factor code · Roblox Monitor" }];

/** The second step of signing in: only after the password was right (the challenge cookie), else back to the first. */
export const loader = async ({ request, context }: LoaderFunctionArgs) => {
  const next = await pageLoad(async () => safeNext(queryOf(request).get("next")));
  if (await currentUser(context.services, request)) throw redirect(next);
  if (!readChallenge(request)) throw redirect(`/login${next !== "/projects" ? `?next=${encodeURIComponent(next)}` : ""}`);
  return null;
};

/** The same remix-auth form strategy as the first step, given the challenge from the cookie and the code typed. */
export const action = ({ request, context }: ActionFunctionArgs) =>
  pageAct("two-factor", async () => {
    const { services, clientAddress } = context;
    assertSameOrigin(request, services.config.publicUrl);
    const next = safeNext(queryOf(request).get("next"));
    const { code } = formObject(await request.clone().formData());
    const headers = new Headers(request.headers);
    headers.delete("content-length");
    headers.set("content-type", "application/x-www-form-urlencoded");
    const step = new Request(request.url, {
      method: "POST",
      headers,
      body: new URLSearchParams({ challenge: readChallenge(request) ?? "", code: typeof code === "string" ? code : "" }).toString(),
    });
    const signIn = await authenticator(services, clientAddress).authenticate("form", step);
    if ("secondFactor" in signIn) throw new Error("a second step cannot ask for another");
    const out = new Headers();
    out.append("Set-Cookie", await startSession(services, request, signIn.user.id));
    out.append("Set-Cookie", signIn.deviceCookie);
    out.append("Set-Cookie", challengeCookie(request, "", 0));
    throw redirect(next, { headers: out });
  }, { code: "Code" });

export default function TwoFactorStep() {
  const result = useActionData<typeof action>();
  const [params] = useSearchParams();
  const next = params.get("next");
  return (
    <main className="narrow">
      <div className="panel stack">
        <h1>Two-factor code</h1>
        <p>Enter the 6-digit code from your authenticator app, or one of your recovery codes.</p>
        <ActionMessage data={result} />
        <Form method="post" action={`/login/two-factor${next ? `?next=${encodeURIComponent(next)}` : ""}`}>
          <label htmlFor="code">Code</label>
          <input id="code" name="code" type="text" inputMode="text" autoComplete="one-time-code" autoFocus required maxLength={64} spellCheck={false} />
          <p>
            <Submit className="primary" pending="Checking…">Verify</Submit>
          </p>
        </Form>
        <p className="muted small"><Link to="/login">Start again</Link></p>
      </div>
    </main>
  );
}
