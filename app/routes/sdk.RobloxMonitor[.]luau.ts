import { sdkBundle } from "~/sdk/files.server";

/** GET /sdk/RobloxMonitor.luau: the bundled SDK, one ModuleScript source to paste into Studio. */
export const loader = () =>
  new Response(sdkBundle(), {
    headers: {
      "content-type": "text/plain; charset=utf-8",
      "content-disposition": 'inline; filename="RobloxMonitor.luau"',
      "cache-control": "public, max-age=300",
    },
  });
