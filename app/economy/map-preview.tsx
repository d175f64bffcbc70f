/**
 * What a map reads from one profile, before it is saved: each currency's amount and the places it
 * summed (the first few listed, the rest counted), the values it skipped and why, the names and data
 * code; or why the profile is not read. A reading stopped at its budget says so and marks the
 * amounts that are sums so far.
 */
import { ago, utc } from "~/components/format";
import { amount } from "./charts";
import type { Preview } from "./map.server";

type PreviewData = Omit<Preview, "sample"> & { sample: { user_id: string; observed_at: string | Date } | null };

export function MapPreview({ preview }: { preview: PreviewData }) {
  const { map, result } = preview;
  const nameOf = (key: string) => map.currencies.find((c) => c.key === key)?.name ?? key;
  return (
    <section className="panel map-preview" data-testid="map-preview" aria-labelledby="map-preview-title">
      <h3 id="map-preview-title" style={{ marginTop: 0 }}>Preview</h3>
      <p className="muted small">
        {preview.sample
          ? `The last pushed profile (player ${preview.sample.user_id}, ${utc(preview.sample.observed_at)})`
          : "The pasted profile"}
        , read through the map as edited above. Nothing is saved.
      </p>
      {preview.stopped ? (
        <p className="alert error" data-testid="preview-stopped">{preview.stopped}</p>
      ) : null}
      {result.ok && preview.push_skips ? (
        <p className="alert error" data-testid="preview-push-skips">
          A push of this profile would skip the player: {preview.push_skips}.
        </p>
      ) : null}
      {!result.ok ? (
        <p className="alert error" data-testid="preview-not-read">
          {preview.sample
            ? `The last profile pushed (user ${preview.sample.user_id}, ${ago(preview.sample.observed_at, new Date())}) would be skipped: ${result.reason}.`
            : `This profile is not read (a push of it would skip the player): ${result.reason}.`}
        </p>
      ) : (
        <>
          <ul className="preview-currencies">
            {map.currencies.map((c) => {
              const places = result.matches.filter((m) => m.currency === c.key);
              const count = result.places?.[c.key] ?? places.length;
              const more = count - places.length;
              const partial = result.partial?.includes(c.key);
              return (
                <li key={c.key} data-testid={`preview-${c.key}`}>
                  <div className="preview-head">
                    <span>
                      <strong>{c.name}</strong> <code className="muted">{c.key}</code>
                      {partial ? <span className="muted small" data-testid={`preview-partial-${c.key}`}> partial: the sum so far</span> : null}
                    </span>
                    <span className="amount" data-testid={`preview-amount-${c.key}`}>{amount(result.profile.balances[c.key])}</span>
                  </div>
                  {places.length ? (
                    <ul className="preview-places small">
                      {places.map((m, i) => (
                        <li key={i}>
                          <code>{m.path}</code> <span className="amount">{amount(m.value)}</span>
                        </li>
                      ))}
                    </ul>
                  ) : count === 0 ? (
                    <p className="muted small preview-places">No path of this currency reached a number.</p>
                  ) : null}
                  {more > 0 ? (
                    <p className="muted small preview-places" data-testid={`preview-more-${c.key}`}>
                      and {more.toLocaleString("en-US")} more {more === 1 ? "place" : "places"}
                      {partial ? " so far" : ""} (the preview lists {preview.listed.per_currency} places per currency, {preview.listed.total} in all)
                    </p>
                  ) : null}
                </li>
              );
            })}
            <li className="preview-total">
              <div className="preview-head">
                <strong>Total</strong>
                <span className="amount" data-testid="preview-total">{amount(result.profile.total)}</span>
              </div>
            </li>
          </ul>
          {result.profile.skipped_count > 0 ? (
            <SkippedValues
              list={result.profile.skipped_values}
              count={result.profile.skipped_count}
              nameOf={nameOf}
              title="Skipped values (they add nothing)"
            />
          ) : (
            <p className="muted small">No value was skipped.</p>
          )}
          <dl className="facts small">
            <dt>Names</dt>
            <dd data-testid="preview-names">{result.profile.display_names.length ? result.profile.display_names.join(", ") : "none found"}</dd>
            <dt>Data code</dt>
            <dd data-testid="preview-data-code">{result.profile.data_code ?? "none"}</dd>
          </dl>
        </>
      )}
    </section>
  );
}

/** Values a currency path reached that are not numbers, with "and N more" past the listed ones. */
export function SkippedValues(props: {
  list: { currency: string; path: string; reason: string }[];
  count: number;
  nameOf: (key: string) => string;
  title: string;
}) {
  const more = props.count - props.list.length;
  return (
    <div className="skipped-values" data-testid="skipped-values">
      <h4>{props.title}</h4>
      <table className="stack-narrow">
        <thead>
          <tr><th>Currency</th><th>Path</th><th>Reason</th></tr>
        </thead>
        <tbody>
          {props.list.map((s, i) => (
            <tr key={i}>
              <td>{props.nameOf(s.currency)}</td>
              <td data-label="Path"><code>{s.path}</code></td>
              <td>{s.reason}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {more > 0 ? <p className="muted small" data-testid="skipped-more">and {more.toLocaleString("en-US")} more</p> : null}
    </div>
  );
}
