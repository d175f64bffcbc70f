import { useEffect, useRef } from "react";
import { Link, useRevalidator } from "@remix-run/react";
import { CopyButton } from "./copy-button";

type Props = {
  url: string;
  problem: "unset" | "loopback" | "private" | null;
  firstIssueId: string | null;
  projectPath: string;
};

const POLL_MS = 3000;

/**
 * The server Script a developer pastes into ServerScriptService, with the project's API key when the
 * page knows it (right after it was created), else a placeholder to replace. `sendInStudio` is on so
 * that the first Studio play test already sends (its events carry environment "studio").
 */
export function serverScript(url: string, apiKey?: string) {
  return `-- ServerScriptService > Script "RobloxMonitor"
local ReplicatedStorage = game:GetService("ReplicatedStorage")
local Monitor = require(ReplicatedStorage:WaitForChild("RobloxMonitor"))

Monitor.init({
	url = "${url}",
	apiKey = "${apiKey ?? "YOUR_API_KEY"}", -- or apiKeySecret = "roblox_monitor" (a Roblox secret)
	sendInStudio = true, -- also send from Studio play tests
})`;
}

const CLIENT_SCRIPT = `-- StarterPlayer > StarterPlayerScripts > LocalScript
local ReplicatedStorage = game:GetService("ReplicatedStorage")
require(ReplicatedStorage:WaitForChild("RobloxMonitor")).startClient()`;

/**
 * Why Roblox servers (or `who` else: a teammate opening a share link) may not reach the service
 * address in a script, DSN or link, or nothing when they can.
 */
export function UrlWarning({ url, problem, who = "a Roblox game server" }: { url: string; problem: Props["problem"]; who?: string }) {
  if (!problem) return null;
  return (
    <p className="alert error" role="note" data-testid="url-warning">
      {problem === "unset" ? (
        <>
          <code>PUBLIC_URL</code> is not set, so this is the address this page was opened with. Set <code>PUBLIC_URL</code> to
          the service's public https address if Roblox servers reach it elsewhere.
        </>
      ) : (
        <>
          <code>{url}</code> is a {problem === "loopback" ? "loopback" : "private network"} address, which {who} cannot
          reach. Set <code>PUBLIC_URL</code> to the service's public https address (behind a proxy or a tunnel).
        </>
      )}
    </p>
  );
}

/**
 * Shown on a project without events: how to install the Roblox SDK, with a ready-to-paste server
 * Script. It polls while waiting and turns into a link to the first issue when it arrives.
 */
export function Onboarding({ url, problem, firstIssueId, projectPath }: Props) {
  const revalidator = useRevalidator();
  const revalidatorRef = useRef(revalidator);
  revalidatorRef.current = revalidator;
  useEffect(() => {
    if (firstIssueId) return;
    const timer = setInterval(() => {
      const r = revalidatorRef.current;
      if (r.state === "idle" && document.visibilityState === "visible") r.revalidate();
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [firstIssueId]);
  const script = serverScript(url);
  return (
    <section className="panel onboarding" aria-labelledby="onboarding-title" data-testid="onboarding">
      <h2 id="onboarding-title" style={{ marginTop: 0 }}>{firstIssueId ? "Roblox is sending events" : "No events yet: send them from Roblox"}</h2>
      <ol className="steps">
        <li>
          Add the SDK as a ModuleScript named <code>RobloxMonitor</code> in <code>ReplicatedStorage</code>:{" "}
          <a href="/sdk/RobloxMonitor.luau" download="RobloxMonitor.luau">download RobloxMonitor.luau</a> and paste it in, or install
          it with Wally or Rojo (see the README).
        </li>
        <li>
          In Studio, open <strong>Game Settings → Security</strong> and turn on <strong>Allow HTTP Requests</strong>.
        </li>
        <li>
          <div className="row between">
            <span>
              Paste this Script into <code>ServerScriptService</code> and replace <code>YOUR_API_KEY</code> with the key shown when
              the project was created (or make a new one under <Link to={`${projectPath}/settings`}>Settings</Link>):
            </span>
            <CopyButton text={script} label="Copy the server script" />
          </div>
          <pre data-testid="server-script">{script}</pre>
          <UrlWarning url={url} problem={problem} />
        </li>
        <li>
          Optional, for client errors: a LocalScript in <code>StarterPlayerScripts</code>:
          <div className="row between">
            <pre style={{ flex: 1 }}>{CLIENT_SCRIPT}</pre>
            <CopyButton text={CLIENT_SCRIPT} label="Copy the client script" />
          </div>
        </li>
      </ol>
      <p className="waiting" aria-live="polite" data-testid="first-event">
        {firstIssueId ? (
          <>
            First event received: <Link to={`${projectPath}/issues/${firstIssueId}`}>open the first issue</Link>
          </>
        ) : (
          <>
            <span className="pulse" aria-hidden="true" /> Waiting for the first event… Play a test in Studio (the script
            above sets <code>sendInStudio = true</code>) or start a live server.
          </>
        )}
      </p>
    </section>
  );
}
