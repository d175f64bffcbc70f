import { createHash, randomBytes } from "node:crypto";
import { redirect } from "@remix-run/node";
import * as oauth from "oauth4webapi";
import { OAuth2Tokens } from "arctic";
import { Authenticator } from "remix-auth";
import { CodeChallengeMethod, OAuth2RequestError, OAuth2Strategy } from "remix-auth-oauth2";
import type { Sql } from "../../db/client.js";
import { findUserByEmail, findUserById, type User } from "../../db/users.js";
import { rememberAddress } from "../../db/login-addresses.js";
import { recordAudit } from "../../db/audit.js";
import {
  acceptInvitation,
  deleteIdentity,
  findIdentity,
  hasPassword,
  insertFlow,
  insertIdentity,
  insertUserWithIdentity,
  listIdentities,
  takeFlow,
  touchIdentity,
  type SignInIdentity,
} from "../../db/sign-in-identities.js";
import type { Config, OidcProviderConfig } from "~/env.server";
import { ApiError, conflict, notFound } from "~/http.server";
import { currentUser, isHttps, requirePageUser, startSession } from "./sessions.server";
import { pageAct } from "~/dashboard/page.server";
import { queryOf } from "~/errors/params.server";
import { deviceCookie } from "./device-cookies.server";
import { hashPassword } from "./passwords.server";
import { setupNeeded } from "./users.server";
import { log } from "../../log/logger.js";

/**
 * Sign-in with OpenID Connect (docs/sign-in.md). remix-auth-oauth2's strategy runs the
 * authorization-code flow with PKCE (S256) and keeps state and code verifier in a short cookie;
 * oauth4webapi checks everything the provider sends back: the authorization response (state, and
 * `iss` where the provider sends it), the token response, and the ID token (signature through the
 * provider's JWKS, issuer, audience, expiry, issue time, nonce). Each authorization request also
 * has a row in oidc_flows, taken once by its callback: a replayed state finds nothing.
 */

type Deps = { sql: Sql; config: Config };

/** What a provider says about the person, after every check. */
export type OidcClaims = {
  issuer: string;
  subject: string;
  /** only when the provider says it is verified */
  verifiedEmail: string | null;
  username: string | null;
};

/** A flow lives this long between the button and the callback (also the state cookie's age). */
const FLOW_SECONDS = 600;
export const FLOW_COOKIE = "rm_oidc";
const FLOW_COOKIE_PATH = "/auth/oidc";
/** Discovery documents are read again after this long (a provider rotating its keys is seen by the JWKS fetch). */
const DISCOVERY_TTL_MS = 60 * 60 * 1000;

export const providerById = (config: Pick<Config, "oidcProviders">, id: string) => config.oidcProviders.find((p) => p.id === id);

/** The providers the sign-in page and the Account page offer (no secrets). */
export const publicProviders = (config: Pick<Config, "oidcProviders">) => config.oidcProviders.map((p) => ({ id: p.id, name: p.name }));

const isLoopbackHttp = (issuer: string) => new URL(issuer).protocol === "http:";
const httpOptions = (p: OidcProviderConfig) => (isLoopbackHttp(p.issuer) ? { [oauth.allowInsecureRequests]: true } : {});

const unavailable = (p: OidcProviderConfig) =>
  new ApiError(502, "provider_unavailable", `${p.name} could not be reached or answered something unexpected; try again later.`);

const discovered = new Map<string, { as: oauth.AuthorizationServer; at: number }>();

