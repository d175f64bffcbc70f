import { redirect, type ActionFunctionArgs, type LoaderFunctionArgs } from "@remix-run/node";
import { queryOf } from "~/errors/params.server";
import { Form, Link, useActionData, useLoaderData, useParams } from "@remix-run/react";
import { requirePageUser } from "~/accounts/sessions.server";
import { settingsData } from "~/dashboard/views.server";
import { formObject, pageAct, pageLoad } from "~/dashboard/page.server";
import { createKey, revokeKey } from "~/team/keys.server";
import { addMember, changeRole, removeMember } from "~/team/members.server";
import { deleteProject, getProjectFor, renameProject } from "~/team/projects.server";
import { revokeShare } from "~/team/share-links.server";
import { Ago, At } from "~/components/time";
import { Submit, ActionMessage, useResetOnSuccess } from "~/components/ui";
import { DsnKeysPanel } from "~/components/dsn-keys";
import { createDsnKey, listDsnKeysFor, rateLimitFromForm, revokeDsnKeyFor, updateDsnKeyFor } from "~/team/dsn-keys.server";
import { baseUrl } from "~/team/api.server";
import { urlProblem } from "~/sdk/onboarding.server";
import { plural } from "~/components/format";
import { NewApiKey } from "~/components/new-api-key";
import { readingAsMember } from "~/services.server";
import { listGroupingRules } from "~/team/grouping-rules.server";
import { groupingRulesAction } from "~/dashboard/grouping-rules-page.server";
import { GroupingRulesPanel, type GroupingRuleView } from "~/components/grouping-rules";
import { TwoFactorRequirementPanel } from "~/components/two-factor-requirement";
import { getRequirementFor, setRequirementFor } from "~/team/two-factor.server";

export const loader = async ({ request, params, context }: LoaderFunctionArgs) => {
  const user = await requirePageUser(context.services, request);
  return pageLoad(() =>
    readingAsMember(context.services, request, user, params.projectId, async (sql) => ({
      ...(await settingsData(sql, user, params.projectId)),
      project: await getProjectFor(sql, user, params.projectId),
      dsnKeys: await listDsnKeysFor(sql, user, params.projectId, baseUrl(context.services, request)),
      base: baseUrl(context.services, request),
      urlProblem: urlProblem(baseUrl(context.services, request), Boolean(context.services.config.publicUrl)),
      me: user.id,
      now: new Date(),
      groupingRules: await listGroupingRules({ sql }, user, params.projectId),
      editRule: queryOf(request).get("rule"),
      twoFactor: await getRequirementFor(sql, user, params.projectId),
    })),
  );
};

/** Each form names its intent; each intent is one Team API verb. */
export const action = async ({ request, params, context }: ActionFunctionArgs) => {
  const form = formObject(await request.clone().formData());
  const intent = String(form.intent ?? "");
  if (intent.startsWith("grule-")) return groupingRulesAction(context.services, request, params.projectId, intent, form);
  return pageAct(intent, async () => {
    const { sql } = context.services;
    const user = await requirePageUser(context.services, request);
    const p = params.projectId;
    switch (intent) {
      case "rename":
        await renameProject(sql, user, p, { name: form.name });
        return { ok: true as const, intent, message: "Project renamed." };
      case "delete-project": {
        const project = await getProjectFor(sql, user, p);
        if (form.confirm !== project.name) return { ok: false as const, intent, error: "Type the project's name exactly to confirm." };
        await deleteProject(sql, user, p);
        throw redirect("/projects");
      }
      case "key-create": {
        const { api_key } = await createKey(sql, user, p, { name: form.name || undefined });
        return { ok: true as const, intent, message: "Key created. Copy it now: it is shown only once.", apiKey: api_key };
      }
      case "key-revoke":
        await revokeKey(sql, user, p, String(form.key_id ?? ""));
        return { ok: true as const, intent, message: "Key revoked; games using it are refused from now on." };
      case "dsn-create":
        await createDsnKey(sql, user, p, { name: form.name || undefined, rate_limit_per_minute: form.rate_limit_per_minute === undefined ? undefined : rateLimitFromForm(form.rate_limit_per_minute) }, baseUrl(context.services, request));
        return { ok: true as const, intent, message: "DSN created; copy it into your Sentry SDK's configuration." };
      case "dsn-revoke":
        await revokeDsnKeyFor(sql, user, p, String(form.key_id ?? ""));
        return { ok: true as const, intent, message: "DSN revoked; clients using it are refused from now on." };
      case "dsn-limit": {
        const key = await updateDsnKeyFor(sql, user, p, String(form.key_id ?? ""), { rate_limit_per_minute: rateLimitFromForm(form.rate_limit_per_minute) }, baseUrl(context.services, request));
        const limit = key.rate_limit_per_minute;
        return { ok: true as const, intent, message: limit === null ? "The DSN now has no rate limit." : `The DSN may now post ${plural(limit, "event")} per minute.` };
      }
      case "member-add": {
        const r = await addMember(sql, user, p, { email: form.email, role: form.role });
        return {
          ok: true as const,
          intent,
          message: r.temporary_password
            ? `Created an account for ${r.member.email}. Hand over this temporary password (shown once); they must choose their own when they first sign in.`
            : `Added ${r.member.email}.`,
          temporaryPassword: r.temporary_password,
        };
      }
      case "member-role":
        await changeRole(sql, user, p, String(form.user_id ?? ""), { role: form.role });
        return { ok: true as const, intent, message: "Role changed." };
      case "member-remove": {
        await removeMember(sql, user, p, String(form.user_id ?? ""));
        if (form.user_id === user.id) throw redirect("/projects");
        return { ok: true as const, intent, message: "Member removed." };
      }
      case "share-revoke":
        await revokeShare(sql, user, p, String(form.link_id ?? ""));
        return { ok: true as const, intent, message: "Share link revoked." };
      case "two-factor-required":
        await setRequirementFor(sql, user, p, { two_factor_required: form.two_factor_required });
        return { ok: true as const, intent, message: "Two-factor requirement saved." };
      default:
        return { ok: false as const, intent, error: "Unknown action." };
    }
  });
};

