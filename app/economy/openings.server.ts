import { addDecimals } from "./profile.server";

const negate = (s: string) => (s.startsWith("-") ? s.slice(1) : s === "0" ? s : `-${s}`);

/**
 * The money supply's days split for the overview: what the players already there changed each day
 * (the day's change without the new players' opening balances, exact), and what the new players of
 * the whole window brought.
 */
export function openingsView(days: { change: string; opening: string; newcomers: number }[]) {
  return {
    others: days.map((d) => addDecimals(d.change, negate(d.opening))),
    opening: addDecimals("0", ...days.map((d) => d.opening)),
    newcomers: days.reduce((a, d) => a + d.newcomers, 0),
  };
}
