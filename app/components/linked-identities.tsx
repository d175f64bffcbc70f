import { Form, useSearchParams } from "@remix-run/react";
import { ActionMessage, Submit } from "~/components/ui";

type Identity = { id: string; provider: string; provider_name: string; username: string | null; email: string | null; created_at: Date | string };

/**
 * The Account page's sign-in methods: the OIDC identities linked to this account (each can be
 * unlinked while another way in remains) and a button per configured provider to link one more.
 */
export function LinkedIdentities({
  identities,
  has_password,
  providers,
  result,
}: {
  identities: Identity[];
  has_password: boolean;
  providers: { id: string; name: string }[];
  result: unknown;
}) {
  const [params] = useSearchParams();
  const linked = providers.find((p) => p.id === params.get("linked"));
  if (providers.length === 0 && identities.length === 0) return null;
  const lastWayIn = !has_password && identities.length <= 1;
  return (
    <section className="stack" id="sign-in-methods" data-testid="linked-identities">
      <h2>Sign-in methods</h2>
      {linked ? <p className="alert success" role="status">{linked.name} account linked: you can now sign in with it.</p> : null}
      <ActionMessage data={result} intent="unlink-identity" />
      <p className="muted small">{has_password ? "Password, and the accounts below." : "This account has no password of its own: it signs in only through the accounts below."}</p>
      {identities.length > 0 ? (
        <ul className="stack" style={{ listStyle: "none", padding: 0, margin: 0 }}>
          {identities.map((i) => (
            <li key={i.id} style={{ display: "flex", flexWrap: "wrap", gap: "0.5rem", alignItems: "center", justifyContent: "space-between" }}>
              <span style={{ overflowWrap: "anywhere" }}>
                <strong>{i.provider_name}</strong>
                {i.username ? <> · {i.username}</> : null}
                <span className="muted small"> · linked {new Date(i.created_at).toISOString().slice(0, 10)}</span>
              </span>
              <Form method="post">
                <input type="hidden" name="intent" value="unlink-identity" />
                <input type="hidden" name="identity" value={i.id} />
                {lastWayIn ? (
                  <button type="button" disabled title="The only way to sign in to this account">Unlink</button>
                ) : (
                  <Submit pending="Unlinking…">Unlink</Submit>
                )}
              </Form>
            </li>
          ))}
        </ul>
      ) : (
        <p className="muted">No provider account is linked.</p>
      )}
      <div style={{ display: "flex", flexWrap: "wrap", gap: "0.5rem" }}>
        {providers.map((p) => (
          <Form key={p.id} method="post" action={`/auth/oidc/${p.id}/start`}>
            <input type="hidden" name="intent" value="link" />
            <button type="submit">{`Link a ${p.name} account`}</button>
          </Form>
        ))}
      </div>
    </section>
  );
}
