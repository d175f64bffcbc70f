/**
 * The build's server entry: renders pages (Remix's default Node entry, condensed: bots and crawlers
 * get the whole document at once, browsers a stream from the shell on) and hands the process what it
 * takes from the app (see process.server.ts), so one process holds one copy of every app module.
 */
import { PassThrough } from "node:stream";
import type { EntryContext } from "@remix-run/node";
import { createReadableStreamFromReadable } from "@remix-run/node";
import { RemixServer } from "@remix-run/react";
import { isbot } from "isbot";
import { renderToPipeableStream } from "react-dom/server";

export * from "./process.server";

const ABORT_DELAY = 5_000;

export default function handleRequest(request: Request, responseStatusCode: number, responseHeaders: Headers, remixContext: EntryContext) {
  const whole = isbot(request.headers.get("user-agent") ?? "") || remixContext.isSpaMode;
  return new Promise<Response>((resolve, reject) => {
    let shellRendered = false;
    const ready = () => {
      shellRendered = true;
      const body = new PassThrough();
      responseHeaders.set("Content-Type", "text/html");
      resolve(new Response(createReadableStreamFromReadable(body), { headers: responseHeaders, status: responseStatusCode }));
      pipe(body);
    };
    const { pipe, abort } = renderToPipeableStream(<RemixServer context={remixContext} url={request.url} abortDelay={ABORT_DELAY} />, {
      onAllReady: whole ? ready : undefined,
      onShellReady: whole ? undefined : ready,
      onShellError: reject,
      onError(error: unknown) {
        responseStatusCode = 500;
        // errors of the shell reject above and are logged by Remix; later ones only here
        if (shellRendered) console.error(error);
      },
    });
    setTimeout(abort, ABORT_DELAY);
  });
}
