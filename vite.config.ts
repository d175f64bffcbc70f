import { vitePlugin as remix } from "@remix-run/dev";
import { defineConfig } from "vite";

declare module "@remix-run/node" {
  interface Future {
    v3_singleFetch: true;
  }
}

export default defineConfig(({ isSsrBuild }) => ({
  // the server bundle runs on Node 20: class fields and the like stay native instead of lowered
  // (a lowered field is an Object.defineProperty per instance, on every request's objects)
  build: isSsrBuild ? { target: "node20" } : {},
  plugins: [
    !process.env.VITEST &&
      remix({
        future: {
          v3_fetcherPersist: true,
          v3_relativeSplatPath: true,
          v3_throwAbortReason: true,
          v3_singleFetch: true,
          v3_lazyRouteDiscovery: true,
        },
      }),
  ],
  resolve: { alias: { "~": new URL("./app", import.meta.url).pathname } },
  server: { port: 3000 },
}));