/** The provider's metadata from discovery; the document must name the configured issuer. */
async function metadata(p: OidcProviderConfig): Promise<oauth.AuthorizationServer> {
  const key = `${p.id}|${p.issuer}`;
  const hit = discovered.get(key);
  if (hit && Date.now() - hit.at < DISCOVERY_TTL_MS) return hit.as;
  try {
    const issuer = new URL(p.issuer);
    const res = await oauth.discoveryRequest(issuer, { algorithm: "oidc", signal: AbortSignal.timeout(10_000), ...httpOptions(p) });
    const as = await oauth.processDiscoveryResponse(issuer, res);
    if (!as.authorization_endpoint || !as.token_endpoint || !as.jwks_uri) throw new Error("discovery lacks an endpoint");
    discovered.set(key, { as, at: Date.now() });
    return as;
  } catch (err) {
    log.warn(`oidc: discovery for ${p.id} at ${p.issuer} failed: ${(err as Error).message}`);
    throw unavailable(p);
  }
}

export const redirectUri = (config: Pick<Config, "publicUrl">, request: Request, p: OidcProviderConfig) =>
  `${config.publicUrl ?? new URL(request.url).origin}/auth/oidc/${p.id}/callback`;

const stateHash = (state: string) => createHash("sha256").update(state).digest();

/** The callback's expectations, from the flow row its state named. */
type Expected = { state: string; nonce: string; callbackUrl: URL };

/** Where the strategy leaves what it verified, for its verify function to return. */
type Verified = { claims?: OidcClaims };

/** remix-auth-oauth2's strategy with a nonce, and with the code exchanged and checked by oauth4webapi. */
class OidcStrategy extends OAuth2Strategy<OidcClaims> {
  declare started?: { state: string; nonce: string };
  private declare readonly provider: OidcProviderConfig;
  private declare readonly as: oauth.AuthorizationServer;
  private declare readonly redirect: string;
  private declare readonly expected?: Expected;
  private declare readonly box: Verified;

  constructor(p: OidcProviderConfig, as: oauth.AuthorizationServer, request: Request, redirect: string, expected?: Expected, box: Verified = {}) {
    super(
      {
        clientId: p.clientId,
        clientSecret: p.clientSecret,
        authorizationEndpoint: as.authorization_endpoint!,
        tokenEndpoint: as.token_endpoint!,
        redirectURI: redirect,
        scopes: p.scopes,
        codeChallengeMethod: CodeChallengeMethod.S256,
        cookie: { name: FLOW_COOKIE, path: FLOW_COOKIE_PATH, httpOnly: true, sameSite: "Lax", ...(isHttps(request) ? { secure: true as const } : {}), maxAge: FLOW_SECONDS },
      },
      async () => {
        if (!box.claims) throw new Error("no verified claims");
        return box.claims;
      },
    );
    this.name = "oidc";
    this.provider = p;
    this.as = as;
    this.redirect = redirect;
    this.expected = expected;
    this.box = box;
  }

  protected authorizationParams(params: URLSearchParams): URLSearchParams {
    const nonce = oauth.generateRandomNonce();
    this.started = { state: params.get("state") ?? "", nonce };
    const out = new URLSearchParams(params);
    out.set("nonce", nonce);
    return out;
  }

  protected async validateAuthorizationCode(_code: string, codeVerifier: string): Promise<OAuth2Tokens> {
    const { as, provider: p, expected } = this;
    if (!expected) throw new Error("a callback without its flow");
    const client: oauth.Client = { client_id: p.clientId };
    const methods = as.token_endpoint_auth_methods_supported;
    const auth = !methods || methods.includes("client_secret_basic") ? oauth.ClientSecretBasic(p.clientSecret) : oauth.ClientSecretPost(p.clientSecret);
    const options = { signal: AbortSignal.timeout(10_000), ...httpOptions(p) };
    const params = oauth.validateAuthResponse(as, client, expected.callbackUrl, expected.state);
    const response = await oauth.authorizationCodeGrantRequest(as, client, auth, params, this.redirect, codeVerifier, options);
    const result = await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: expected.nonce, requireIdToken: true });
    await oauth.validateApplicationLevelSignature(as, response, options);
    const id = oauth.getValidatedIdTokenClaims(result)!;
    let claims: Record<string, unknown> = { ...id };
    if (as.userinfo_endpoint) {
      const info = await oauth.userInfoRequest(as, client, result.access_token, options);
      claims = { ...(await oauth.processUserInfoResponse(as, client, id.sub, info)), ...id };
    }
    const text = (v: unknown, max: number) => (typeof v === "string" && v.trim() ? v.trim().slice(0, max) : null);
    const email = text(claims.email, 320)?.toLowerCase() ?? null;
    this.box.claims = {
      issuer: id.iss,
      subject: id.sub,
      verifiedEmail: email && claims.email_verified === true && /^[^\s@]+@[^\s@]+$/.test(email) ? email : null,
      username: text(claims.preferred_username, 320) ?? text(claims.name, 320) ?? email,
    };
    return new OAuth2Tokens(result);
  }
}

