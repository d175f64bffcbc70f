import type { LoaderFunctionArgs } from "@remix-run/node";
import { getGroup } from "../../db/errors.js";
import { learnedTemplateOf } from "../../db/grouping-templates.js";
import { groupHourlySeries, latestGroupEvents } from "../../db/group-reads.js";
import { asUuid } from "~/input.server";
import { groupFacets } from "~/errors/triage.server";
import { reading } from "~/services.server";
import { getOnly, handle, json, notFound } from "~/http.server";
import { withTitle } from "~/errors/title.server";

export const loader = ({ request, params, context }: LoaderFunctionArgs) =>
  handle(async () => {
    const { apiKeys } = context.services;
    const { projectId } = await apiKeys.projectFor(request);
    return reading(context.services, request, async (sql) => {
      const groupId = asUuid(params.groupId);
      const group = groupId && (await getGroup(sql, projectId, groupId));
      if (!groupId || !group) throw notFound("No error group with that id in this project.");
      const [series, events, facets, learned] = await Promise.all([
        groupHourlySeries(sql, projectId, group),
        latestGroupEvents(sql, projectId, group),
        groupFacets(sql, projectId, groupId),
        learnedTemplateOf(sql, projectId, groupId),
      ]);
      return json({
        group: withTitle(group),
        series: series.map((s) => ({ bucket: s.bucket, count: Number(s.count) })),
        events,
        ...facets,
        learned_template: learned,
      });
    });
  });

export const action = getOnly;
