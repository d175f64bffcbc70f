import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../app/env.server.js";

const base = { NODE_ENV: "test", APP_SECRET: "x".repeat(32), NOTIFICATION_SECRET: "y".repeat(16), DATA_DIR: "/tmp/rbx-monitor-oidc-config" } as const;

describe("OIDC providers from the environment", () => {
  it("has none unless OIDC_PROVIDERS names them", () => {
    expect(loadConfig({ ...base }).oidcProviders).toEqual([]);
  });

  it("fills the Roblox preset from a client id and secret", () => {
    const c = loadConfig({ ...base, OIDC_PROVIDERS: "roblox", OIDC_ROBLOX_CLIENT_ID: "816547628409595165403873012", OIDC_ROBLOX_CLIENT_SECRET: "RBX-secret" });
    expect(c.oidcProviders).toEqual([
      { id: "roblox", name: "Roblox", issuer: "https://apis.roblox.com/oauth/", clientId: "816547628409595165403873012", clientSecret: "RBX-secret", scopes: ["openid", "profile"], trustEmail: false },
    ]);
  });

  it("reads a generic provider, adds openid, and lowercases the allowed domains", () => {
    const c = loadConfig({
      ...base,
      OIDC_PROVIDERS: "roblox, my-idp",
      OIDC_ROBLOX_CLIENT_ID: "a",
      OIDC_ROBLOX_CLIENT_SECRET: "b",
      OIDC_MY_IDP_ISSUER: "https://idp.example.com/realms/studio",
      OIDC_MY_IDP_CLIENT_ID: "dashboard",
      OIDC_MY_IDP_CLIENT_SECRET: "s",
      OIDC_MY_IDP_NAME: "Studio SSO",
      OIDC_MY_IDP_SCOPES: "profile email",
      OIDC_ALLOWED_DOMAINS: "Studio.COM, @example.org",
    });
    expect(c.oidcProviders.map((p) => p.id)).toEqual(["roblox", "my-idp"]);
    expect(c.oidcProviders[1]).toMatchObject({ name: "Studio SSO", scopes: ["openid", "profile", "email"], trustEmail: true });
    expect(c.oidcAllowedDomains).toEqual(["studio.com", "example.org"]);
  });

  it("stops the start naming every missing or bad variable", () => {
    const bad = () =>
      loadConfig({ ...base, OIDC_PROVIDERS: "okta,Bad Id,okta", OIDC_OKTA_ISSUER: "http://idp.example.com", OIDC_OKTA_TRUST_EMAIL: "yes", OIDC_ALLOWED_DOMAINS: "not a domain" });
    expect(bad).toThrow(ConfigError);
    const message = (() => {
      try {
        bad();
      } catch (e) {
        return (e as Error).message;
      }
    })();
    for (const part of ["OIDC_OKTA_ISSUER: must be https", "OIDC_OKTA_CLIENT_ID: is required", "OIDC_OKTA_CLIENT_SECRET: is required", "OIDC_OKTA_TRUST_EMAIL", '"bad id"', "listed twice", "OIDC_ALLOWED_DOMAINS"]) {
      expect(message).toContain(part);
    }
  });

  it("allows plain http only for a loopback issuer", () => {
    const c = loadConfig({ ...base, OIDC_PROVIDERS: "local", OIDC_LOCAL_ISSUER: "http://127.0.0.1:8080", OIDC_LOCAL_CLIENT_ID: "a", OIDC_LOCAL_CLIENT_SECRET: "b" });
    expect(c.oidcProviders[0].issuer).toBe("http://127.0.0.1:8080");
  });
});
