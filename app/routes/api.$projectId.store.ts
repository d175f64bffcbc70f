import type { ActionFunctionArgs, LoaderFunctionArgs } from "@remix-run/node";
import { sentryIngest } from "~/sentry/ingest.server";

/** Sentry protocol: `POST /api/:project_id/store/` from any Sentry SDK (see docs/sentry.md). */
export const action = ({ request, params, context }: ActionFunctionArgs) => sentryIngest(context.services, request, params.projectId, "store");
export const loader = ({ request, params, context }: LoaderFunctionArgs) => sentryIngest(context.services, request, params.projectId, "store");
