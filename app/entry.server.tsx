/**
 * The build's server entry: renders pages (Remix's default Node entry, condensed: bots and crawlers
 * get the whole document at once, browsers a stream from the shell on) and hands the process what it
 * takes from the app (see process.server.ts), so one process holds one copy of every app module.
 */
import { PassThrough } from "node:stream";
import type { EntryContext, HandleDataRequestFunction, HandleErrorFunction } from "@remix-run/node";
import { createReadableStreamFromReadable } from "@remix-run/node";
import { isRouteErrorResponse, RemixServer } from "@remix-run/react";
import { isbot } from "isbot";
import { renderToPipeableStream } from "react-dom/server";
import { isDatabaseUnavailable } from "../db/client.js";
import { RETRY_AFTER_SECONDS } from "./http.server";
import { log } from "../log/logger.js";

export * from "./process.server";

const ABORT_DELAY = 5_000;

/** Pages whose loader or action failed because the database did not answer in time (see handleError). */
const unavailable = new WeakSet<Request>();

/**
 * Remix's default (log what a loader or action threw, unless the client went away), except that a
 * database past the request's budget, a lost connection or a statement timeout is remembered, not
 * logged: the page answers 503 with Retry-After, as the API does, instead of 500.
 */
export const handleError: HandleErrorFunction = (error, { request }) => {
  if (isDatabaseUnavailable(error)) {
    unavailable.add(request);
    return;
  }
  // an internal error response (a 405, a 404 of no route) carries the error that made it
  if (!request.signal.aborted) log.error({ err: isRouteErrorResponse(error) && (error as { error?: unknown }).error ? (error as { error?: unknown }).error : error }, "[page] unexpected error");
};

/**
 * The same 503 for a client-side navigation or form submission (`.data`): its turbo-stream body is
 * kept, so the page's error boundary still shows, and Retry-After tells a retrying client when.
 */
export const handleDataRequest: HandleDataRequestFunction = (response, { request }) => {
  if (response.status !== 500 || !unavailable.has(request)) return response;
  const headers = new Headers(response.headers);
  headers.set("Retry-After", String(RETRY_AFTER_SECONDS));
  return new Response(response.body, { status: 503, statusText: "Service Unavailable", headers });
};

export default function handleRequest(request: Request, responseStatusCode: number, responseHeaders: Headers, remixContext: EntryContext) {
  if (responseStatusCode === 500 && unavailable.has(request)) {
    responseStatusCode = 503;
    responseHeaders.set("Retry-After", String(RETRY_AFTER_SECONDS));
  }
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
        if (shellRendered) log.error({ err: error }, "[page] rendering failed");
      },
    });
    setTimeout(abort, ABORT_DELAY);
  });
}
