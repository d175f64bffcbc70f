import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { defaultFingerprint } from "../../app/ingest/fingerprint.server.js";
import { defaultFingerprint as v1 } from "../../app/ingest/fingerprint-v1.server.js";
import { CORPUS } from "../support/grouping-corpus.js";

const v2 = (e: (typeof CORPUS)[number]) => defaultFingerprint(e.message, e.stack, e.player);
const issues = (fp: (e: (typeof CORPUS)[number]) => string) => new Set(CORPUS.map(fp)).size;

describe("grouping corpus", () => {
  it("holds at least 60 realistic events", () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(60);
  });

  it("grouping v2 puts every event in its expected issue, and no two expected issues together", () => {
    const fpOf = new Map<string, string>();
    const issueOf = new Map<string, string>();
    for (const e of CORPUS) {
      const fp = v2(e);
      if (!fpOf.has(e.issue)) fpOf.set(e.issue, fp);
      expect(fp, `${e.issue}: ${e.message}`).toBe(fpOf.get(e.issue));
      if (!issueOf.has(fp)) issueOf.set(fp, e.issue);
      expect(issueOf.get(fp), `${e.issue} shares a fingerprint with ${issueOf.get(fp)}`).toBe(e.issue);
    }
  });

  it("the README states the issue counts the corpus produces under v2 and v1", () => {
    const expected = new Set(CORPUS.map((e) => e.issue)).size;
    expect(issues(v2)).toBe(expected);
    const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
    const line = `its ${CORPUS.length} events make **${issues(v2)} issues with grouping v2 and ${issues((e) => v1(e.message, e.stack))} with v1**`;
    expect(readme).toContain(line);
  });
});
