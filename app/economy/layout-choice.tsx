/**
 * The new-project form's choice of a starting economy layout: each with one line saying which games
 * save that way, the currencies it reads and a profile as the game pushes it. Changeable later in
 * Economy → Settings.
 */
export type LayoutOption = {
  id: string;
  title: string;
  description: string;
  /** a sample profile, as JSON */
  sample: string;
  currencies: { name: string; paths: string[] }[];
};

export function LayoutChoice({ layouts, preselected }: { layouts: LayoutOption[]; preselected: string }) {
  return (
    <fieldset className="choices layout-choices" data-testid="layout-choice">
      <legend>How does the game save a player&rsquo;s currencies?</legend>
      <p className="muted small">
        The economy pages read each pushed profile through a currency map; pick the layout closest to the game&rsquo;s.
        You can edit the map later in Economy → Settings.
      </p>
      {layouts.map((l) => (
        <label key={l.id} className="choice layout-option">
          <input type="radio" name="economy_layout" value={l.id} defaultChecked={l.id === preselected} />
          <span className="msg">
            <strong>{l.title}</strong>
            <span className="muted small layout-line">{l.description}</span>
            <span className="small layout-reads">
              Reads{" "}
              {l.currencies.map((c, i) => (
                <span key={c.name}>
                  {i > 0 ? ", " : ""}
                  {c.name} at <code>{c.paths.join(" + ")}</code>
                </span>
              ))}
            </span>
            <code className="layout-sample small" aria-label={`Sample profile for ${l.title}`}>{l.sample}</code>
          </span>
        </label>
      ))}
    </fieldset>
  );
}