const refused = (status: number, message: string) => new ApiError(status, status === 403 ? "forbidden" : "invalid_request", message);

/**
 * Starts a sign-in (intent "login") or, for the signed-in user, a link (intent "link"): the
 * redirect to the provider, with the state cookie set and the flow recorded.
 */
export async function startOidc(deps: Deps, request: Request, providerId: string, input: { intent: "login" | "link"; next: string }): Promise<never> {
  const p = providerById(deps.config, providerId);
  if (!p) throw notFound(`No sign-in provider named ${providerId}.`);
  let userId: string | null = null;
  if (input.intent === "link") {
    const user = await currentUser(deps, request);
    if (!user) throw redirect(`/login?next=${encodeURIComponent("/account")}`);
    userId = user.id;
  }
  const as = await metadata(p);
  const strategy = new OidcStrategy(p, as, request, redirectUri(deps.config, request, p));
  try {
    await new Authenticator<OidcClaims>().use(strategy).authenticate("oidc", request);
  } catch (thrown) {
    if (!(thrown instanceof Response) || !strategy.started?.state) throw thrown;
    await insertFlow(deps.sql, stateHash(strategy.started.state), { provider: p.id, intent: input.intent, user_id: userId, nonce: strategy.started.nonce, next: input.next }, FLOW_SECONDS);
    throw thrown;
  }
  throw new Error("the strategy did not redirect");
}

/** Set-Cookie values that clear every state cookie this browser holds (a flow is used once). */
export function clearFlowCookies(request: Request): string[] {
  const header = request.headers.get("cookie") ?? "";
  return header
    .split(";")
    .map((part) => part.slice(0, Math.max(0, part.indexOf("="))).trim())
    .filter((name) => name.startsWith(`${FLOW_COOKIE}:`) && /^[\w:.-]{1,80}$/.test(name))
    .map((name) => `${name}=; Path=${FLOW_COOKIE_PATH}; HttpOnly; SameSite=Lax; Max-Age=0${isHttps(request) ? "; Secure" : ""}`);
}

/** Why a callback failed, in words for the person looking at the refusal page. */
function describe(p: OidcProviderConfig, err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof OAuth2RequestError) {
    return refused(400, err.code === "access_denied" ? `The sign-in was cancelled at ${p.name}.` : `${p.name} refused the sign-in (${err.code.slice(0, 80)}).`);
  }
  if (err instanceof ReferenceError || err instanceof RangeError) {
    return refused(400, "This sign-in was not started in this browser, or it has expired. Start again from the sign-in page.");
  }
  if (err instanceof oauth.AuthorizationResponseError || err instanceof oauth.ResponseBodyError) {
    return refused(400, `${p.name} refused the sign-in (${String(err.error).slice(0, 80)}). Start again from the sign-in page.`);
  }
  if (err instanceof oauth.OperationProcessingError) {
    log.warn(`oidc: ${p.id}: ${err.code}: ${err.message}`);
    if (err.code === oauth.JWT_TIMESTAMP_CHECK) return refused(400, `The token from ${p.name} has expired or is not yet valid (check the server clocks). Start again.`);
    if (err.code === oauth.JWT_CLAIM_COMPARISON) return refused(400, `The token from ${p.name} does not belong to this sign-in (${claimOf(err)}). Start again.`);
    return refused(400, `The answer from ${p.name} did not pass its checks. Start again from the sign-in page.`);
  }
  log.warn(`oidc: ${p.id}: ${(err as Error)?.message}`);
  return unavailable(p);
}
const claimOf = (err: oauth.OperationProcessingError) => {
  const claim = (err.cause as { claim?: unknown } | undefined)?.claim;
  return typeof claim === "string" ? `${claim} differs` : "a claim differs";
};

