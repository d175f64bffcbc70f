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
        // the sample stays out of the label: the radio is named by the layout alone, described by the rest
        <div key={l.id} className="choice layout-option">
          <input type="radio" id={`layout-${l.id}`} name="economy_layout" value={l.id} defaultChecked={l.id === preselected} aria-describedby={`layout-${l.id}-more`} />
          <span className="msg">
            <label htmlFor={`layout-${l.id}`} className="layout-label">
              <strong>{l.title}</strong>
              <span className="muted small layout-line">{l.description}</span>
            </label>
            <span id={`layout-${l.id}-more`} className="small layout-more">
              <span className="layout-reads">
                Reads{" "}
                {l.currencies.map((c, i) => (
                  <span key={c.name}>
                    {i > 0 ? ", " : ""}
                    {c.name} at <code>{c.paths.join(" + ")}</code>
                  </span>
                ))}
                ; a profile as pushed:
              </span>
              <code className="layout-sample">{l.sample}</code>
            </span>
          </span>
        </div>
      ))}
    </fieldset>
  );
}
