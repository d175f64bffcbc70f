import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The app's routes and the query parameters each one reads, taken from the source, so a test that
 * feeds every parameter of every route cannot fall behind when a route or a parameter is added.
 */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const APP = path.join(ROOT, "app");
const ROUTES = path.join(APP, "routes");

/** How app code reads a query parameter: on the query object, or through the params.server helpers. */
const READS = [
  /\b(?:q|query|searchParams|queryOf\(request\))\.(?:get|getAll|has)\("([\w.-]+)"\)/g,
  /\b(?:integer|text|oneOf|digits|eventId|positiveNumber|decimalParam)\((?:q|query), "([\w.-]+)"/g,
];

export type AppRoute = {
  file: string;
  /** the URL pattern, with `{name}` for each path parameter */
  pattern: string;
  loader: boolean;
  action: boolean;
  /** query parameters read by the route module or any app module it imports */
  params: string[];
};

type Definition = { params: Set<string>; calls: Set<string> };

const TOP_LEVEL = /^(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:function\*?\s+([\w$]+)|(?:const|let)\s+([\w$]+)\s*[=:]|class\s+([\w$]+))/gm;

const readsIn = (text: string) => new Set([...READS.flatMap((re) => [...text.matchAll(re)].map((m) => m[1]))]);
const callsIn = (text: string) => new Set([...text.matchAll(/\b([A-Za-z_$][\w$]*)\s*\(/g)].map((m) => m[1]));

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const p = path.join(dir, entry.name);
    return entry.isDirectory() ? sourcesUnder(p) : /\.tsx?$/.test(entry.name) ? [p] : [];
  });
}

let definitions: Map<string, Definition[]> | undefined;
/** Every top-level function, const and class of the app by name, with what it reads and calls. */
function appDefinitions(): Map<string, Definition[]> {
  if (definitions) return definitions;
  definitions = new Map();
  for (const file of sourcesUnder(APP)) {
    const source = readFileSync(file, "utf8");
    const starts = [...source.matchAll(TOP_LEVEL)];
    starts.forEach((m, i) => {
      const name = m[1] ?? m[2] ?? m[3];
      const text = source.slice(m.index, starts[i + 1]?.index ?? source.length);
      const list = definitions!.get(name) ?? [];
      list.push({ params: readsIn(text), calls: callsIn(text) });
      definitions!.set(name, list);
    });
  }
  return definitions;
}

/**
 * The query parameters a route module reads, itself and through every app function it calls
 * (followed by name, transitively: a name defined twice counts both).
 */
export function paramsReadBy(file: string): string[] {
  const defs = appDefinitions();
  const source = readFileSync(file, "utf8");
  const out = readsIn(source);
  const seen = new Set<string>();
  const stack = [...callsIn(source)];
  while (stack.length) {
    const name = stack.pop()!;
    if (seen.has(name)) continue;
    seen.add(name);
    for (const d of defs.get(name) ?? []) {
      for (const p of d.params) out.add(p);
      stack.push(...d.calls);
    }
  }
  return [...out].sort();
}

/** Remix flat-route file name -> URL pattern (`_index` and `_layout` segments vanish, `[.]` is a dot); a splat route answers null. */
export function patternOf(file: string): string | null {
  const segments = file.replace(/\.tsx?$/, "").split(/\.(?![^[]*\])/);
  const out: string[] = [];
  for (const seg of segments) {
    if (seg === "$") return null;
    if (seg.startsWith("_")) continue;
    if (seg.startsWith("$")) out.push(`{${seg.slice(1)}}`);
    else out.push(seg.replace(/\[(.)\]/g, "$1").replace(/_$/, ""));
  }
  return `/${out.join("/")}`;
}

export function appRoutes(): AppRoute[] {
  return readdirSync(ROUTES)
    .filter((f) => /\.tsx?$/.test(f))
    .sort()
    .flatMap((file) => {
      const pattern = patternOf(file);
      if (pattern === null) return [];
      const full = path.join(ROUTES, file);
      const source = readFileSync(full, "utf8");
      return [
        {
          file,
          pattern,
          loader: /export (?:const|async function|function) loader\b/.test(source),
          action: /export (?:const|async function|function) action\b/.test(source),
          params: paramsReadBy(full),
        },
      ];
    });
}

/** App modules that read a request's query string without going through `queryOf` (which refuses a NUL where it is read). */
export function uncheckedQueryReads(): string[] {
  return sourcesUnder(APP)
    .filter((f) => /\.searchParams\b/.test(readFileSync(f, "utf8").replace(/\/\/.*|\/\*[\s\S]*?\*\//g, "")))
    .map((f) => path.relative(ROOT, f));
}
