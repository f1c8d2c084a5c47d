import { describe, expect, it } from 'vitest';
import { textCols } from './textCols.ts';

describe('textCols', () => {
  it('pads each value to its column, cuts long ones with an ellipsis, and lets the last column run on', () => {
    expect(textCols(['1', 'PacketSent', 'rest of the line'], [3, 6])).toBe('1   Packe… rest of the line');
    expect(textCols(['abc', 'abcdef', ''], [3, 6])).toBe('abc abcdef ');
  });
  it('keeps the columns aligned whatever the values (every row has the same prefix widths)', () => {
    const w = [8, 12, 15];
    const a = textCols(['7', '0.001', 'WqePosted', 'x'], w);
    const b = textCols(['1234567890', '123456.789012345', 'ObjectDestroyed', 'y'], w);
    expect(a.length).toBe(b.length);
    expect(a.lastIndexOf(' ') + 1).toBe(b.lastIndexOf(' ') + 1);
  });
});
