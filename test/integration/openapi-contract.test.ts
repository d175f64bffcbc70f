/**
 * The OpenAPI document (docs/api.md, "OpenAPI"): served at /api/openapi.json, valid OpenAPI 3.1, it
 * names every API route module, and the contract audit that checks the integration suite's answers
 * against it refuses what it does not describe.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { Validator } from "@seriousme/openapi-schema-validator";
import { startTestApp, createProject, postJson, type TestApp } from "../support/server.js";
import { auditResponses, describeFailures } from "../support/contract-audit.js";
import { contractRecordFile, type RecordedResponse } from "../support/contract-files.js";
import { waitFor } from "../support/wait.js";

let app: TestApp;
let doc: any;

beforeAll(async () => {
  app = await startTestApp();
  const res = await app.request("/api/openapi.json");
  expect(res.status).toBe(200);
  doc = await res.json();
});

afterAll(async () => {
  await app?.close();
});

describe("GET /api/openapi.json", () => {
  it("is public, JSON and cacheable, with an ETag that answers 304", async () => {
    const res = await app.request("/api/openapi.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.headers.get("cache-control")).toContain("public");
    const etag = res.headers.get("etag");
    expect(etag).toMatch(/^".+"$/);
    const again = await app.request("/api/openapi.json", { headers: { "if-none-match": etag! } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    // made once per process: the same text each time
    const third = await app.request("/api/openapi.json");
    expect(third.headers.get("etag")).toBe(etag);
  });

  it("takes GET only", async () => {
    const res = await postJson(app, "/api/openapi.json", {});
    expect(res.status).toBe(405);
    expect(res.body.error).toBe("method_not_allowed");
  });

  it("is a valid OpenAPI 3.1 document whose references all resolve", async () => {
    const validator = new Validator();
    // the validator resolves references in the object it is given
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
    expect(() => validator.resolveRefs()).not.toThrow();
    // and the validator refuses a document that breaks the 3.1 schema
    const broken = structuredClone(doc);
    broken.paths["/api/ingest"].post.responses = "none";
    expect((await new Validator().validate(broken)).valid).toBe(false);
    const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]);
    expect(refs.length).toBeGreaterThan(50);
    for (const ref of new Set(refs)) {
      expect(ref, ref).toMatch(/^#\/components\/schemas\/\w+$/);
      expect(doc.components.schemas[ref.split("/").pop()!], ref).toBeDefined();
    }
  });

  it("describes every API route module under app/routes", () => {
    const routes = readdirSync(path.resolve(import.meta.dirname, "../../app/routes")).filter((f) => /^api\..+\.tsx?$/.test(f) && f !== "api.$.ts");
    expect(routes.length).toBeGreaterThan(70);
    const documented = Object.keys(doc.paths).map((p) => p.replace(/\/$/, "").toLowerCase());
    const missing: string[] = [];
    for (const file of routes) {
      // Remix's flat file names: `.` separates segments, `$name` is a parameter, `[.]` a literal dot
      const segments = file
        .replace(/\.tsx?$/, "")
        .replaceAll("[.]", "\u0000")
        .split(".")
        .map((s) => s.replaceAll("\u0000", "."));
      const pattern = new RegExp(`^/${segments.map((s) => (s.startsWith("$") ? "[^/]+" : s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))).join("/")}$`, "i");
      if (!documented.some((p) => pattern.test(p))) missing.push(file);
    }
    expect(missing).toEqual([]);
  });

  it("names the credentials each kind of endpoint takes", () => {
    const schemes = doc.components.securitySchemes;
    expect(schemes.apiKey).toMatchObject({ type: "apiKey", in: "header", name: "x-api-key" });
    expect(schemes.session).toMatchObject({ type: "apiKey", in: "cookie", name: "rm_session" });
    expect(schemes.sentryAuth).toMatchObject({ in: "header", name: "X-Sentry-Auth" });
    expect(schemes.sentryKey).toMatchObject({ in: "query", name: "sentry_key" });
    expect(doc.paths["/api/ingest"].post.security).toEqual([{ apiKey: [] }]);
    expect(doc.paths["/api/v1/errors/{groupId}"].get.parameters).toEqual([{ name: "groupId", in: "path", required: true, schema: { type: "string" } }]);
    expect(doc.paths["/api/team/projects"].post.security).toEqual([{ session: [] }]);
    expect(doc.paths["/api/share/{token}"].get.security).toEqual([]);
    expect(Object.keys(doc.paths["/api/{projectId}/envelope/"].post.requestBody.content)).toEqual(["application/x-sentry-envelope"]);
  });

  it("takes its request bodies from the schemas the endpoints validate with", () => {
    const schemas = doc.components.schemas;
    const ingest = schemas[doc.paths["/api/ingest"].post.requestBody.content["application/json"].schema.$ref.split("/").pop()];
    // one event, or a batch of 1 to 100 (app/ingest/native.server.ts)
    expect(ingest.anyOf).toHaveLength(2);
    expect(ingest.anyOf[0].required).toEqual(["message"]);
    expect(ingest.anyOf[0].properties.tags).toMatchObject({ type: "array", maxItems: 50 });
    expect(ingest.anyOf[1].properties.errors).toMatchObject({ minItems: 1, maxItems: 100 });
    const project = schemas[doc.paths["/api/team/projects/{projectId}"].patch.requestBody.content["application/json"].schema.$ref.split("/").pop()];
    expect(project.properties.name).toMatchObject({ type: "string", maxLength: 200 });
  });
});

describe("the contract audit", () => {
  const ok = (r: Partial<RecordedResponse>): RecordedResponse => ({ method: "GET", path: "/api/ingest", status: 200, contentType: "application/json; charset=utf-8", ...r });

  it("passes answers the document describes, the JSON 404 of an unknown path and a 405", async () => {
    const { apiKey } = await createProject(app.sql);
    const ingest = await postJson(app, "/api/ingest", { message: "audit me" }, apiKey);
    expect(ingest.status).toBe(200);
    const unknown = await app.request("/api/no-such-endpoint");
    const wrongMethod = await app.request("/api/v1/errors", { method: "DELETE", headers: { "x-api-key": apiKey } });
    const records = [
      ok({ method: "POST", body: ingest.text }),
      ok({ body: JSON.stringify({ status: "ok" }) }),
      ok({ path: "/api/no-such-endpoint", status: unknown.status, body: await unknown.text() }),
      ok({ method: "DELETE", path: "/api/v1/errors", status: wrongMethod.status, body: await wrongMethod.text() }),
      ok({ method: "POST", path: "/API/INGEST/", status: 400, body: JSON.stringify({ error: "invalid_payload", message: "x", details: [{ path: "message", message: "is required" }] }) }),
      ok({ method: "OPTIONS", path: "/api/1/envelope/", status: 204, contentType: null }),
    ];
    expect(auditResponses(doc, records)).toEqual([]);
  });

  it("records the answers this worker receives from the API, for the run's teardown to audit", async () => {
    const probe = `/api/contract-probe-${randomBytes(4).toString("hex")}`;
    const res = await app.request(probe, { method: "PUT" });
    expect(res.status).toBe(404);
    const file = contractRecordFile(inject("testRunId"), process.pid);
    const recorded = await waitFor(() => {
      if (!existsSync(file)) return undefined;
      const lines = readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as RecordedResponse);
      return lines.find((r) => r.path === probe);
    });
    expect(recorded).toMatchObject({ method: "PUT", path: probe, status: 404, contentType: expect.stringMatching(/^application\/json/) });
    expect(JSON.parse(recorded.body!)).toMatchObject({ error: "not_found" });
  });

  it("fails an undocumented path, method or status, a wrong media type and a body that breaks its schema", () => {
    const bad = [
      ok({ path: "/api/not-documented", status: 200, body: "{}" }),
      ok({ method: "PATCH", path: "/api/ingest", status: 200, body: "{}" }),
      ok({ method: "POST", status: 418, body: "{}" }),
      ok({ method: "POST", contentType: "text/html", body: "<p>" }),
      ok({ body: JSON.stringify({ status: "fine" }) }),
      ok({ method: "POST", body: JSON.stringify({ success: true, count: 1, occurrences: 1, throttled: 0, surprise: 1 }) }),
      ok({ method: "POST", status: 400, body: JSON.stringify({ error: "invalid_payload" }) }),
      ok({ method: "POST", body: "not json" }),
    ];
    const failures = auditResponses(doc, bad);
    expect(failures.map((f) => f.record)).toEqual(bad);
    const text = describeFailures(failures, bad.length);
    expect(text).toContain("8 of 8 recorded API answers");
    expect(text).toContain("GET /api/not-documented → 200: no documented path matches");
    expect(text).toContain("PATCH is not documented on /api/ingest");
    expect(text).toContain("status 418 is not documented for POST /api/ingest");
    expect(text).toContain("answered text/html");
    expect(text).toContain("/status must be equal to constant");
    expect(text).toContain("must NOT have additional properties");
    expect(text).toContain("must have required property 'message'");
    expect(text).toContain("the body is not JSON");
  });
});
