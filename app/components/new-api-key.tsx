import { CopyButton } from "./copy-button";
import { serverScript, UrlWarning } from "./onboarding";
import type { UrlProblem } from "~/sdk/onboarding.server";

/**
 * A key that was just created, shown this once: the key itself and the server Script with it filled
 * in, each with a Copy button, so the next step is a paste into Studio.
 */
export function NewApiKey({ apiKey, url, problem }: { apiKey: string; url: string; problem: UrlProblem }) {
  const script = serverScript(url, apiKey);
  return (
    <div data-testid="new-key">
      <div className="row">
        <code className="secret" data-testid="api-key">{apiKey}</code>
        <CopyButton text={apiKey} label="Copy the API key" />
      </div>
      <div className="row between" style={{ marginTop: 16 }}>
        <strong>Server Script with this key</strong>
        <CopyButton text={script} label="Copy the server script" />
      </div>
      <p className="small">
        Paste it into a Script in <code>ServerScriptService</code>. The SDK goes into <code>ReplicatedStorage</code> as a
        ModuleScript named <code>RobloxMonitor</code>: <a href="/sdk/RobloxMonitor.luau" download="RobloxMonitor.luau">download RobloxMonitor.luau</a>.
      </p>
      <pre data-testid="new-key-script">{script}</pre>
      <UrlWarning url={url} problem={problem} />
      <p className="muted small">
        Storing the key in a Roblox secret instead keeps it out of the place file: <code>apiKeySecret = &quot;roblox_monitor&quot;</code>{" "}
        (see the README).
      </p>
    </div>
  );
}
