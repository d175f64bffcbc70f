import { num } from "./format";

/**
 * A small inline bar chart of counts (oldest first), each bar scaled to the row's own peak, as the
 * issues list shows each issue's last 24 hours. The label says the figures in words, so nothing needs
 * hovering and a screen reader hears the same; an hour without occurrences keeps a faint baseline.
 */
export function Sparkline({ counts, label }: { counts: number[]; label: string }) {
  const bar = 2;
  const gap = 1;
  const height = 20;
  const width = counts.length * (bar + gap) - gap;
  const peak = Math.max(0, ...counts);
  const total = counts.reduce((a, b) => a + b, 0);
  const said = total === 0 ? `${label}: none` : `${label}: ${num(total)} in total, at most ${num(peak)} in one hour`;
  return (
    <svg className="sparkline" role="img" aria-label={said} width={width} height={height} viewBox={`0 0 ${width} ${height}`}>
      <title>{said}</title>
      <line x1={0} x2={width} y1={height - 0.5} y2={height - 0.5} className="sparkline-base" />
      {counts.map((c, i) => {
        if (c <= 0) return null;
        // a single occurrence still shows: at least 2 px
        const h = Math.max(2, Math.round((c / peak) * height));
        return <rect key={i} x={i * (bar + gap)} y={height - h} width={bar} height={h} />;
      })}
    </svg>
  );
}
