// The flood run as a small SVG line chart: strings done per second and the worker's resident
// memory over time, two y axes. Written by hand (a few dozen lines) rather than pulling in a
// charting library for one build output.

export interface FloodSample {
  /** Seconds since the flood started. */
  t: number
  /** Worker resident memory, MB. */
  rssMb: number
  /** Strings DONE per second over the last interval. */
  donePerSecond: number
}

const W = 720
const H = 320
const PAD = { left: 64, right: 64, top: 36, bottom: 44 }

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c]!)
}

/** A round upper bound for an axis: 1, 2 or 5 times a power of ten. */
export function niceMax(value: number): number {
  if (!(value > 0)) return 1
  const p = 10 ** Math.floor(Math.log10(value))
  for (const m of [1, 2, 5, 10]) if (m * p >= value) return m * p
  return 10 * p
}

function polyline(points: Array<[number, number]>, color: string): string {
  if (points.length === 0) return ''
  const d = points.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(' ')
  return `<polyline fill="none" stroke="${color}" stroke-width="2" points="${d}"/>`
}

export function renderFloodChart(samples: readonly FloodSample[], title: string): string {
  const plotW = W - PAD.left - PAD.right
  const plotH = H - PAD.top - PAD.bottom
  const tMax = niceMax(Math.max(0, ...samples.map((s) => s.t)))
  const rateMax = niceMax(Math.max(0, ...samples.map((s) => s.donePerSecond)))
  const rssMax = niceMax(Math.max(0, ...samples.map((s) => s.rssMb)))
  const x = (t: number) => PAD.left + (t / tMax) * plotW
  const yRate = (v: number) => PAD.top + plotH - (v / rateMax) * plotH
  const yRss = (v: number) => PAD.top + plotH - (v / rssMax) * plotH
  const parts: string[] = []
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11">`)
  parts.push(`<rect width="${W}" height="${H}" fill="white"/>`)
  parts.push(`<text x="${W / 2}" y="20" text-anchor="middle" font-size="13">${escapeXml(title)}</text>`)
  for (let i = 0; i <= 4; i++) {
    const y = PAD.top + (plotH * i) / 4
    parts.push(`<line x1="${PAD.left}" y1="${y}" x2="${PAD.left + plotW}" y2="${y}" stroke="#e5e5e5"/>`)
    parts.push(`<text x="${PAD.left - 6}" y="${y + 4}" text-anchor="end" fill="#1f6feb">${Math.round(rateMax * (1 - i / 4))}</text>`)
    parts.push(`<text x="${PAD.left + plotW + 6}" y="${y + 4}" fill="#d1242f">${Math.round(rssMax * (1 - i / 4))}</text>`)
  }
  for (let i = 0; i <= 5; i++) {
    const t = (tMax * i) / 5
    parts.push(`<text x="${x(t)}" y="${PAD.top + plotH + 16}" text-anchor="middle">${Number(t.toFixed(1))}</text>`)
  }
  parts.push(`<line x1="${PAD.left}" y1="${PAD.top + plotH}" x2="${PAD.left + plotW}" y2="${PAD.top + plotH}" stroke="#888"/>`)
  parts.push(`<text x="${PAD.left + plotW / 2}" y="${H - 8}" text-anchor="middle">seconds</text>`)
  parts.push(`<text x="14" y="${PAD.top + plotH / 2}" transform="rotate(-90 14 ${PAD.top + plotH / 2})" text-anchor="middle" fill="#1f6feb">strings done / s</text>`)
  parts.push(`<text x="${W - 10}" y="${PAD.top + plotH / 2}" transform="rotate(90 ${W - 10} ${PAD.top + plotH / 2})" text-anchor="middle" fill="#d1242f">worker RSS, MB</text>`)
  parts.push(polyline(samples.map((s) => [x(s.t), yRate(s.donePerSecond)]), '#1f6feb'))
  parts.push(polyline(samples.map((s) => [x(s.t), yRss(s.rssMb)]), '#d1242f'))
  parts.push('</svg>')
  return `${parts.filter(Boolean).join('\n')}\n`
}
