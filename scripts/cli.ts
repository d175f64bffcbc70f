/**
 * Headless set-up: `npm run cli -- <command> [--flag value]`. Each command prints one JSON object as
 * the last line of stdout. Uses the same DATABASE_URL / embedded-PostgreSQL rule as the server.
 */
import { parseArgs } from "node:util";
import path from "node:path";
import { openDatabase } from "../db/connect.js";
import { startEmbeddedPostgres } from "../db/embedded.js";
import { BackupError, backupDatabase, restoreDatabase } from "../db/backup.js";
import { getProject, revokeApiKey } from "../db/projects.js";
import { findUserByEmail } from "../db/users.js";
import { recordAudit, setInstanceAdmin } from "../db/audit.js";
import { loadConfig } from "../app/env.server.js";
import { createApiKey } from "../app/auth/api-keys.server.js";
import { createUser, resetPassword } from "../app/accounts/users.server.js";
import { createProject } from "../app/team/projects.server.js";
import { ApiError } from "../app/http.server.js";
import { deleteTwoFactor } from "../db/two-factor.js";

const USAGE = `Usage: npm run cli -- <command>
  user:create --email E --password P     -> {"user_id"}
  user:password --email E [--password P] -> {"user_id", "temporary_password"}  (changed at next sign-in)
  user:two-factor-off --email E          -> {"user_id", "two_factor": false}  (lost phone and recovery codes)
  project:create --name NAME [--owner E] [--layout seed|profilestore|flat|slots]
                                         -> {"project_id", "api_key", "economy_layout"}
  key:create --project PROJECT_ID        -> {"key_id", "api_key"}
  key:revoke --key-id KEY_ID             -> {"revoked": true}
  user:admin --email E [--revoke]        -> {"user_id", "instance_admin"}  (reads the instance's audit log)
  backup --out FILE                      -> {"file", "bytes", "server_version", "pg_dump_version", "migration"}
  restore --in FILE                      -> {"file", "server_version", "pg_restore_version", "tables"}
                                            (into an empty database; the service migrates it at its next start)`;

class UsageError extends Error {}

async function main() {
  const [command, ...rest] = process.argv.slice(2);
  const { values } = parseArgs({
    args: rest,
    options: {
      name: { type: "string" },
      project: { type: "string" },
      "key-id": { type: "string" },
      owner: { type: "string" },
      layout: { type: "string" },
      email: { type: "string" },
      password: { type: "string" },
      out: { type: "string" },
      in: { type: "string" },
      revoke: { type: "boolean" },
    },
    strict: true,
  });
  const need = (k: keyof typeof values) => {
    const v = values[k];
    if (typeof v !== "string" || v.trim() === "") throw new UsageError(`--${k} is required`);
    return v.trim();
  };
  const isUuid = (s: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);
  const COMMANDS = ["user:create", "user:password", "user:two-factor-off", "user:admin", "project:create", "key:create", "key:revoke", "backup", "restore"];
  if (!COMMANDS.includes(command ?? "")) throw new UsageError(`Unknown command ${command ?? "(none)"}`);

  const config = loadConfig();
  if (command === "backup" || command === "restore") {
    // neither migrates: a backup is of the database as it is, a restore needs an empty one
    const embedded = config.databaseUrl ? null : await startEmbeddedPostgres(config.dataDir, config.embeddedPgPort);
    const url = config.databaseUrl ?? embedded!.url;
    try {
      return command === "backup" ? await backupDatabase(url, path.resolve(need("out"))) : await restoreDatabase(url, path.resolve(need("in")));
    } finally {
      await embedded?.stop();
    }
  }
  const db = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    embeddedPort: config.embeddedPgPort,
    poolSize: 2,
  });
  try {
    switch (command) {
      case "user:create": {
        const user = await createUser(db.sql, { email: need("email"), password: values.password ?? "" });
        return { user_id: user.id };
      }
      case "user:password": {
        // an operator's reset: the password is temporary (changed at the next sign-in), sessions end
        const email = need("email");
        const { user, temporaryPassword } = await resetPassword(db.sql, email, values.password);
        return { user_id: user.id, temporary_password: temporaryPassword };
      }
      case "user:two-factor-off": {
        // an operator's recovery for a user who lost both the authenticator and the recovery codes
        const email = need("email");
        const user = await findUserByEmail(db.sql, email);
        if (!user) throw new UsageError(`No user with the email ${email}`);
        await deleteTwoFactor(db.sql, user.id);
        await recordAudit(db.sql, { projectId: null, actorId: null, action: "account.two_factor_reset", target: user.email, details: { via: "cli" } });
        return { user_id: user.id, two_factor: false };
      }
      case "project:create": {
        const name = need("name");
        if (name.length > 200) throw new UsageError("--name must be at most 200 characters");
        const ownerEmail = values.owner?.trim();
        const owner = ownerEmail ? await findUserByEmail(db.sql, ownerEmail) : undefined;
        if (ownerEmail && !owner) throw new UsageError(`No user with the email ${ownerEmail}; create one with user:create first`);
        const input = { name, economy_layout: values.layout?.trim() };
        const { project, api_key } = await createProject(db.sql, owner ? { id: owner.id, email: owner.email } : null, input);
        return { project_id: project.id, api_key, economy_layout: project.economy_layout };
      }
      case "user:admin": {
        const email = need("email");
        const admin = !values.revoke;
        const userId = await setInstanceAdmin(db.sql, email, admin);
        if (!userId) throw new UsageError(`No user with the email ${email}`);
        await recordAudit(db.sql, { projectId: null, actorId: null, action: admin ? "instance_admin.granted" : "instance_admin.revoked", target: email.toLowerCase(), details: { user_id: userId, via: "cli" } });
        return { user_id: userId, instance_admin: admin };
      }
      case "key:create": {
        const projectId = need("project");
        if (!isUuid(projectId) || !(await getProject(db.sql, projectId))) throw new UsageError(`No project ${projectId}`);
        const { key, apiKey } = await createApiKey(db.sql, projectId);
        await recordAudit(db.sql, { projectId, actorId: null, action: "api_key.created", target: key.id, details: { name: key.name, prefix: key.prefix, via: "cli" } });
        return { key_id: key.id, api_key: apiKey };
      }
      default: {
        const keyId = need("key-id");
        if (!isUuid(keyId) || !(await revokeApiKey(db.sql, keyId, { actorId: null, via: "cli" }))) throw new UsageError(`No active key ${keyId}`);
        return { revoked: true };
      }
    }
  } finally {
    await db.close();
  }
}

main().then(
  (out) => {
    console.log(JSON.stringify(out));
    process.exit(0);
  },
  (err) => {
    // a rejected input (bad email, short password, taken email) is the caller's to fix, like a usage error
    const usage =
      err instanceof UsageError ||
      err instanceof ApiError ||
      (err instanceof BackupError && err.usage) ||
      (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS");
    console.error(usage ? `${err.message}\n${USAGE}` : err);
    console.log(JSON.stringify({ error: usage ? "usage" : "failed", message: err.message }));
    process.exit(usage ? 2 : 1);
  },
);
