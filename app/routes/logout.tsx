import { redirect, type ActionFunctionArgs } from "@remix-run/node";
import { assertSameOrigin } from "~/accounts/csrf.server";
import { endSession } from "~/accounts/sessions.server";
import { pageAct } from "~/dashboard/page.server";

export const loader = () => redirect("/");

/** Deletes the session server-side and clears the cookie. */
export const action = ({ request, context }: ActionFunctionArgs) =>
  pageAct("logout", async () => {
    assertSameOrigin(request, context.services.config.publicUrl);
    throw redirect("/login", { headers: { "Set-Cookie": await endSession(context.services, request) } });
  });
