import type { MetaFunction } from "@remix-run/node";

export const meta: MetaFunction = () => [{ title: "Roblox Monitor" }];

export default function Index() {
  return (
    <main style={{ maxWidth: 720, margin: "48px auto", padding: "0 16px", lineHeight: 1.5 }}>
      <h1>Roblox Monitor</h1>
      <p>Error and economy monitoring for Roblox games. The service is running.</p>
      <ul>
        <li>
          Ingest: <code>POST /api/ingest</code> with your project's <code>x-api-key</code>
        </li>
        <li>
          Query: <code>GET /api/v1/errors</code>, <code>GET /api/v1/stats</code>
        </li>
        <li>
          Health: <a href="/api/ingest">/api/ingest</a>
        </li>
      </ul>
    </main>
  );
}
