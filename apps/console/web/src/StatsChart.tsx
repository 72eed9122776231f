import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  color: string;
  values: Array<number | null>;
}

interface Props {
  title: string;
  unit: string;
  /** Unix seconds of each point. */
  times: number[];
  series: ChartSeries[];
}

const format = (value: number | null | undefined) =>
  value === null || value === undefined ? 'no value' : String(Math.round(value * 100) / 100);

/**
 * A time chart (uPlot: canvas, styled through the CSSOM only, which the strict CSP allows); its
 * caption says the latest values in text, for screen readers and tests.
 */
export function StatsChart({ title, unit, times, series }: Props) {
  const target = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot>(null);
  const data = [times, ...series.map((one) => one.values)] as uPlot.AlignedData;
  const labels = series.map((one) => one.label).join('|');
  useEffect(() => {
    if (!target.current) return;
    plot.current = new uPlot(
      {
        width: 460,
        height: 160,
        cursor: { show: false },
        legend: { show: false },
        scales: { x: { time: true } },
        axes: [{}, { label: unit, size: 60 }],
        series: [{}, ...series.map((one) => ({ label: one.label, stroke: one.color, width: 2, spanGaps: true }))],
      },
      data,
      target.current,
    );
    return () => {
      plot.current?.destroy();
      plot.current = null;
    };
    // Built again only when the series change; new points go through setData below.
  }, [labels, unit]);
  useEffect(() => {
    plot.current?.setData(data);
  });
  const latest = series.map((one) => `${one.label} ${format(one.values.at(-1))} ${unit}`).join(', ');
  return (
    <figure className="chart">
      <figcaption>
        <strong>{title}</strong> <span className="latest">latest: {latest}</span> ({times.length} samples)
      </figcaption>
      <div ref={target} role="img" aria-label={`${title} over time, latest: ${latest}`} />
    </figure>
  );
}
