/**
 * docs/operations.md's configuration reference names every environment variable the service reads,
 * with its default, and no other. The variables read are found in the source: the keys of
 * `EnvSchema` in app/env.server.ts (the one reader of process.env in the app), the per-provider
 * OIDC_<ID>_* names its OIDC reader builds, and every `process.env.X` of the server, database and
 * jobs code. Each default the table gives is checked against what loadConfig does without it.
 */
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../app/env.server.js";

const root = path.resolve(__dirname, "../..");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");
const parse = (file: string) => ts.createSourceFile(file, read(file), ts.ScriptTarget.Latest, true);

function walk(node: ts.Node, visit: (n: ts.Node) => void) {
  visit(node);
  ts.forEachChild(node, (child) => walk(child, visit));
}

/** The property names of the object `EnvSchema` is made from (`z.object({ … })`). */
export function schemaVariables(source: ts.SourceFile): string[] {
  let keys: string[] | undefined;
  walk(source, (n) => {
    if (!ts.isVariableDeclaration(n) || n.name.getText(source) !== "EnvSchema" || !n.initializer || !ts.isCallExpression(n.initializer)) return;
    const shape = n.initializer.arguments[0];
    if (shape && ts.isObjectLiteralExpression(shape)) keys = shape.properties.map((p) => p.name?.getText(source) ?? "");
  });
  if (!keys) throw new Error("no `const EnvSchema = z.object({ … })` in app/env.server.ts");
  return keys;
}

/** OIDC_<ID>_X for each X the provider reader asks for (`v("X")`, `key("X")`). */
export function oidcVariables(source: ts.SourceFile): string[] {
  const names = new Set<string>();
  walk(source, (n) => {
    if (ts.isCallExpression(n) && ts.isIdentifier(n.expression) && ["v", "key"].includes(n.expression.text)) {
      const arg = n.arguments[0];
      if (arg && ts.isStringLiteral(arg)) names.add(`OIDC_<ID>_${arg.text}`);
    }
  });
  return [...names];
}

/** `process.env.X` and `process.env["X"]` in a file; a read by a computed name is an error (the table could not be checked). */
export function processEnvReads(source: ts.SourceFile): string[] {
  const names: string[] = [];
  walk(source, (n) => {
    if (ts.isPropertyAccessExpression(n) && n.expression.getText(source) === "process.env") names.push(n.name.text);
    if (ts.isElementAccessExpression(n) && n.expression.getText(source) === "process.env") {
      if (!ts.isStringLiteralLike(n.argumentExpression)) throw new Error(`${source.fileName}: process.env read by a computed name (${n.getText(source)})`);
      names.push(n.argumentExpression.text);
    }
  });
  return names;
}

/** The server, database and jobs code (the benchmark and test scripts document their own variables). */
function serviceFiles(): string[] {
  const files: string[] = ["server.ts", "scripts/cli.ts"];
  const under = (dir: string) => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = `${dir}/${entry.name}`;
      if (entry.isDirectory()) under(rel);
      else if (/\.tsx?$/.test(entry.name)) files.push(rel);
    }
  };
  for (const dir of ["app", "db", "jobs", "server"]) under(dir);
  return files;
}

type Documented = { name: string; default: string; literal: boolean };

