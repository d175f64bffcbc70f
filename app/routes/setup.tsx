import { redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, useActionData } from "@remix-run/react";
import { assertSameOrigin } from "~/accounts/csrf.server";
import { startSession } from "~/accounts/sessions.server";
import { deviceCookie } from "~/accounts/device-cookies.server";
import { createFirstUser, setupNeeded } from "~/accounts/users.server";
import { formObject, pageAct } from "~/dashboard/page.server";
import { ActionMessage, Submit } from "~/components/ui";

export const meta: MetaFunction = () => [{ title: "Set up · Roblox Monitor" }];

/** First run only: once any account exists this page is gone (it redirects to sign-in). */
export const loader = async ({ context }: LoaderFunctionArgs) => {
  if (!(await setupNeeded(context.services.sql))) throw redirect("/login");
  return null;
};

export const action = ({ request, context }: ActionFunctionArgs) =>
  pageAct("setup", async () => {
    const { services } = context;
    assertSameOrigin(request, services.config.publicUrl);
    const form = formObject(await request.formData());
    if (form.password !== form.confirm) return { ok: false as const, error: "The two passwords differ.", intent: "setup" };
    const user = await createFirstUser(services.sql, { email: form.email, password: form.password });
    // the browser that chose the password has proved it: it gets the device cookie a sign-in gives
    const headers = new Headers();
    headers.append("Set-Cookie", await startSession(services, request, user.id));
    headers.append("Set-Cookie", deviceCookie(request, services.config.appSecret, user.id));
    throw redirect("/projects/new", { headers });
  }, { email: "Email", password: "Password" });

export default function Setup() {
  const result = useActionData<typeof action>();
  return (
    <main className="narrow">
      <div className="panel stack">
        <h1>Welcome to Roblox Monitor</h1>
        <p className="muted">Create the first account. It will own the projects you create; teammates are added later from a project's settings.</p>
        <ActionMessage data={result} />
        <Form method="post">
          <label htmlFor="email">Email</label>
          <input id="email" name="email" type="email" autoComplete="username" required />
          <label htmlFor="password">Password (at least 8 characters, not a common one)</label>
          <input id="password" name="password" type="password" autoComplete="new-password" minLength={8} required />
          <label htmlFor="confirm">Repeat the password</label>
          <input id="confirm" name="confirm" type="password" autoComplete="new-password" minLength={8} required />
          <p>
            <Submit className="primary" pending="Creating…">Create account</Submit>
          </p>
        </Form>
      </div>
    </main>
  );
}
