import { Form } from "@remix-run/react";
import { ActionMessage, Submit } from "./ui";

export type EnrollmentView = { secret: string; otpauth_url: string; qr_code: string };
export type TwoFactorState = { enabled: boolean; pending: boolean; recovery_codes_left: number };

/** The key grouped by four, as authenticator apps show it, easier to type by hand. */
const grouped = (secret: string) => secret.replace(/(.{4})/g, "$1 ").trim();

/** Recovery codes, shown once, right after they were made. */
export function RecoveryCodes({ codes }: { codes: string[] }) {
  return (
    <div className="stack" data-testid="recovery-codes">
      <p className="alert success" role="status">
        Save these recovery codes somewhere safe now: they are shown only once. Each one signs you in once if you lose your authenticator.
      </p>
      <ol className="recovery-codes">
        {codes.map((c) => <li key={c}><code>{c}</code></li>)}
      </ol>
    </div>
  );
}

/**
 * The Account page's two-factor part: turn on (QR code and key, then a code to confirm), new recovery
 * codes, turn off (password and a code; the code alone for an account with no password of its own).
 */
export function TwoFactorEnroll({
  state,
  enrollment,
  result,
  required,
  hasPassword,
}: {
  state: TwoFactorState;
  enrollment: EnrollmentView | null;
  result: unknown;
  required: boolean;
  hasPassword: boolean;
}) {
  const codes = result && typeof result === "object" && "recovery_codes" in result ? (result.recovery_codes as string[]) : null;
  return (
    <div className="stack">
      {required && !state.enabled ? (
        <p className="alert error" role="alert" data-testid="two-factor-required">
          A project you belong to requires two-factor authentication for your role. Turn it on to continue.
        </p>
      ) : null}
      {codes ? <RecoveryCodes codes={codes} /> : null}
      {state.enabled ? (
        <>
          <p data-testid="two-factor-on">
            Two-factor authentication is <strong>on</strong>. {state.recovery_codes_left} of 10 recovery codes left.
          </p>
          <h2>New recovery codes</h2>
          <ActionMessage data={result} intent="recovery-codes" />
          <Form method="post" className="row">
            <input type="hidden" name="intent" value="recovery-codes" />
            <label htmlFor="regen-code">Code from your app</label>
            <input id="regen-code" name="code" inputMode="numeric" autoComplete="one-time-code" required maxLength={64} />
            <Submit pending="Making…">Make new codes</Submit>
          </Form>
          <p className="muted small">The old codes stop working.</p>
          <h2>Turn off</h2>
          <ActionMessage data={result} intent="disable" />
          <Form method="post">
            <input type="hidden" name="intent" value="disable" />
            {hasPassword ? (
              <>
                <label htmlFor="disable-password">Password</label>
                <input id="disable-password" name="password" type="password" autoComplete="current-password" required />
              </>
            ) : null}
            <label htmlFor="disable-code">Code from your app, or a recovery code</label>
            <input id="disable-code" name="code" autoComplete="one-time-code" required maxLength={64} />
            <p><Submit className="danger" pending="Turning off…">Turn off two-factor</Submit></p>
          </Form>
        </>
      ) : enrollment ? (
        <>
          <ActionMessage data={result} intent="confirm" />
          <ol className="stack">
            <li>
              Scan this QR code with an authenticator app (1Password, Google Authenticator, Authy…):
              <img src={enrollment.qr_code} alt="QR code of the two-factor key" width={200} height={200} className="qr" data-testid="two-factor-qr" />
            </li>
            <li>
              Or type this key by hand (time-based, 6 digits, 30 seconds):
              <code className="secret key" data-testid="two-factor-secret">{grouped(enrollment.secret)}</code>
            </li>
            <li>
              <Form method="post" className="row">
                <input type="hidden" name="intent" value="confirm" />
                <label htmlFor="confirm-code">Code the app shows</label>
                <input id="confirm-code" name="code" inputMode="numeric" autoComplete="one-time-code" required maxLength={64} />
                <Submit className="primary" pending="Checking…">Turn on</Submit>
              </Form>
            </li>
          </ol>
          <Form method="post">
            <input type="hidden" name="intent" value="cancel" />
            <Submit pending="Cancelling…">Cancel</Submit>
          </Form>
        </>
      ) : (
        <>
          <p>Two-factor authentication is <strong>off</strong>. With it on, signing in needs a code from an app on your phone as well as your password.</p>
          <ActionMessage data={result} intent="setup" />
          <Form method="post">
            <input type="hidden" name="intent" value="setup" />
            <Submit className="primary" pending="Starting…">Set up two-factor</Submit>
          </Form>
        </>
      )}
    </div>
  );
}
