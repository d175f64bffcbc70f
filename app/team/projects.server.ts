import { z } from "zod";
import type { Sql } from "../../db/client.js";
import { listProjectsForUser } from "../../db/members.js";
import { deleteProject as dbDeleteProject, getProject, insertProjectWithOwner, renameProject as dbRename } from "../../db/projects.js";
import { recordAudit } from "../../db/audit.js";
import { hashApiKey, newApiKey } from "~/auth/api-keys.server";
import { notFound } from "~/http.server";
import { parseOr400 } from "~/input.server";
import { DEFAULT_LAYOUT, LAYOUT_IDS, LAYOUTS } from "~/economy/layouts.server";
import { authorize, EVERYONE, MANAGERS, type Actor } from "./access.server";

export const ProjectInput = z.object({
  name: z.string({ error: "is required" }).trim().min(1, "must not be empty").max(200, "must be at most 200 characters"),
});

const valid = LAYOUT_IDS.join(", ");
export const CreateInput = ProjectInput.extend({
  // the seed's layout unless the caller picks another: the Team API's answer for a name alone is unchanged
  economy_layout: z.enum(LAYOUT_IDS, { error: `must be one of ${valid}` }).nullish(),
});

export const listProjects = (sql: Sql, actor: Actor) => listProjectsForUser(sql, actor.id);

/**
 * A project owned by the actor (or by nobody, from the CLI), with a first API key shown once, on the
 * starting economy layout asked for (the seed's by default): a non-seed layout's map is saved with it.
 */
export async function createProject(sql: Sql, actor: Actor | null, input: unknown) {
  const { name, economy_layout } = parseOr400(CreateInput, input);
  const layout = economy_layout ?? DEFAULT_LAYOUT;
  const apiKey = newApiKey();
  const { project, key } = await insertProjectWithOwner(sql, name, actor?.id ?? null, {
    prefix: apiKey.slice(0, 10),
    hash: hashApiKey(apiKey),
    name: "default",
  }, layout === "seed" ? null : LAYOUTS[layout].map);
  return { project: { ...project, role: actor ? ("owner" as const) : null, economy_layout: layout }, api_key: apiKey, key };
}

export async function getProjectFor(sql: Sql, actor: Actor, projectIdParam: string | undefined) {
  const { projectId, role } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const project = await getProject(sql, projectId);
  if (!project) throw notFound("No project with that id among your projects.");
  return { ...project, role };
}

export async function renameProject(sql: Sql, actor: Actor, projectIdParam: string | undefined, input: unknown) {
  const { projectId, role } = await authorize(sql, actor, projectIdParam, MANAGERS, "rename the project");
  const { name } = parseOr400(ProjectInput, input);
  const before = await getProject(sql, projectId);
  const project = await dbRename(sql, projectId, name);
  if (!project) throw notFound("No project with that id among your projects.");
  if (before?.name !== project.name) {
    await recordAudit(sql, { projectId, actorId: actor.id, action: "project.renamed", target: project.name, details: { from: before?.name ?? null, to: project.name } });
  }
  return { ...project, role };
}

/** Owners only: the project and all its data go, in one transaction. */
export async function deleteProject(sql: Sql, actor: Actor, projectIdParam: string | undefined) {
  const { projectId } = await authorize(sql, actor, projectIdParam, ["owner"], "delete the project");
  if (!(await dbDeleteProject(sql, projectId, actor.id))) throw notFound("No project with that id among your projects.");
}
