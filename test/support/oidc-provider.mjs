// A real OpenID Connect provider (npm oidc-provider) for tests, in its own process so that its
// clock can differ from the app's (CLOCK_OFFSET_SECONDS). Prints {"issuer": ...} once listening.
// OIDC_CLIENTS: the registered clients (JSON array); OIDC_ACCOUNTS: claims per login (JSON object);
// ISSUER_HOST: the host the issuer URL names (default 127.0.0.1; it always listens on 127.0.0.1).
import http from "node:http";
import Provider from "oidc-provider";

const offset = Number(process.env.CLOCK_OFFSET_SECONDS ?? 0);
if (offset) {
  const real = Date.now;
  Date.now = () => real() + offset * 1000;
}
const clients = JSON.parse(process.env.OIDC_CLIENTS ?? "[]");
const accounts = JSON.parse(process.env.OIDC_ACCOUNTS ?? "{}");
const server = http.createServer();
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const issuer = `http://${process.env.ISSUER_HOST ?? "127.0.0.1"}:${server.address().port}`;
const provider = new Provider(issuer, {
  clients,
  findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id, ...(accounts[id] ?? {}) }) }),
  claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name", "preferred_username"] },
  // the claims go into the ID token itself, as Roblox's do
  conformIdTokenClaims: false,
  pkce: { required: () => true },
  cookies: { keys: ["local-test-provider-cookie-key"] },
  features: { devInteractions: { enabled: true } },
});
provider.on("server_error", (_ctx, err) => console.error("provider error", err));
server.on("request", provider.callback());
console.log(JSON.stringify({ issuer }));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
