/**
 * Versions in version order, as people read them: Roblox place versions are whole numbers ("9"
 * before "10"), game versions are often dotted ("1.2.9" before "1.2.10"). A version is cut into runs
 * of digits and runs of other characters; digit runs compare as numbers (of any length, so no
 * overflow), other runs as text, a leading "v" before a digit is ignored ("v1.2" = "1.2"). When one
 * version is the other plus more, the longer one is later ("1.2" before "1.2.1"), except that a
 * suffix starting with "-" marks a pre-release ("1.2.0-beta" before "1.2.0"), as in SemVer. Versions
 * that compare equal this way ("01" and "1") fall back to plain text order, so the order is total.
 */
export function compareVersions(a: string, b: string): number {
  const x = chunks(a);
  const y = chunks(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const c = compareChunk(x[i], y[i]);
    if (c !== 0) return c;
  }
  if (x.length !== y.length) {
    const longerIsA = x.length > y.length;
    const rest = (longerIsA ? x : y)[Math.min(x.length, y.length)];
    const longerIsLater = !rest.startsWith("-");
    return longerIsA === longerIsLater ? 1 : -1;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Newest version first: the order of the dashboard's version tables and pick-lists. */
export const byVersionDesc = <T extends { version: string }>(rows: readonly T[]): T[] => [...rows].sort((p, q) => compareVersions(q.version, p.version));

const chunks = (v: string) => v.trim().replace(/^[vV](?=\d)/, "").match(/\d+|\D+/g) ?? [];

const isDigits = (s: string) => s.charCodeAt(0) >= 48 && s.charCodeAt(0) <= 57;

function compareChunk(p: string, q: string): number {
  const pd = isDigits(p);
  const qd = isDigits(q);
  // a number sorts before text at the same place ("1.2.3" before "1.2.x")
  if (pd !== qd) return pd ? -1 : 1;
  if (pd) {
    const ps = p.replace(/^0+(?=\d)/, "");
    const qs = q.replace(/^0+(?=\d)/, "");
    if (ps.length !== qs.length) return ps.length - qs.length;
    return ps < qs ? -1 : ps > qs ? 1 : 0;
  }
  return p < q ? -1 : p > q ? 1 : 0;
}
