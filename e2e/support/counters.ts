import { createSql } from "../../db/client.js";
import { countersApplied } from "../../test/support/counters.js";

/**
 * Waits until the events sent so far have their users, environments, versions and rollups applied
 * (the service applies them within its staleness bound), so a page opened next shows them.
 */
export async function countersSettled(url = process.env.E2E_DATABASE_URL!): Promise<void> {
  const sql = createSql(url, 1);
  try {
    await countersApplied(sql);
  } finally {
    await sql.end();
  }
}
