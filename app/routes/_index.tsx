import { redirect, type LoaderFunctionArgs } from "@remix-run/node";
import { currentUser } from "~/accounts/sessions.server";
import { setupNeeded } from "~/accounts/users.server";

/** The front door: first run goes to setup, a signed-in user to their projects, anyone else to sign-in. */
export const loader = async ({ request, context }: LoaderFunctionArgs) => {
  const { services } = context;
  if (await setupNeeded(services.sql)) throw redirect("/setup");
  throw redirect((await currentUser(services, request)) ? "/projects" : "/login");
};
