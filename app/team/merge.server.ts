import { learnedTemplateOf } from "../../db/grouping-templates.js";
import { z } from "zod";
import type { Sql } from "../../db/client.js";
import { getGroup } from "../../db/errors.js";
import { listMergedGroups, mergeCandidates, mergeGroups, MergeRefused, pickMergeTarget, unmergeGroups } from "../../db/merge.js";
import { parseOr400, asUuid } from "~/input.server";
import { conflict, invalidPayload, notFound } from "~/http.server";
import { authorize, EVERYONE, type Actor } from "./access.server";
import { withTitle } from "~/errors/title.server";

const groupIds = (min: number) =>
  z
    .array(z.uuid({ error: "must be a group id" }), { error: "is required" })
    .min(min, `must hold at least ${min} id${min > 1 ? "s" : ""}`)
    .max(100, "holds at most 100 ids")
    .transform((ids) => [...new Set(ids.map((i) => i.toLowerCase()))]);
export const MergeInput = z.object({
  ids: groupIds(1),
  target_id: z.uuid({ error: "must be a group id" }).transform((s) => s.toLowerCase()).optional(),
});
export const UnmergeInput = z.object({ ids: groupIds(1) });

const noGroup = () => notFound("No error group with that id in this project.");

/** Refusals of the merge layer as the one error body. */
async function refusalsAsErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof MergeRefused)) throw err;
    const r = err.refusal;
    switch (r.kind) {
      case "not_found":
        throw notFound(`No visible error group with the id ${r.ids.join(", ")} in this project.`);
      case "same":
        throw invalidPayload("Select at least two different issues to merge.");
      case "nested":
        throw conflict(`Issue ${r.ids.join(", ")} already holds merged issues: make it the target, or unmerge it first.`);
      case "not_member":
        throw notFound(`Issue ${r.ids.join(", ")} is not merged into this issue.`);
      case "own":
        throw conflict("That part is the issue's own fingerprint; unmerge the other parts instead.");
    }
  }
}

/**
 * Merges issues into one (any member: it is triage, and an unmerge undoes it). Without target_id the
 * target is the selected issue that already holds merged issues, else the one with the most occurrences.
 */
export async function mergeIssues(sql: Sql, actor: Actor, projectIdParam: string | undefined, input: unknown) {
  const { projectId } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const { ids, target_id } = parseOr400(MergeInput, input);
  const all = target_id ? [target_id, ...ids.filter((i) => i !== target_id)] : ids;
  if (all.length < 2) throw invalidPayload("Select at least two different issues to merge.");
  const target = target_id ?? (await pickMergeTarget(sql, projectId, all));
  const merged = await refusalsAsErrors(() => mergeGroups(sql, projectId, target, all, { actorId: actor.id }));
  return { group: await getGroup(sql, projectId, target), merged: merged.sort() };
}

/**
 * What a merge of `ids` would do, for a confirmation: the issues (visible ones of the project; others
 * answer 404 as the merge would) and the target a merge without target_id picks, which comes first.
 */
export async function mergePreview(sql: Sql, actor: Actor, projectIdParam: string | undefined, input: unknown) {
  const { projectId } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const { ids } = parseOr400(MergeInput, input);
  if (ids.length < 2) throw invalidPayload("Select at least two different issues to merge.");
  const issues = await mergeCandidates(sql, projectId, ids);
  const missing = ids.filter((id) => !issues.some((g) => g.id === id));
  if (missing.length > 0) throw notFound(`No visible error group with the id ${missing.join(", ")} in this project.`);
  return { issues: issues.map(withTitle), target: issues[0].id };
}

/** Splits merged issues back out of an issue; each gets its own events, counts and rollups back. */
export async function unmergeIssues(sql: Sql, actor: Actor, projectIdParam: string | undefined, groupIdParam: string | undefined, input: unknown) {
  const { projectId } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const groupId = asUuid(groupIdParam);
  if (!groupId) throw noGroup();
  const { ids } = parseOr400(UnmergeInput, input);
  const unmerged = await refusalsAsErrors(() => unmergeGroups(sql, projectId, groupId, ids, { actorId: actor.id }));
  return { group: await getGroup(sql, projectId, groupId), unmerged: unmerged.sort() };
}

/** The issues merged into an issue (its own part first). */
export async function mergedInto(sql: Sql, actor: Actor, projectIdParam: string | undefined, groupIdParam: string | undefined) {
  const { projectId } = await authorize(sql, actor, projectIdParam, EVERYONE);
  const groupId = asUuid(groupIdParam);
  const group = groupId ? await getGroup(sql, projectId, groupId) : undefined;
  if (!group) throw noGroup();
  return mergesOf(sql, projectId, group.id);
}

/**
 * The issues merged into a group already read from this project (the issue page has read it), and
 * the learned template that merged them, if any (docs/grouping.md, "Learned templates").
 */
export async function mergesOf(sql: Sql, projectId: string, groupId: string) {
  const [members, learned] = await Promise.all([listMergedGroups(sql, projectId, groupId), learnedTemplateOf(sql, projectId, groupId)]);
  return { members: members.map(withTitle), learned };
}
