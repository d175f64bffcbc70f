import type { ActionFunctionArgs, LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { Form, Link, useActionData, useLoaderData } from "@remix-run/react";
import { requirePageUser } from "~/accounts/sessions.server";
import { createProject } from "~/team/projects.server";
import { baseUrl } from "~/team/api.server";
import { formObject, pageAct } from "~/dashboard/page.server";
import { ActionMessage, Submit } from "~/components/ui";
import { NewApiKey } from "~/components/new-api-key";
import { urlProblem } from "~/sdk/onboarding.server";
import { LAYOUT_LIST } from "~/economy/layouts.server";
import { LayoutChoice } from "~/economy/layout-choice";

/**
 * The form preselects ProfileStore, the layout most new games save with; the Team API and the CLI
 * keep the seed's RP layout as their default (docs/economy.md, "Setting up").
 */
const PRESELECTED = "profilestore";

export const meta: MetaFunction = () => [{ title: "New project · Roblox Monitor" }];

export const loader = async ({ request, context }: LoaderFunctionArgs) => {
  await requirePageUser(context.services, request);
  return {
    layouts: LAYOUT_LIST.map((l) => ({
      id: l.id,
      title: l.title,
      description: l.description,
      sample: JSON.stringify(l.sample),
      currencies: l.map.currencies.map((c) => ({ name: c.name, paths: c.paths })),
    })),
  };
};

/** Creates the project and shows its first API key, once: only a hash is kept. */
export const action = ({ request, context }: ActionFunctionArgs) =>
  pageAct("create", async () => {
    const { services } = context;
    const user = await requirePageUser(services, request);
    const { project, api_key } = await createProject(services.sql, user, formObject(await request.formData()));
    const base = baseUrl(services, request);
    return { ok: true as const, project: { id: project.id, name: project.name }, apiKey: api_key, base, problem: urlProblem(base, Boolean(services.config.publicUrl)) };
  }, { name: "Name", economy_layout: "Starting layout" });

export default function NewProject() {
  const result = useActionData<typeof action>();
  const { layouts } = useLoaderData<typeof loader>();
  if (result && "apiKey" in result) {
    return (
      <div className="panel">
        <h1>{result.project.name} is ready</h1>
        <p>This is the project's API key. <strong>It is shown only this once</strong>; copy it into your game's server script now (you can create more keys in the settings later).</p>
        <NewApiKey apiKey={result.apiKey} url={result.base} problem={result.problem} />
        <p>
          <Link className="button primary" to={`/projects/${result.project.id}`}>Open the project</Link>
        </p>
      </div>
    );
  }
  return (
    <div className="panel stack" style={{ maxWidth: 640 }}>
      <h1>New project</h1>
      <p className="muted">One project per game (or per experience you want to track separately).</p>
      <ActionMessage data={result} />
      <Form method="post">
        <label htmlFor="name">Name</label>
        <input id="name" name="name" required maxLength={200} placeholder="My Roblox game" />
        <LayoutChoice layouts={layouts} preselected={PRESELECTED} />
        <p>
          <Submit className="primary" pending="Creating…">Create project</Submit>
        </p>
      </Form>
    </div>
  );
}
