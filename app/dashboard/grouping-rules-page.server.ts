import { data } from "@remix-run/node";
import type { Services } from "~/services.server";
import { requirePageUser } from "~/accounts/sessions.server";
import { ApiError, type ErrorDetail } from "~/http.server";
import {
  applyGroupingRule,
  createGroupingRule,
  editGroupingRule,
  previewGroupingRule,
  removeGroupingRule,
} from "~/team/grouping-rules.server";
import { plural } from "~/components/format";
import { RULE_FORM_FIELDS, type RuleFormValues } from "~/components/grouping-rules";

/**
 * The Settings page's grouping-rule forms (plain posts, so they work without JavaScript): each intent
 * is one Team API verb. What was typed comes back with every answer, so a preview or an error shows
 * the form as it was sent, each error beside its field.
 */

export type GroupingRulePreview = Awaited<ReturnType<typeof previewGroupingRule>>;

export type GroupingRuleAnswer = {
  ok: boolean;
  intent: string;
  message?: string;
  error?: string;
  details?: ErrorDetail[];
  values?: RuleFormValues;
  preview?: GroupingRulePreview;
  issueId?: string | null;
};

const valuesOf = (form: Record<string, unknown>): RuleFormValues =>
  Object.fromEntries(RULE_FORM_FIELDS.map((k) => [k, typeof form[k] === "string" ? (form[k] as string) : ""])) as RuleFormValues;

/** The form as the Team API's rule body: empty match fields are left out. */
function ruleBody(v: RuleFormValues) {
  const match: Record<string, string> = {};
  if (v.match_message !== "") match.message = v.match_message;
  if (v.match_message_regex !== "") match.message_regex = v.match_message_regex;
  if (v.match_path.trim() !== "") match.path = v.match_path.trim();
  if (v.match_level !== "") match.level = v.match_level;
  if (v.match_tag !== "") match.tag = v.match_tag;
  return { name: v.name.trim() || null, match, action: v.rule_action };
}

export async function groupingRulesAction(services: Services, request: Request, projectId: string | undefined, intent: string, form: Record<string, unknown>) {
  const values = valuesOf(form);
  const ruleId = typeof form.rule_id === "string" ? form.rule_id : "";
  const answer = (a: Omit<GroupingRuleAnswer, "intent">): GroupingRuleAnswer => ({ intent, ...a });
  try {
    const user = await requirePageUser(services, request);
    switch (intent) {
      case "grule-preview":
        return answer({ ok: true, values, preview: await previewGroupingRule(services, user, projectId, ruleBody(values)) });
      case "grule-save": {
        if (ruleId) {
          await editGroupingRule(services, user, projectId, ruleId, ruleBody(values));
          return answer({ ok: true, values, message: "Rule saved; new events follow it from now on." });
        }
        await createGroupingRule(services, user, projectId, ruleBody(values));
        return answer({ ok: true, message: "Rule added; new events follow it from now on. Apply it to regroup the issues it already covers." });
      }
      case "grule-delete":
        await removeGroupingRule(services, user, projectId, ruleId);
        return answer({ ok: true, message: "Rule deleted." });
      case "grule-move": {
        const to = Number(form.position);
        await editGroupingRule(services, user, projectId, ruleId, { position: Number.isInteger(to) ? to : -1 });
        return answer({ ok: true, message: "Rule moved." });
      }
      case "grule-apply": {
        const r = await applyGroupingRule(services, user, projectId, ruleId);
        if (r.action === "ignore") return answer({ ok: true, message: `${plural(r.ignored.length, "issue")} set to ignored (of ${plural(r.matched, "matching event")} among the latest ${r.scanned}).` });
        if (!r.issue) return answer({ ok: true, message: `No stored event among the latest ${r.scanned} matches this rule: nothing to merge.` });
        const skipped = r.skipped.length > 0 ? ` ${plural(r.skipped.length, "issue")} holding merged issues left as ${r.skipped.length === 1 ? "it is" : "they are"}.` : "";
        return answer({ ok: true, issueId: r.issue.id, message: `Merged ${plural(r.merged.length, "issue")} into “${r.issue.title.slice(0, 80)}”.${skipped}` });
      }
      default:
        return data(answer({ ok: false, error: "Unknown action." }), { status: 400 });
    }
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    // a 400 about the form's fields is shown beside each field; the summary only says nothing happened
    const fields = err.code === "invalid_payload" && (err.details?.length ?? 0) > 0;
    const error = !fields ? err.message : intent === "grule-preview" ? "The rule cannot be previewed: fix the marked field." : "The rule was not saved: fix the marked field.";
    return data(answer({ ok: false, error, details: err.details, values }), { status: err.status, headers: err.headers });
  }
}
