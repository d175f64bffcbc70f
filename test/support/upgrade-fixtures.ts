import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import postgres from "postgres";

/**
 * The upgrade fixtures (test/fixtures/upgrade, made by scripts/upgrade-fixture.ts): a database an
 * earlier release populated through its API, as plain SQL, and what its API answered then.
 */
const FIXTURES = path.resolve(import.meta.dirname, "../fixtures/upgrade");

export type UpgradeFixture = {
  release_migration: string;
  project_id: string;
  email: string;
  password: string;
  api_key: string;
  share_token: string;
  answers: Record<string, any>;
};

/** Every fixture's file name (`<its last migration>.json`), oldest release first. */
export const fixtureFiles = () => readdirSync(FIXTURES).filter((f) => f.endsWith(".json")).sort();

export const readFixture = (file: string) => JSON.parse(readFileSync(path.join(FIXTURES, file), "utf8")) as UpgradeFixture;

/** The newest release's fixture. */
export const latestFixture = () => readFixture(fixtureFiles().at(-1)!);

/** Loads a fixture's dump into the (empty) database at `url`, on a connection of its own (the dump sets its search_path). */
export async function restoreFixture(url: string, fixture: UpgradeFixture): Promise<void> {
  const one = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await one.unsafe(gunzipSync(readFileSync(path.join(FIXTURES, `${fixture.release_migration}.sql.gz`))).toString("utf8"));
  } finally {
    await one.end();
  }
}
