import { Link } from "@remix-run/react";

/** The Account page's line about two-factor authentication, linking to its own page. */
export function TwoFactorSummary({ enabled, left }: { enabled: boolean; left: number }) {
  return (
    <>
      <h2>Two-factor authentication</h2>
      <p data-testid="two-factor-summary">
        {enabled ? <>On ({left} of 10 recovery codes left). </> : <>Off. </>}
        <Link to="/account/two-factor">{enabled ? "Manage" : "Set up two-factor"}</Link>
      </p>
    </>
  );
}
