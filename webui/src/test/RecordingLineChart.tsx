// uPlot draws on a canvas jsdom does not have, so tests that render a chart
// replace components/LineChart with this one, which draws nothing but records
// what it was given: its title, its series' labels and its number of points.
// Every test file that replaces LineChart uses this same module, since the
// files share their modules in one worker (vite.config.ts, isolate: false).
export function LineChart({ title, series, data }: { title: string; series: { label: string }[]; data: unknown[][] }) {
  return (
    <figure aria-label={title} data-points={data[0]?.length ?? 0}>
      {series.map((s) => (
        <span key={s.label} className="series">
          {s.label}
        </span>
      ))}
    </figure>
  );
}
