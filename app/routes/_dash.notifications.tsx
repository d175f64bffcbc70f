import type { LoaderFunctionArgs, MetaFunction } from "@remix-run/node";
import { useLoaderData } from "@remix-run/react";
import { requirePageUser } from "~/accounts/sessions.server";
import { myNotices, readMyNotices } from "~/team/notices.server";
import { Notices } from "~/components/notices";

export const meta: MetaFunction = () => [{ title: "Assigned to you · Roblox Monitor" }];

/** "Assigned to you": opening the list reads it (those unread until now stay marked on this view). */
export const loader = async ({ request, context }: LoaderFunctionArgs) => {
  const user = await requirePageUser(context.services, request);
  const notices = await myNotices(context.services.sql, user);
  await readMyNotices(context.services.sql, user);
  return { ...notices, now: new Date() };
};

export default function Notifications() {
  const { data, now } = useLoaderData<typeof loader>();
  return <Notices notices={data} now={now} />;
}
