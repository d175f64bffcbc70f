import path from "node:path";
import { describe, expect, it } from "vitest";
import { matchRoutes, type AgnosticRouteObject } from "@remix-run/router";
import type { ServerBuild } from "@remix-run/node";
import { apiRouteTable, segmentCount } from "../../server/api-dispatch.js";

const build = (await import(path.resolve(import.meta.dirname, "../../build/server/index.js"))) as ServerBuild;

/** The nested route tree Remix hands to react-router, from the same build. */
function routeTree(parentId?: string): AgnosticRouteObject[] {
  return Object.values(build.routes)
    .filter((r) => r.parentId === parentId)
    .map((r) => ({ id: r.id, path: r.path, index: r.index, caseSensitive: r.caseSensitive, children: r.index ? undefined : routeTree(r.id) }) as AgnosticRouteObject);
}

const paths = [
  "/api/ingest", "/api/ingest/", "/API/Ingest", "/api/ingest//", "/api/ready", "/api/v1/errors",
  "/api/v1/errors/6f1c0000-0000-0000-0000-000000000000", "/api/v1/errors/not-a-uuid", "/api/v1/errors/a%2Fb",
  "/api/v1/errors/%E2%9C%93", "/api/v1/errors/%zz", "/api/v1/errors/x/y", "/api/v1/stats", "/api/v1/traces/abc",
  "/api/v1/economy/players", "/api/v1/economy/players/123", "/api/v1/economy/summary", "/api/v1/economy/anomalies",
  "/api/economy/ingest", "/api/economy/flows", "/api/v1/economy/flows", "/api/v1/economy/unexplained",
  "/api/economy/key", "/api/economy/sync", "/api/share/tok", "/api/auth/login", "/api/auth/me",
  "/api/team/projects", "/api/team/projects/p1", "/api/team/projects/p1/keys", "/api/team/projects/p1/keys/k1",
  "/api/team/projects/p1/groups/status", "/api/team/projects/p1/groups/g1", "/api/team/projects/p1/members/u1",
  "/api/team/projects/p1/share-links", "/api/team/projects/p1/share-links/l1", "/api/team/projects/p1/channels/c1",
  "/api/team/projects/p1/rules/r1", "/api/team/projects/p1/deliveries", "/api/notifications/test",
  "/api/notifications/dispatch", "/api/nothing", "/api/", "/api/v2/errors", "/api/team/projects/p1/unknown/deep",
  // the Sentry endpoints, and paths whose number of segments differs from every pattern's only by empty ones
  "/api/1/envelope/", "/api/1/envelope", "/API/1/Envelope//", "/api/1/store/", "/api/a%2Fb/envelope/", "/api/1//envelope/",
  "//api/1/envelope/", "/api//1/envelope", "/api/1/envelope/x", "/api/v1//errors", "/api/v1/errors//x",
];

describe("API dispatch table", () => {
  const table = apiRouteTable(build);

  it("is exact for this build's routes", () => {
    expect(table).not.toBeNull();
  });

  it.each(paths)("picks the route and params react-router picks for %s", (pathname) => {
    const expected = matchRoutes(routeTree(undefined), pathname);
    const leaf = expected?.[expected.length - 1];
    const got = table!(pathname);
    expect(got?.id).toBe(leaf?.route.id);
    expect(got?.params).toEqual(leaf?.params);
  });

  it("counts the segments of a path without trailing slashes, empty ones included", () => {
    expect(["/api", "/api/1/envelope", "/api//x", ""].map(segmentCount)).toEqual([1, 3, 3, 0]);
  });

  it("dispatches the API 404 route for unknown API paths", () => {
    expect(table!("/api/nothing/here")?.id).toBe("routes/api.$");
  });
});
