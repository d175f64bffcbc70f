import { handle, notFound } from "~/http.server";

/** Any /api path no route claims: the JSON 404, for every method. */
const missing = ({ request }: { request: Request }) =>
  handle(async () => {
    throw notFound(`No API endpoint at ${request.method} ${new URL(request.url).pathname}.`);
  });

export const loader = missing;
export const action = missing;
