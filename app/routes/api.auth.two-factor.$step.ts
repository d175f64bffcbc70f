import { json, notFound } from "~/http.server";
import { confirmEnrollment, disableTwoFactor, regenerateRecoveryCodes, startEnrollment } from "~/accounts/two-factor.server";
import { teamRoute, type TeamContext } from "~/team/api.server";

/**
 * The signed-in user's two-factor authentication, one POST per step:
 * - `setup` {}: a new secret (`secret`, `otpauth_url`, `qr_code` as an SVG data URL), pending until confirmed;
 * - `confirm` {code}: turns it on and answers the 10 recovery codes, once;
 * - `recovery-codes` {code}: 10 new recovery codes (a code from the app; the old ones stop working);
 * - `disable` {password, code}: turns it off (a code from the app or a recovery code).
 */
const steps: Record<string, (ctx: TeamContext) => Promise<Response>> = {
  setup: async ({ services, user }) => json(await startEnrollment(services, user)),
  confirm: async ({ services, user, body }) => json(await confirmEnrollment(services, user, await body())),
  "recovery-codes": async ({ services, user, body }) => json(await regenerateRecoveryCodes(services, user, await body())),
  disable: async ({ services, user, body }) => json(await disableTwoFactor(services, user, await body())),
};

const route = teamRoute({
  POST: async (ctx) => {
    const step = Object.hasOwn(steps, ctx.params.step ?? "") ? steps[ctx.params.step!] : undefined;
    if (!step) throw notFound("No such two-factor step; use setup, confirm, recovery-codes or disable.");
    return step(ctx);
  },
});
export const loader = route;
export const action = route;