export type OidcOutcome = { headers: Headers; location: string };

/**
 * The provider's callback: takes the flow its state names, lets the strategy check everything,
 * then signs in (or links) by the rules in docs/sign-in.md. Refusals are ApiErrors.
 */
export async function completeOidc(deps: Deps, clientAddress: string, request: Request, providerId: string): Promise<OidcOutcome> {
  const p = providerById(deps.config, providerId);
  if (!p) throw notFound(`No sign-in provider named ${providerId}.`);
  const headers = new Headers();
  for (const c of clearFlowCookies(request)) headers.append("Set-Cookie", c);
  const callbackUrl = new URL(request.url);
  const state = queryOf(request).get("state");
  if (!state || state.length > 512) throw refused(400, "The answer from the provider has no state. Start again from the sign-in page.");
  const flow = await takeFlow(deps.sql, stateHash(state));
  if (!flow || flow.provider !== p.id) {
    throw refused(400, "This sign-in was already used, has expired or was not started here. Start again from the sign-in page.");
  }
  const as = await metadata(p);
  const strategy = new OidcStrategy(p, as, request, redirectUri(deps.config, request, p), { state, nonce: flow.nonce, callbackUrl }, {});
  let claims: OidcClaims;
  try {
    claims = await new Authenticator<OidcClaims>().use(strategy).authenticate("oidc", request);
  } catch (err) {
    throw describe(p, err);
  }
  const label = `${p.name} account${claims.username ? ` “${claims.username}”` : ""}`;
  const existing = await findIdentity(deps.sql, claims.issuer, claims.subject);

  if (flow.intent === "link") {
    const user = await currentUser(deps, request);
    if (!user || user.id !== flow.user_id) throw refused(403, "Linking must finish in the session that started it: sign in and start again from the Account page.");
    if (existing && existing.user_id !== user.id) throw conflict(`That ${label} is already linked to another account here.`);
    if (existing) await touchIdentity(deps.sql, existing.id, claims.username, claims.verifiedEmail);
    else if (!(await insertIdentity(deps.sql, { userId: user.id, provider: p.id, issuer: claims.issuer, subject: claims.subject, username: claims.username, email: claims.verifiedEmail }))) {
      throw conflict(`That ${label} is already linked to another account here.`);
    }
    if (!existing) {
      await recordAudit(deps.sql, { projectId: null, actorId: user.id, action: "account.identity_linked", target: user.email, details: { provider: p.id, username: claims.username } });
    }
    return { headers, location: "/account?linked=" + encodeURIComponent(p.id) };
  }

  let user: User | undefined;
  if (existing) {
    user = await findUserById(deps.sql, existing.user_id);
    await touchIdentity(deps.sql, existing.id, claims.username, claims.verifiedEmail);
  } else {
    user = await firstSignIn(deps, p, claims, label);
  }
  if (!user) throw refused(403, `That ${label} is not linked to an account here.`);
  headers.append("Set-Cookie", await startSession(deps, request, user.id));
  headers.append("Set-Cookie", deviceCookie(request, deps.config.appSecret, user.id));
  await rememberAddress(deps.sql, user.id, clientAddress);
  return { headers, location: flow.next };
}

/**
 * An identity nobody linked yet: an account is created, or an invitation accepted, only on an email
 * the provider verified (and only for providers whose emails are trusted; Roblox gives none).
 */
