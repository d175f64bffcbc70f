import { Form } from "@remix-run/react";

export type ProviderButton = { id: string; name: string };

/** "Sign in with …" buttons under the password form: each posts to its provider's start route. */
export function SignInProviders({ providers, next }: { providers: ProviderButton[]; next: string | null }) {
  if (providers.length === 0) return null;
  return (
    <div style={{ display: "flex", flexDirection: "column", gap: "0.5rem" }} data-testid="sign-in-providers">
      <p className="muted small" style={{ textAlign: "center", margin: 0 }}>or</p>
      {providers.map((p) => (
        <Form key={p.id} method="post" action={`/auth/oidc/${p.id}/start`}>
          <input type="hidden" name="intent" value="login" />
          {next ? <input type="hidden" name="next" value={next} /> : null}
          <button type="submit" style={{ width: "100%" }}>{`Sign in with ${p.name}`}</button>
        </Form>
      ))}
    </div>
  );
}

/** The page a refused OIDC sign-in or link lands on: why, and the way back. */
export function SignInRefused({ message }: { message: string }) {
  return (
    <main className="narrow">
      <div className="panel stack">
        <h1>Sign-in refused</h1>
        <p className="alert error" role="alert" data-testid="sign-in-refused">{message}</p>
        <p>
          <a href="/login">Back to sign in</a> · <a href="/account">Account</a>
        </p>
      </div>
    </main>
  );
}