/** The rows of the first table under "## Configuration": each name of the first column with its default. */
export function documentedVariables(markdown: string): Documented[] {
  const section = markdown.split(/^## Configuration$/m)[1]?.split(/^## /m)[0] ?? "";
  const table = section.split("\n").filter((l) => l.startsWith("|")).slice(2);
  if (table.length === 0) throw new Error('no table under "## Configuration"');
  const out: Documented[] = [];
  for (const line of table) {
    const [names, defaults] = line.split("|").slice(1, 3).map((c) => c.trim());
    const vars = [...names.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    if (vars.length === 0 || vars.some((v) => !/^[A-Z][A-Z0-9_]*(<ID>_[A-Z_]+)?$/.test(v))) throw new Error(`not a variable name: ${names}`);
    if (defaults.startsWith("`")) {
      const values = [...defaults.matchAll(/`([^`]*)`/g)].map((m) => m[1]);
      if (values.length !== vars.length) throw new Error(`${names}: ${vars.length} variables, ${values.length} defaults`);
      vars.forEach((name, i) => out.push({ name, default: values[i], literal: true }));
    } else {
      const word = defaults.split(/[\s(]/)[0];
      if (!word) throw new Error(`${names}: no default`);
      for (const name of vars) out.push({ name, default: word, literal: false });
    }
  }
  return out;
}

/** loadConfig of exactly these variables (no NODE_ENV unless given: its default is checked too). */
const configOf = (env: Record<string, string>) => loadConfig(env as NodeJS.ProcessEnv);

const envSource = parse("app/env.server.ts");
const schema = schemaVariables(envSource);
const oidc = oidcVariables(envSource);
const fromCode = [...new Set(serviceFiles().filter((f) => f !== "app/env.server.ts").flatMap((f) => processEnvReads(parse(f))))];
const documented = documentedVariables(read("docs/operations.md"));
const documentedNames = documented.map((d) => d.name);

describe("the configuration reference (docs/operations.md)", () => {
  it("finds the variables in the source", () => {
    // the reader of the source must keep finding them: a parse that finds none would pass below
    expect(schema).toContain("DATABASE_URL");
    expect(schema).toContain("OIDC_PROVIDERS");
    expect(oidc).toEqual(expect.arrayContaining(["OIDC_<ID>_ISSUER", "OIDC_<ID>_CLIENT_ID", "OIDC_<ID>_CLIENT_SECRET"]));
    expect(fromCode).toContain("PG_BIN_DIR");
  });

  it("names every variable the service reads", () => {
    const missing = [...schema, ...oidc, ...fromCode].filter((name) => !documentedNames.includes(name));
    expect(missing, "variables read by the service but missing from the table").toEqual([]);
  });

  it("names no variable the service no longer reads, and each once", () => {
    const read = new Set([...schema, ...oidc, ...fromCode]);
    expect(documentedNames.filter((name) => !read.has(name)), "variables in the table that nothing reads").toEqual([]);
    expect(documentedNames.filter((name, i) => documentedNames.indexOf(name) !== i), "variables named twice").toEqual([]);
  });

  it("gives the defaults loadConfig applies", () => {
    // secrets given, so no secrets file is written; the variable under test is the only other one set
    const base = { APP_SECRET: "x".repeat(32), NOTIFICATION_SECRET: "y".repeat(16) };
    const without = configOf({ ...base });
    const checked: string[] = [];
    for (const d of documented) {
      if (!schema.includes(d.name) || d.name in base) continue;
      // a literal default must change nothing when set; "unset" and "empty" mean the empty value does the same
      if (d.literal) expect(configOf({ ...base, [d.name]: d.default }), `${d.name}=${d.default}`).toEqual(without);
      else if (["unset", "empty"].includes(d.default)) expect(configOf({ ...base, [d.name]: "" }), `${d.name} empty`).toEqual(without);
      else throw new Error(`${d.name}: default "${d.default}" is neither a value nor unset or empty`);
      checked.push(d.name);
    }
    expect(checked.length).toBe(schema.filter((name) => !(name in base)).length);
  });

  it("notices a default the table gets wrong", () => {
    const base = { APP_SECRET: "x".repeat(32), NOTIFICATION_SECRET: "y".repeat(16) };
    expect(configOf({ ...base, DB_POOL_SIZE: "21" })).not.toEqual(configOf({ ...base }));
    const table = (row: string) => `## Configuration\n\n| Variable | Default | Meaning |\n| --- | --- | --- |\n${row}\n`;
    expect(() => documentedVariables(table("| `PORT`, `HOST` | `3000` | HTTP. |"))).toThrow("2 variables, 1 defaults");
    expect(documentedVariables(table("| `PORT`, `HOST` | `3000`, `0.0.0.0` | HTTP. |"))).toEqual([
      { name: "PORT", default: "3000", literal: true },
      { name: "HOST", default: "0.0.0.0", literal: true },
    ]);
  });
});
