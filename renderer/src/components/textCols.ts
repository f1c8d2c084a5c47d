// A table row as one line of monospace text: each value cut to its column's width (with "…") and padded, so a
// log row is a single text node. Under a stream every visible row changes every frame, and one text node per
// row is far cheaper to update, lay out and paint than an element per cell.
export function textCols(values: readonly string[], widths: readonly number[]): string {
  let out = '';
  for (let k = 0; k < values.length; k++) {
    const v = values[k]!;
    const w = widths[k];
    if (w === undefined) { out += v; continue; }           // the last column takes the rest of the line
    out += v.length > w ? `${v.slice(0, w - 1)}…` : v.padEnd(w);
    out += ' ';
  }
  return out;
}
