/**
 * What the process (server.ts) takes from the app. It reaches these through the build's entry module
 * (entry.server.tsx re-exports them), never from source, so every app module is loaded once: the
 * routes and the process share one ApiError class, one Services, one set of caches.
 */
export { createServices, forRequest, ownWritesCookie, type Services } from "./services.server";
export { assertSameOrigin, isMutation } from "./accounts/csrf.server";
export { ApiError, admitPageForm } from "./http.server";
/** the Fetch objects' fast paths the Express layer uses (see server/api-dispatch.ts) */
export { JSON_HEADERS, JSON_TEXT, NODE_BODY, NODE_TARGET, UNEXPECTED, payloadTooLarge } from "./http.server";
export { startJobs, stopJobs } from "../jobs/boss";
export { startAlertWorker } from "../jobs/alerts";
export { startEconomyAlertWorker } from "../jobs/economy-alerts";
export { startHealthAlertWorker } from "../jobs/health-alerts";
