/**
 * The OpenAPI contract audit: every answer the integration suite received from the API (recorded by
 * contract-record.ts) is checked against the document the service serves at `/api/openapi.json`.
 * An answer on a path or with a method the document does not describe, a status it does not list
 * for that operation, a media type it does not give, or a JSON body that fails the operation's
 * schema fails the run; the first failures are listed.
 *
 * Two answers need no operation of their own: the JSON 404 of a path no endpoint claims, and the
 * refusal of a method a documented path does not take (each with the one error body): a 405, or on
 * the session endpoints the 401 or 403 of the session gate, which answers before the method is
 * looked at.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { buildOpenApiDocument } from "../../app/openapi/document.server.js";
import { contractRecordDir, type RecordedResponse } from "./contract-files.js";

type Doc = { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>>; components: unknown };
export type AuditFailure = { record: RecordedResponse; problem: string };

/** What a method a path does not take is answered: 405, or the session gate's 401 or 403 first. */
const WRONG_METHOD = new Set([401, 403, 405]);

const METHODS = new Set(["get", "post", "put", "patch", "delete", "options", "head"]);

type Template = { path: string; regex: RegExp; score: number };

/** `/api/v1/errors/{groupId}` as the API dispatch matches it: case-insensitive, trailing slashes ignored. */
function compile(template: string): Template {
  const segments = template.split("/").filter(Boolean);
  const source = segments.map((s) => (/^\{\w+\}$/.test(s) ? "[^/]+" : s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))).join("/");
  const score = segments.reduce((n, s) => n + (s.startsWith("{") ? 3 : 10), segments.length);
  return { path: template, regex: new RegExp(`^/${source}/*$`, "i"), score };
}

const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/");

/** A checker of recorded answers against one document. */
export function contractAuditor(doc: Doc) {
  const templates = Object.keys(doc.paths)
    .map(compile)
    .sort((a, b) => b.score - a.score);
  const ajv = new Ajv2020({ strict: false, validateSchema: false, validateFormats: false, allErrors: false });
  ajv.addSchema(doc as object, "openapi");
  const validators = new Map<string, ValidateFunction>();
  const validator = (ref: string) => {
    let v = validators.get(ref);
    if (!v) {
      v = ajv.compile({ $ref: `openapi#/${ref}` });
      validators.set(ref, v);
    }
    return v;
  };
  const errorRef = pointer("components", "schemas", "Error");

  const checkBody = (record: RecordedResponse, ref: string): string | undefined => {
    if (record.unread || record.body === undefined) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(record.body);
    } catch {
      return "the body is not JSON";
    }
    const validate = validator(ref);
    if (validate(value)) return undefined;
    const e = validate.errors?.[0];
    return `the body fails its schema: ${e?.instancePath || "(body)"} ${e?.message ?? ""}${e?.params ? ` ${JSON.stringify(e.params)}` : ""}`.trim();
  };

  const isJson = (type: string | null) => type !== null && /^application\/(?:[\w.+-]+\+)?json\b/i.test(type);

  return (record: RecordedResponse): string | undefined => {
    const template = templates.find((t) => t.regex.test(record.path));
    const method = record.method.toLowerCase();
    if (!template) {
      if (record.status === 404 && isJson(record.contentType)) return checkBody(record, errorRef);
      return `no documented path matches ${record.path}`;
    }
    const item = doc.paths[template.path];
    const op = item[method] ?? (method === "head" ? item.get : undefined);
    if (!op || !METHODS.has(method)) {
      if (WRONG_METHOD.has(record.status) && isJson(record.contentType)) return checkBody(record, errorRef);
      return `${record.method} is not documented on ${template.path}`;
    }
    const response = op.responses[String(record.status)];
    if (!response) return `status ${record.status} is not documented for ${record.method} ${template.path}`;
    if (method === "head" || !response.content) return undefined;
    const mediaType = (record.contentType ?? "").split(";")[0].trim().toLowerCase();
    const documented = Object.keys(response.content).find((t) => t.toLowerCase() === mediaType);
    if (!documented) return `${record.method} ${template.path} ${record.status} answered ${record.contentType ?? "no content type"}; documented: ${Object.keys(response.content).join(", ")}`;
    if (!isJson(documented)) return undefined;
    const opMethod = item[method] ? method : "get";
    return checkBody(record, pointer("paths", template.path, opMethod, "responses", String(record.status), "content", documented, "schema"));
  };
}

/** The recorded answers that the document does not describe. */
export function auditResponses(doc: Doc, records: Iterable<RecordedResponse>): AuditFailure[] {
  const check = contractAuditor(doc);
  const failures: AuditFailure[] = [];
  for (const record of records) {
    const problem = check(record);
    if (problem) failures.push({ record, problem });
  }
  return failures;
}

export function describeFailures(failures: AuditFailure[], total: number, shown = 20): string {
  const lines = failures.slice(0, shown).map(({ record: r, problem }) => `  ${r.method} ${r.path} → ${r.status}: ${problem}`);
  const more = failures.length > shown ? [`  … and ${failures.length - shown} more`] : [];
  return [`OpenAPI contract: ${failures.length} of ${total} recorded API answers are not described by /api/openapi.json:`, ...lines, ...more].join("\n");
}

function readRecords(dir: string): RecordedResponse[] {
  const records: RecordedResponse[] = [];
  for (const file of readdirSync(dir)) {
    if (!file.endsWith(".jsonl")) continue;
    for (const line of readFileSync(path.join(dir, file), "utf8").split("\n")) {
      if (line) records.push(JSON.parse(line) as RecordedResponse);
    }
  }
  return records;
}

/**
 * The run's teardown step: checks what the run recorded, removes the recordings, and throws (so
 * `vitest run` fails) when an answer is not described. A run that recorded nothing passes.
 */
export async function auditContract(runId: string): Promise<void> {
  const dir = contractRecordDir(runId);
  if (!existsSync(dir)) return;
  let records: RecordedResponse[];
  try {
    records = readRecords(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const failures = auditResponses(buildOpenApiDocument("audit") as unknown as Doc, records);
  if (failures.length > 0) throw new Error(describeFailures(failures, records.length));
  console.log(`OpenAPI contract: ${records.length} recorded API answers, all described by /api/openapi.json`);
}
