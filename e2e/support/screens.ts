/**
 * Where the specs save their screenshots (390 and 1280 px, light and dark) to be looked at:
 * SCREENS_DIR, by default e2e/artifacts/screens (ignored by git).
 */
export const SCREENS = process.env.SCREENS_DIR ?? "e2e/artifacts/screens";

/** The path of one screenshot, `name` without its extension. */
export const screen = (name: string) => `${SCREENS}/${name}.png`;
