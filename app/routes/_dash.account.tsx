import { data, redirect, type ActionFunctionArgs, type LoaderFunctionArgs, type MetaFunction } from "@remix-run/node";
import { Form, useActionData, useLoaderData } from "@remix-run/react";
import { useEffect, useState } from "react";
import { TwoFactorSummary } from "~/components/two-factor-summary";
import { twoFactorStatus } from "~/accounts/two-factor.server";
import { currentTokenHash, requirePageUser } from "~/accounts/sessions.server";
import { changePassword } from "~/accounts/users.server";
import { formObject, pageAct } from "~/dashboard/page.server";
import { timeZoneCookie, timeZoneOf } from "~/dashboard/preferences.server";
import { validZone } from "~/components/time";
import { ActionMessage, Submit, useResetOnSuccess } from "~/components/ui";
import { signInMethods, unlinkAction } from "~/accounts/oidc.server";
import { LinkedIdentities } from "~/components/linked-identities";

export const meta: MetaFunction = () => [{ title: "Account · Roblox Monitor" }];

// the one page a user on a temporary password may open: here they choose their own
export const loader = async ({ request, context }: LoaderFunctionArgs) => {
  const user = await requirePageUser(context.services, request, { beforePasswordChange: true });
  return {
    email: user.email,
    mustChange: user.must_change_password,
    timeZone: timeZoneOf(request),
    twoFactor: await twoFactorStatus(context.services.sql, user.id),
    signIn: await signInMethods(context.services, user.id),
  };
};

export const action = async ({ request, context }: ActionFunctionArgs) => {
  const form = formObject(await request.clone().formData());
  if (form.intent === "unlink-identity") return unlinkAction(context.services, request, form);
  if (form.intent === "time-zone") {
    await requirePageUser(context.services, request, { beforePasswordChange: true });
    const local = form.mode === "local";
    const zone = local ? validZone(String(form.zone ?? "")) : null;
    if (local && !zone) return data({ ok: false as const, intent: "time-zone", error: "Your browser did not tell its time zone; times stay in UTC." }, { status: 400 });
    const secure = new URL(request.url).protocol === "https:";
    return data(
      { ok: true as const, intent: "time-zone", message: zone ? `Times are now shown in ${zone}.` : "Times are now shown in UTC." },
      { headers: { "Set-Cookie": timeZoneCookie(zone, secure) } },
    );
  }
  return pageAct("password", async () => {
    const user = await requirePageUser(context.services, request, { beforePasswordChange: true });
    await changePassword(context.services.sql, user, currentTokenHash(request), formObject(await request.formData()));
    // a forced change done: on to the dashboard it was blocking
    if (user.must_change_password) throw redirect("/projects");
    return { ok: true as const, intent: "password", message: "Password changed; your other sessions were signed out." };
  }, { current_password: "Current password", new_password: "New password" });
};

/** "Studio SSO", "Studio SSO or Roblox": the providers an account without a password signs in through. */
const providersOf = (identities: { provider_name: string }[]) =>
  identities.length > 0 ? [...new Set(identities.map((i) => i.provider_name))].join(" or ") : "your provider";

export default function Account() {
  const { email, mustChange, timeZone, twoFactor, signIn } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const passwordForm = useResetOnSuccess("password");
  // the browser's zone is only known in the browser; without JavaScript the choice stays UTC
  const [browserZone, setBrowserZone] = useState("");
  useEffect(() => setBrowserZone(Intl.DateTimeFormat().resolvedOptions().timeZone ?? ""), []);
  return (
    <div className="panel stack" style={{ maxWidth: 520 }}>
      <h1>Account</h1>
      <p>Signed in as <strong>{email}</strong>.</p>
      {mustChange ? (
        <p className="alert error" role="alert" data-testid="must-change-password">
          You signed in with a temporary password. Choose your own to continue.
        </p>
      ) : null}
      <TwoFactorSummary enabled={twoFactor.enabled} left={twoFactor.recovery_codes_left} />
      <h2>Times</h2>
      <ActionMessage data={result} intent="time-zone" />
      <Form method="post">
        <input type="hidden" name="intent" value="time-zone" />
        <input type="hidden" name="zone" value={browserZone} />
        <div className="check"><input type="radio" id="tz-utc" name="mode" value="utc" defaultChecked={!timeZone} /><label htmlFor="tz-utc">UTC (the same for the whole team)</label></div>
        <div className="check">
          <input type="radio" id="tz-local" name="mode" value="local" defaultChecked={Boolean(timeZone)} />
          <label htmlFor="tz-local">My local time{browserZone ? ` (${browserZone})` : ""}</label>
        </div>
        <p className="muted small">Kept in this browser. Relative times (“5 min ago”) show the exact time on hover.</p>
        <p><Submit pending="Saving…">Save</Submit></p>
      </Form>
      <LinkedIdentities {...signIn} result={result} />
      {signIn.has_password || mustChange ? (
        <>
          <h2>Change password</h2>
          <ActionMessage data={result} intent="password" />
          <Form method="post" ref={passwordForm}>
            <input type="hidden" name="intent" value="password" />
            <label htmlFor="current_password">Current password</label>
            <input id="current_password" name="current_password" type="password" autoComplete="current-password" required />
            <label htmlFor="new_password">New password (at least 8 characters, not a common one)</label>
            <input id="new_password" name="new_password" type="password" autoComplete="new-password" minLength={8} required />
            <p><Submit className="primary" pending="Changing…">Change password</Submit></p>
          </Form>
        </>
      ) : (
        // a first sign-in through a provider made this account: there is no current password to
        // prove, and a session alone must not be enough to add one (docs/sign-in.md)
        <section className="stack" data-testid="no-password">
          <h2>Password</h2>
          <ActionMessage data={result} intent="password" />
          <p>{`This account has no password: you sign in through ${providersOf(signIn.identities)}.`}</p>
          <p className="muted small">
            To sign in with a password too, ask the operator to give this account a temporary one
            (<code>npm run cli -- user:password --email {email}</code>); you choose your own at the next sign-in.
          </p>
        </section>
      )}
    </div>
  );
}
