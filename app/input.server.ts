import type { z } from "zod";
import { invalidPayload, issuePath } from "~/http.server";
import { assertStorableText, clipNesting, tooDeep } from "~/text.server";

/**
 * Reading request input: a JSON body through a zod schema, a path id as a UUID. Every area that
 * takes input from a request reads it through these, so a bad body or id answers the same way
 * everywhere.
 */

/**
 * zod input -> value, or the 400 with details naming each bad field (text PostgreSQL cannot store
 * and nesting past MAX_BODY_DEPTH included). The schema sees the body clipped to that depth, so no
 * refinement or serializer recurses without bound, and a too deep field is named by its own rule.
 */
export function parseOr400<T extends z.ZodType>(schema: T, input: unknown, what = "The request body"): z.output<T> {
  const { value, cut } = clipNesting(input);
  const r = schema.safeParse(value);
  if (r.success) {
    if (cut) throw tooDeep(cut, what);
    assertStorableText(r.data, what);
    return r.data;
  }
  const details = r.error.issues.map((i) => ({ path: issuePath(i.path), message: i.message }));
  const first = details[0];
  throw invalidPayload(`${what} is invalid: ${first.path} ${first.message}.`, details);
}

const UUID_RE = /^\{?([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\}?$/i;
/** A path id that is not a UUID cannot name anything: callers answer 404. */
export const asUuid = (s: string | undefined) => UUID_RE.exec(s ?? "")?.[1].toLowerCase();
