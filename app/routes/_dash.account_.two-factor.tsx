import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Link, useActionData, useLoaderData } from "@remix-run/react";
import { requirePageUser } from "~/accounts/sessions.server";
import {
  cancelEnrollment,
  confirmEnrollment,
  disableTwoFactor,
  pendingEnrollment,
  regenerateRecoveryCodes,
  startEnrollment,
  twoFactorStatus,
} from "~/accounts/two-factor.server";
import { formObject, pageAct, pageLoad } from "~/dashboard/page.server";
import { hasPassword } from "../../db/sign-in-identities.js";
import { queryOf } from "~/errors/params.server";
import { TwoFactorEnroll } from "~/components/two-factor-enroll";

export const meta: MetaFunction = () => [{ title: "Two-factor authentication · Roblox Monitor" }];

/** Where a project that requires a second factor sends its members (`?required=1`); not project-scoped, so never refused by it. */
export const loader = async ({ request, context }: LoaderFunctionArgs) => {
  const user = await requirePageUser(context.services, request);
  return pageLoad(async () => {
    const required = queryOf(request).get("required") === "1";
    const [state, enrollment, withPassword] = await Promise.all([
      twoFactorStatus(context.services.sql, user.id),
      pendingEnrollment(context.services, user),
      hasPassword(context.services.sql, user.id),
    ]);
    return { state, enrollment, required, hasPassword: withPassword };
  });
};

/** Each form is one step of the Team API's /api/auth/two-factor/:step. */
export const action = async ({ request, context }: ActionFunctionArgs) => {
  const form = formObject(await request.clone().formData());
  const intent = String(form.intent ?? "");
  return pageAct(intent, async () => {
    const { services } = context;
    const user = await requirePageUser(services, request);
    switch (intent) {
      case "setup":
        await startEnrollment(services, user);
        return { ok: true as const, intent };
      case "cancel":
        await cancelEnrollment(services.sql, user.id);
        return { ok: true as const, intent };
      case "confirm": {
        const { recovery_codes } = await confirmEnrollment(services, user, { code: form.code });
        return { ok: true as const, intent, message: "Two-factor authentication is on.", recovery_codes };
      }
      case "recovery-codes": {
        const { recovery_codes } = await regenerateRecoveryCodes(services, user, { code: form.code });
        return { ok: true as const, intent, message: "New recovery codes made.", recovery_codes };
      }
      case "disable":
        await disableTwoFactor(services, user, { password: form.password, code: form.code });
        return { ok: true as const, intent, message: "Two-factor authentication is off." };
      default:
        return { ok: false as const, intent, error: "Unknown action." };
    }
  }, { code: "Code", password: "Password" });
};

export default function TwoFactorPage() {
  const { state, enrollment, required, hasPassword: withPassword } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  return (
    <div className="panel stack" style={{ maxWidth: 560 }}>
      <p className="small"><Link to="/account">← Account</Link></p>
      <h1>Two-factor authentication</h1>
      <TwoFactorEnroll state={state} enrollment={enrollment} result={result} required={required} hasPassword={withPassword} />
    </div>
  );
}
