import { dictionary } from "@zxcvbn-ts/language-common";

/**
 * The 10,000 most common passwords that are long enough to pass the length rule, from the ranked
 * list zxcvbn-ts ships (MIT; built from leaked-password frequency data). Shorter ones are refused by
 * length already, so taking the top 10,000 of those that remain keeps the list useful.
 */
const MIN_LENGTH = 8;
const TOP = 10_000;

let list: Set<string> | undefined;
const common = () =>
  (list ??= new Set(dictionary["passwords-common"].filter((p) => p.length >= MIN_LENGTH).slice(0, TOP).map((p) => p.toLowerCase())));

/** True when the password (compared without case and surrounding spaces) is one of the most common. */
export const isCommonPassword = (password: string) => common().has(password.trim().toLowerCase());

export const commonPasswordCount = () => common().size;