async function firstSignIn(deps: Deps, p: OidcProviderConfig, claims: OidcClaims, label: string): Promise<User> {
  const linkHint = `Sign in with your password, then link ${p.name} from the Account page.`;
  if (await setupNeeded(deps.sql)) throw refused(403, "This server has no account yet: create the first one on the setup page.");
  const email = p.trustEmail ? claims.verifiedEmail : null;
  if (!email) throw refused(403, `That ${label} is not linked to an account here. ${linkHint}`);
  const identity = { provider: p.id, issuer: claims.issuer, subject: claims.subject, username: claims.username };
  const unusable = async () => hashPassword(randomBytes(32).toString("base64url"));
  const holder = await findUserByEmail(deps.sql, email);
  if (holder) {
    // an invited teammate who never signed in: the invitation is accepted through the provider
    if (holder.must_change_password) {
      const accepted = await acceptInvitation(deps.sql, holder.id, await unusable(), { ...identity, email });
      if (accepted) {
        await recordAudit(deps.sql, { projectId: null, actorId: accepted.id, action: "account.identity_linked", target: accepted.email, details: { provider: p.id, via: "invitation" } });
        return accepted;
      }
    }
    throw refused(403, `An account with ${email} already exists here. ${linkHint}`);
  }
  const domain = email.slice(email.lastIndexOf("@") + 1);
  if (!deps.config.oidcAllowedDomains.includes(domain)) {
    throw refused(403, `Accounts for ${domain} addresses are not created automatically here. Ask a project owner to add ${email}.`);
  }
  const created = await insertUserWithIdentity(deps.sql, email, await unusable(), identity);
  if (!created) throw refused(403, `An account with ${email} already exists here. ${linkHint}`);
  await recordAudit(deps.sql, { projectId: null, actorId: created.id, action: "account.created", target: created.email, details: { via: "oidc", provider: p.id } });
  return created;
}

export type LinkedIdentity = { id: string; provider: string; provider_name: string; username: string | null; email: string | null; created_at: Date; last_sign_in_at: Date | null };

const toLinked = (config: Pick<Config, "oidcProviders">, i: SignInIdentity): LinkedIdentity => ({
  id: i.id,
  provider: i.provider,
  provider_name: providerById(config, i.provider)?.name ?? i.provider,
  username: i.username,
  email: i.email,
  created_at: i.created_at,
  last_sign_in_at: i.last_sign_in_at,
});

/** The user's linked identities, and whether the account has a password of its own. */
export async function signInMethods(deps: Deps, userId: string) {
  const [identities, password] = await Promise.all([listIdentities(deps.sql, userId), hasPassword(deps.sql, userId)]);
  return { identities: identities.map((i) => toLinked(deps.config, i)), has_password: password, providers: publicProviders(deps.config) };
}

/** Unlinks one of the user's identities; 409 when it is their last way to sign in. */
export async function unlinkIdentity(deps: Deps, userId: string, identityId: string): Promise<void> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(identityId)) throw notFound("No such linked sign-in.");
  const r = await deleteIdentity(deps.sql, userId, identityId);
  if (r === "not_found") throw notFound("No such linked sign-in.");
  if (r === "last_way_in") throw conflict("This is the account's only way to sign in; it has no password of its own. Link another provider first.");
  const u = await findUserById(deps.sql, userId);
  await recordAudit(deps.sql, { projectId: null, actorId: userId, action: "account.identity_unlinked", target: u?.email ?? null, details: { identity_id: identityId } });
}


/** The Account page's "Unlink" button. */
export const unlinkAction = (deps: Deps, request: Request, form: Record<string, unknown>) =>
  pageAct("unlink-identity", async () => {
    const user = await requirePageUser(deps, request);
    await unlinkIdentity(deps, user.id, typeof form.identity === "string" ? form.identity : "");
    return { ok: true as const, intent: "unlink-identity", message: "Unlinked: that account no longer signs in here." };
  });