const Hidden = ({ intent, ...fields }: { intent: string } & Record<string, string>) => (
  <>
    <input type="hidden" name="intent" value={intent} />
    {Object.entries(fields).map(([k, v]) => <input key={k} type="hidden" name={k} value={v} />)}
  </>
);

export default function Settings() {
  const { role, keys, members, links, project, me, now, dsnKeys, base: serviceUrl, urlProblem, groupingRules, editRule, twoFactor } = useLoaderData<typeof loader>();
  const result = useActionData<typeof action>();
  const manager = role === "owner" || role === "admin";
  const base = `/projects/${useParams().projectId}`;
  const keyForm = useResetOnSuccess("key-create");
  const memberForm = useResetOnSuccess("member-add");
  const secret = result && "apiKey" in result ? result.apiKey : undefined;
  const temp = result && "temporaryPassword" in result ? result.temporaryPassword : undefined;
  return (
    <>
      {manager ? (
        <p className="row" data-testid="audit-link">
          <Link to={`${base}/audit`}>Audit log</Link>
          <span className="muted small">who changed keys, members, alerts and settings, and when</span>
        </p>
      ) : null}
      <section className="panel">
        <h2 style={{ marginTop: 0 }}>API keys</h2>
        {manager ? (
          <>
            <p className="muted small">Games send events with a key in the <code>x-api-key</code> header. Keep several active keys to rotate without downtime: create the new one, deploy it, revoke the old one.</p>
            <ActionMessage data={result} intent="key-create" />
            <ActionMessage data={result} intent="key-revoke" />
            {secret ? <NewApiKey apiKey={secret} url={serviceUrl} problem={urlProblem} /> : null}
            <table>
              <thead><tr><th>Name</th><th>Prefix</th><th>Created</th><th>Last used</th><th>State</th><th /></tr></thead>
              <tbody>
                {keys.map((k) => (
                  <tr key={k.id}>
                    <td className="key-name">{k.name ?? <span className="muted">unnamed</span>}</td>
                    <td><code>{k.prefix}…</code></td>
                    <td className="small"><At d={k.created_at} /></td>
                    <td className="small"><Ago d={k.last_used_at} now={now} /></td>
                    <td className="small">{k.revoked_at ? <>revoked <At d={k.revoked_at} /></> : "active"}</td>
                    <td>
                      {!k.revoked_at ? (
                        <Form method="post" className="inline">
                          <Hidden intent="key-revoke" key_id={k.id} />
                          <Submit className="danger" when={["key_id", k.id]} pending="Revoking…" confirm={`Revoke the key ${k.prefix}…? Game servers using it are refused at once.`}>Revoke</Submit>
                        </Form>
                      ) : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <Form method="post" className="row" style={{ marginTop: 12 }} ref={keyForm}>
              <Hidden intent="key-create" />
              <input name="name" placeholder="Key name (optional)" maxLength={100} aria-label="Key name" />
              <Submit pending="Creating…">Create key</Submit>
            </Form>
          </>
        ) : (
          <p className="muted">Only owners and admins see and manage API keys.</p>
        )}
      </section>

      <DsnKeysPanel keys={dsnKeys} manager={manager} result={result} now={now} problem={urlProblem} />

      <section className="panel">
        <h2 style={{ marginTop: 0 }}>Members</h2>
        <ActionMessage data={result} intent="member-add" />
        <ActionMessage data={result} intent="member-role" />
        <ActionMessage data={result} intent="member-remove" />
        {temp ? <code className="secret" data-testid="temporary-password">{temp}</code> : null}
        <table>
          <thead><tr><th>Email</th><th>Role</th><th>Since</th><th /></tr></thead>
          <tbody>
            {members.map((m) => (
              <tr key={m.user_id}>
                <td>{m.email}{m.user_id === me ? <span className="muted"> (you)</span> : null}</td>
                <td>
                  {manager && (role === "owner" || m.role !== "owner") ? (
                    <Form method="post" className="row">
                      <Hidden intent="member-role" user_id={m.user_id} />
                      <select name="role" defaultValue={m.role} aria-label={`Role of ${m.email}`}>
                        {role === "owner" ? <option value="owner">owner</option> : null}
                        <option value="admin">admin</option>
                        <option value="member">member</option>
                      </select>
                      <Submit when={["user_id", m.user_id]} pending="Saving…">Change</Submit>
                    </Form>
                  ) : (
                    m.role
                  )}
                </td>
                <td className="small"><At d={m.created_at} /></td>
                <td>
                  {(manager && (role === "owner" || m.role !== "owner")) || m.user_id === me ? (
                    <Form method="post" className="inline">
                      <Hidden intent="member-remove" user_id={m.user_id} />
                      <Submit
                        className="danger"
                        when={["user_id", m.user_id]}
                        pending={m.user_id === me ? "Leaving…" : "Removing…"}
                        confirm={m.user_id === me ? "Leave this project? You lose access to it." : `Remove ${m.email} from this project?`}
                      >
                        {m.user_id === me ? "Leave" : "Remove"}
                      </Submit>
                    </Form>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {manager ? (
          <Form method="post" className="row" style={{ marginTop: 12 }} ref={memberForm}>
            <Hidden intent="member-add" />
            <input name="email" type="email" placeholder="teammate@studio.com" required aria-label="Email" />
            <select name="role" defaultValue="member" aria-label="Role">
              {role === "owner" ? <option value="owner">owner</option> : null}
              <option value="admin">admin</option>
              <option value="member">member</option>
            </select>
            <Submit pending="Adding…">Add member</Submit>
          </Form>
        ) : null}
        <p className="muted small">Owners manage everything; admins manage keys, members and share links; members read and triage.</p>
      </section>

      <GroupingRulesPanel
        rules={groupingRules.data as unknown as GroupingRuleView[]}
        max={groupingRules.max}
        manager={manager}
        result={result}
        editing={(groupingRules.data.find((r) => r.id === editRule) as unknown as GroupingRuleView | undefined) ?? null}
        now={now}
        base={base}
      />

      <section className="panel">
        <h2 style={{ marginTop: 0 }}>Share links</h2>
        <ActionMessage data={result} intent="share-revoke" />
        {links.length === 0 ? (
          <p className="muted">No share links yet. Create them from an issue's page.</p>
        ) : (
          <table>
            <thead><tr><th>Issue</th><th>Role</th><th>Created by</th><th>Expires</th><th>State</th><th /></tr></thead>
            <tbody>
              {links.map((l) => {
                const expired = l.expires_at !== null && new Date(l.expires_at) <= new Date(now);
                return (
                  <tr key={l.id}>
                    <td><Link to={`${base}/issues/${l.group_id}`}>{l.title.slice(0, 80) || l.group_id}</Link></td>
                    <td>{l.role}</td>
                    <td className="small">{l.created_by_email ?? "—"}</td>
                    <td className="small">{l.expires_at ? <At d={l.expires_at} /> : "never"}</td>
                    <td className="small">{l.revoked_at ? "revoked" : expired ? "expired" : "active"}</td>
                    <td>
                      {!l.revoked_at && !expired && (manager || l.created_by === me) ? (
                        <Form method="post" className="inline">
                          <Hidden intent="share-revoke" link_id={l.id} />
                          <Submit className="danger" when={["link_id", l.id]} pending="Revoking…" confirm="Revoke this share link? Anyone using it loses access at once.">Revoke</Submit>
                        </Form>
                      ) : null}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      </section>

      <TwoFactorRequirementPanel value={twoFactor.two_factor_required} manager={manager} result={result} />

      {manager ? (
        <section className="panel">
          <h2 style={{ marginTop: 0 }}>Project</h2>
          <ActionMessage data={result} intent="rename" />
          <Form method="post" className="row">
            <Hidden intent="rename" />
            <input name="name" defaultValue={project.name} maxLength={200} required aria-label="Project name" />
            <Submit pending="Renaming…">Rename</Submit>
          </Form>
          {role === "owner" ? (
            <>
              <h2>Delete project</h2>
              <p className="muted small">Deletes the project, its keys and every stored event, issue and chart. This cannot be undone.</p>
              <ActionMessage data={result} intent="delete-project" />
              <Form method="post" className="row">
                <Hidden intent="delete-project" />
                <input name="confirm" placeholder={`Type "${project.name}" to confirm`} aria-label="Confirm project name" />
                <Submit className="danger" pending="Deleting…">Delete project</Submit>
              </Form>
            </>
          ) : null}
        </section>
      ) : null}
    </>
  );
}
