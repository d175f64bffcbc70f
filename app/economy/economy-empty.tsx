/**
 * The economy overview before any player is stored: how to push each player's profile from the game
 * with the SDK (`Monitor.economy.push` from Players.PlayerRemoving), what the project's currency map
 * reads, a link to it, and the HTTP endpoint second, for other senders.
 */
import { Link } from "@remix-run/react";

export type EconomySetup = {
  layout: { id: string; title: string } | null;
  /** the Luau line that pushes a leaving player's profile in this layout */
  push: string;
  currencies: { key: string; name: string; paths: string[] }[];
  match: string[];
};

function snippet(push: string): string {
  const head = [
    'local Players = game:GetService("Players")',
    'local ReplicatedStorage = game:GetService("ReplicatedStorage")',
    'local Monitor = require(ReplicatedStorage:WaitForChild("RobloxMonitor"))',
    "",
    "Players.PlayerRemoving:Connect(function(player)",
  ];
  const body = push.includes("profile.")
    ? ["\tlocal profile = Profiles[player] -- the loaded profile", "\tif profile ~= nil then", `\t\t${push}`, "\tend"]
    : [`\t${push}`];
  return [...head, ...body, "end)"].join("\n");
}

export function EconomyEmpty({ setup, settingsUrl, canManage }: { setup: EconomySetup; settingsUrl: string; canManage: boolean }) {
  const mapLink = canManage ? (
    <Link to={settingsUrl} data-testid="economy-empty-map-link">Economy → Settings</Link>
  ) : (
    <>Economy → Settings (owners and admins)</>
  );
  return (
    <section className="panel economy-empty" data-testid="economy-empty" aria-labelledby="economy-empty-title">
      <h3 id="economy-empty-title" style={{ marginTop: 0 }}>No player balances yet</h3>
      <p>
        The economy pages fill up as the game pushes each player&rsquo;s saved profile when they leave. With the Roblox SDK
        initialised (the project&rsquo;s server script), add <code>Monitor.economy.push</code> to <code>Players.PlayerRemoving</code>,
        before the profile&rsquo;s session ends:
      </p>
      <pre data-testid="economy-empty-snippet"><code>{snippet(setup.push)}</code></pre>
      <p className="muted small">
        A ProfileStore or ProfileService profile may also be pushed whole: the SDK sends its <code>Data</code>. Pushes are batched
        and sent in the background; each one is read through the project&rsquo;s currency map.
      </p>
      <h4>What the currency map reads</h4>
      <p data-testid="economy-empty-layout">
        {setup.layout ? <>This project uses the <strong>{setup.layout.title}</strong> layout:</> : <>This project&rsquo;s map reads:</>}
      </p>
      <ul className="economy-empty-currencies">
        {setup.currencies.map((c) => (
          <li key={c.key}>
            <strong>{c.name}</strong> from{" "}
            {c.paths.map((p, i) => (
              <span key={p}>{i > 0 ? " + " : ""}<code>{p}</code></span>
            ))}
          </li>
        ))}
      </ul>
      {setup.match.length ? (
        <p className="small">
          A profile is read only when it has a table at{" "}
          {setup.match.map((p, i) => (
            <span key={p}>{i > 0 ? " or " : ""}<code>{p}</code></span>
          ))}
          ; any other profile is skipped.
        </p>
      ) : null}
      <p>
        If the game saves its currencies elsewhere, change the map in {mapLink} and preview it on a profile first: a profile
        the map does not read is skipped, not stored.
      </p>
      <p className="small" data-testid="economy-empty-flows">
        To have every gain explained, also report what moves a balance as it happens:{" "}
        <code>Monitor.economy.flow(player, "{setup.currencies[0]?.key ?? "coins"}", 50, "quest")</code> for a source,
        a negative amount for a sink (<code>"shop"</code>). A gain the reported flows do not explain is then flagged.
      </p>
      <p className="muted small">
        Other senders (a backfill, a server outside Roblox) can post the same profiles to <code>POST /api/economy/ingest</code> with
        the project&rsquo;s API key in <code>x-api-key</code>: <code>{'{"players":[{"user_id":123,"profile":{…}}]}'}</code>. Players who
        have not left since can be read from the data store by the Open Cloud scan, also in Economy → Settings.
      </p>
    </section>
  );
}
