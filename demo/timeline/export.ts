/**
 * The timeline as a file: every lane (not only those in sight), with its own axis, title and
 * colours written into the SVG, so it opens the same in any viewer; the PNG is that SVG drawn
 * on a canvas at twice the size. Downloads are made in the page: nothing is uploaded.
 */
import { seconds } from '../clock.ts';
import { svg } from '../views/dom.ts';
import { drawAxis, drawLane, INK, LANE, type LaneMode, patterns, type Scale, x } from './draw.ts';
import type { Item, TimelineModel } from './model.ts';

export interface ExportArgs {
  model: TimelineModel;
  mode: LaneMode;
  lanes: Map<string, Item[]>;
  now: number;
  view: number | null;
  width: number;
  scale: Scale;
}

const HEAD = 30;
const AXIS = 22;

export function timelineSvg({ model, mode, lanes, now, view, width, scale }: ExportArgs): SVGSVGElement {
  const names = [...lanes.keys()];
  const height = HEAD + AXIS + Math.max(1, names.length) * LANE + 8;
  const root = svg('svg', { xmlns: 'http://www.w3.org/2000/svg', width, height, viewBox: `0 0 ${width} ${height}`, 'font-family': 'system-ui, sans-serif' });
  const title = svg('text', { x: 8, y: 19, fill: INK, 'font-size': 14, 'font-weight': 700 });
  title.textContent = `leasehold — leases by ${mode}, ${seconds(scale.from)} to ${seconds(now)}${view === null ? '' : ` (looking at ${seconds(view)})`}`;
  root.append(svg('rect', { width, height, fill: '#ffffff' }), patterns(), title);
  const axis = svg('g', { transform: `translate(0 ${HEAD})` }, drawAxis(scale, AXIS));
  const body = svg('g', { transform: `translate(0 ${HEAD + AXIS})` });
  names.forEach((lane, i) => body.append(drawLane(model, mode, lane, lanes.get(lane)!, i, i * LANE, scale, now)));
  const bottom = names.length * LANE;
  body.append(svg('line', { x1: x(scale, now), x2: x(scale, now), y1: -AXIS, y2: bottom, stroke: '#1f6feb', 'stroke-width': 2 }));
  if (view !== null) body.append(svg('line', { x1: x(scale, view), x2: x(scale, view), y1: -AXIS, y2: bottom, stroke: '#f59e0b', 'stroke-width': 3 }));
  root.append(axis, body);
  return root;
}

function text(args: ExportArgs): string {
  return new XMLSerializer().serializeToString(timelineSvg(args));
}

function download(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

export function exportSvg(args: ExportArgs): void {
  download(new Blob([text(args)], { type: 'image/svg+xml' }), 'leasehold-timeline.svg');
}

export async function exportPng(args: ExportArgs): Promise<void> {
  const source = text(args);
  const image = new Image();
  // A data: URL of an SVG with no external references leaves the canvas clean (exportable).
  image.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(source)}`;
  await image.decode();
  const canvas = document.createElement('canvas');
  canvas.width = image.naturalWidth * 2;
  canvas.height = image.naturalHeight * 2;
  const context = canvas.getContext('2d')!;
  context.scale(2, 2);
  context.drawImage(image, 0, 0);
  const blob = await new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, 'image/png'));
  if (blob) download(blob, 'leasehold-timeline.png');
}
