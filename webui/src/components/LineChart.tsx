// A uPlot line chart that fills its container's width. Drag across it to
// zoom into a range of batches, double-click to zoom out; new data keeps
// the zoom. The y axis is logarithmic when the values span decades (a
// checkbox switches). The figure names what it shows for screen readers; the
// tables beside each chart hold the same numbers.
import { useEffect, useId, useMemo, useRef, useState } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatTicks, logScaleFit, type Aligned } from '../lib/series';

export interface LineSeries {
  label: string;
  color: string;
  width?: number;
}

export interface LineChartProps {
  title: string;
  data: Aligned;
  series: LineSeries[];
  xLabel?: string;
  yLabel?: string;
  height?: number;
}

export function LineChart({ title, data, series, xLabel = 'batches', yLabel = '', height = 300 }: LineChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const zoomed = useRef(false);
  const dataRef = useRef(data);
  dataRef.current = data;
  const fit = useMemo(() => logScaleFit(data), [data]);
  const [userLog, setUserLog] = useState<boolean | null>(null);
  const log = fit.possible && (userLog ?? fit.suggested);
  const logId = useId();
  const shape = JSON.stringify([series, xLabel, yLabel, height, log]);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height,
      scales: { x: { time: false }, y: log ? { distr: 3 } : {} },
      legend: { show: true, live: true },
      cursor: { drag: { x: true, y: false } },
      axes: [
        { label: xLabel, stroke: '#4a5263', grid: { stroke: '#e6e9ef' }, ticks: { stroke: '#d5d9e2' } },
        {
          label: yLabel,
          stroke: '#4a5263',
          grid: { stroke: log ? '#f0f2f6' : '#e6e9ef' },
          ticks: { stroke: '#d5d9e2' },
          size: 64,
          values: (_u: uPlot, splits: (number | null)[]) => formatTicks(splits, log),
        },
      ],
      series: [
        { label: xLabel },
        ...series.map((s) => ({
          label: s.label,
          stroke: s.color,
          width: s.width ?? 1.5,
          spanGaps: true,
        })),
      ],
      hooks: {
        setSelect: [
          (u: uPlot) => {
            if (u.select.width > 0) zoomed.current = true;
          },
        ],
      },
    };
    const u = new uPlot(opts, dataRef.current as uPlot.AlignedData, el);
    plot.current = u;
    const onDblClick = () => {
      zoomed.current = false;
    };
    el.addEventListener('dblclick', onDblClick);
    const resize = new ResizeObserver(() => u.setSize({ width: Math.max(200, el.clientWidth), height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      el.removeEventListener('dblclick', onDblClick);
      u.destroy();
      plot.current = null;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [shape]);

  useEffect(() => {
    plot.current?.setData(data as uPlot.AlignedData, !zoomed.current);
  }, [data]);

  const points = data[0].length;
  return (
    <figure className="chart" aria-label={title} data-series={series.length} data-points={points}>
      <figcaption className="sr-only">
        {title}: {series.length} {series.length === 1 ? 'line' : 'lines'} over {points} values of {xLabel}.
      </figcaption>
      <div ref={box} className="chart-canvas" />
      {fit.possible && (
        <label className="checkbox chart-option" htmlFor={logId}>
          <input id={logId} type="checkbox" checked={log} onChange={(e) => setUserLog(e.target.checked)} /> Log scale
        </label>
      )}
    </figure>
  );
}
