import { redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { currentTokenHash, requirePageUser } from "~/accounts/sessions.server";
import { changePassword } from "~/accounts/users.server";
import { formObject, pageAct } from "~/dashboard/page.server";
import { ActionMessage } from "~/components/ui";

export const meta: MetaFunction = () => [{ title: "Account · Roblox Monitor" }];

// the one page a user on a temporary password may open: here they choose their own
export const loader = async ({ request, context }: LoaderFunctionArgs) => {
  const user = await requirePageUser(context.services, request, { beforePasswordChange: true });
  return { email: user.email, mustChange: user.must_change_password };
};

export const action = ({ request, context }: ActionFunctionArgs) =>
  pageAct("password", async () => {
    const user = await requirePageUser(context.services, request, { beforePasswordChange: true });
    await changePassword(context.services.sql, user.id, currentTokenHash(request), formObject(await request.formData()));
    // a forced change done: on to the dashboard it was blocking
    if (user.must_change_password) throw redirect("/projects");
    return { ok: true as const, message: "Password changed; your other sessions were signed out." };
  });

export default function Account() {
  const { email, mustChange } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  return (
    <div className="panel stack" style={{ maxWidth: 520 }}>
      <h1>Account</h1>
      <p>Signed in as <strong>{email}</strong>.</p>
      <h2>Change password</h2>
      {mustChange ? (
        <p className="alert error" role="alert" data-testid="must-change-password">
          You signed in with a temporary password. Choose your own to continue.
        </p>
      ) : null}
      <ActionMessage data={result} />
      <Form method="post">
        <label htmlFor="current_password">Current password</label>
        <input id="current_password" name="current_password" type="password" autoComplete="current-password" required />
        <label htmlFor="new_password">New password (at least 8 characters, not a common one)</label>
        <input id="new_password" name="new_password" type="password" autoComplete="new-password" minLength={8} required />
        <p><button className="primary" type="submit">Change password</button></p>
      </Form>
    </div>
  );
}
