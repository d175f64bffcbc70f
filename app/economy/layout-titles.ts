/**
 * The starting layouts' ids and titles, in the order they are offered: shared by the server's
 * layouts (layouts.server.ts) and the pages that name them in the browser (the map editor).
 */
export const LAYOUT_TITLES = [
  { id: "profilestore", title: "ProfileStore or ProfileService" },
  { id: "flat", title: "DataStore2-style flat" },
  { id: "slots", title: "Save slots" },
  { id: "seed", title: "RP characters" },
] as const;

export type LayoutId = (typeof LAYOUT_TITLES)[number]["id"];

export const layoutTitle = (id: string | null | undefined) => LAYOUT_TITLES.find((l) => l.id === id)?.title ?? null;
