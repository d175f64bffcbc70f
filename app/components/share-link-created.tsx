import { CopyButton } from "./copy-button";
import { UrlWarning } from "./onboarding";
import type { UrlProblem } from "~/sdk/onboarding.server";

/**
 * A share link just created, shown this once: the link with a Copy button and, when the service's
 * address is loopback or private (no PUBLIC_URL, the page opened on localhost), the same warning the
 * API key and DSN panels give, since nobody on another machine can open such a link.
 */
export function ShareLinkCreated({ url, problem }: { url: string; problem: UrlProblem | undefined }) {
  return (
    <div className="share-created" data-testid="share-created">
      <p className="small" style={{ margin: "0 0 4px" }}>Copy it now, it is shown only once:</p>
      <div className="row dsn-row">
        <code className="dsn" data-testid="share-url">{url}</code>
        <CopyButton text={url} label="Copy the share link" />
      </div>
      {problem === "loopback" || problem === "private" ? (
        <UrlWarning url={new URL(url).origin} problem={problem} who="a teammate on another machine" />
      ) : null}
    </div>
  );
}
