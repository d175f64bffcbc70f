import { cut, issueEmailParts, type Alert, type EmailParts } from "./payloads.server";
import { economyEmailParts, type EconomyAlert } from "./economy-payloads.server";
import { healthEmailParts, type HealthAlert } from "./health-payloads.server";

/**
 * What an email channel sends for each alert kind (issue, regression, spike, economy, health, test):
 * a subject, a plain-text body and an HTML body carrying the same words. Every piece of text from a
 * game (messages, player names, stack traces) is HTML-escaped in the HTML body, and the subject is one
 * line, so an error message can neither add markup or links nor add mail headers.
 */
export type EmailMessage = { subject: string; text: string; html: string };

const SUBJECT_MAX = 200;
const DESCRIPTION_MAX = 4000;
const CODE_MAX = 8000;

/** Text for HTML element content and attribute values. */
export const escapeHtml = (s: string) =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");

/** One line: control characters and line breaks become spaces. */
const oneLine = (s: string) => s.replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, " ").trim();

export function emailFromParts(p: EmailParts): EmailMessage {
  const subject = cut(oneLine(p.headline), SUBJECT_MAX);
  const description = cut(p.description, DESCRIPTION_MAX);
  const code = p.code ? cut(p.code, CODE_MAX) : null;
  const link = p.url ? `Open in Roblox Monitor: ${p.url}` : "Set PUBLIC_URL for a link to the dashboard.";
  const text = [
    subject,
    "",
    description,
    "",
    ...p.facts.map((f) => `${f.name}: ${f.value}`),
    ...(code ? ["", "Stack trace:", code] : []),
    "",
    link,
    "",
    `-- ${p.footer}`,
  ].join("\n");
  const para = (s: string) => escapeHtml(s).replace(/\n/g, "<br>");
  const html = [
    `<!doctype html><html><body style="font-family:system-ui,sans-serif;font-size:14px;color:#1f2328">`,
    `<h2 style="font-size:16px;margin:0 0 12px">${escapeHtml(subject)}</h2>`,
    `<p>${para(description)}</p>`,
    `<table style="border-collapse:collapse">`,
    ...p.facts.map(
      (f) => `<tr><th style="text-align:left;padding:2px 12px 2px 0;vertical-align:top">${escapeHtml(f.name)}</th><td style="padding:2px 0">${para(f.value)}</td></tr>`,
    ),
    `</table>`,
    ...(code ? [`<pre style="background:#f6f8fa;padding:8px;overflow:auto;white-space:pre-wrap">${escapeHtml(code)}</pre>`] : []),
    p.url ? `<p><a href="${escapeHtml(p.url)}">Open in Roblox Monitor</a></p>` : `<p style="color:#656d76">Set PUBLIC_URL for a link to the dashboard.</p>`,
    `<p style="color:#656d76;font-size:12px">${escapeHtml(p.footer)}</p>`,
    `</body></html>`,
  ].join("\n");
  return { subject, text, html };
}

/** The email of any alert. */
export function buildEmail(alert: Alert | EconomyAlert | HealthAlert): EmailMessage {
  if ("health" in alert) return emailFromParts(healthEmailParts(alert));
  if ("event" in alert) return emailFromParts(economyEmailParts(alert));
  return emailFromParts(issueEmailParts(alert));
}
