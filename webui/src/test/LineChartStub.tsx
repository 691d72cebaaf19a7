// uPlot draws on a canvas jsdom does not have: tests that render a chart
// mock components/LineChart with this, which records what the chart gets
// (its title, its series' labels, its number of points). Every file mocks it
// the same way, since files share their modules in one worker.
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
