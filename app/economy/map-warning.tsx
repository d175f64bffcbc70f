/**
 * A currency map that would skip every profile, said plainly: against the last pushed profile
 * (its player, when, and why it would be skipped) or, before any push, by its match paths.
 */
type Warning = { kind: "last_pushed" | "match_paths"; message: string };

export function MapWarning({ warning, saved, testId = "map-warning" }: { warning: Warning; saved?: boolean; testId?: string }) {
  return (
    <div className="alert note map-warning" role="alert" data-testid={testId} data-kind={warning.kind}>
      <strong>{saved ? "Saved map: " : "Before saving: "}</strong>
      {warning.message}
    </div>
  );
}
