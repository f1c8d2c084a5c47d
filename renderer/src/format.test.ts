// The console's number formatting: units scaled, binary sizes, rates, hex, the key split.
import { describe, expect, it } from 'vitest';
import { fmtAddr, fmtByteRate, fmtBytes, fmtCount, fmtHex, fmtKey, fmtNs, fmtRate, keyByte, keyIndex, rawNs } from './format.ts';

describe('format', () => {
  it('scales times from ns to s with three significant digits', () => {
    expect(fmtNs(850)).toBe('850 ns');
    expect(fmtNs(0)).toBe('0 ns');
    expect(fmtNs(12_400)).toBe('12.4 µs');
    expect(fmtNs(3_510_000)).toBe('3.51 ms');
    expect(fmtNs(67_108_864)).toBe('67.1 ms');
    expect(fmtNs(8_535_643_521_024)).toBe('8536 s');
    expect(fmtNs(1_000_000_000)).toBe('1 s');
    expect(fmtNs(NaN)).toBe('—');
    expect(rawNs(8_535_643_521_024)).toBe('8535643521024 ns');
  });
  it('writes sizes in binary units', () => {
    expect(fmtBytes(64)).toBe('64 B');
    expect(fmtBytes(4096)).toBe('4 KiB');
    expect(fmtBytes(1536 * 1024)).toBe('1.5 MiB');
    expect(fmtBytes(1023)).toBe('1023 B');
    expect(fmtBytes(3 * 2 ** 30)).toBe('3 GiB');
    expect(fmtByteRate(2 ** 30)).toBe('1 GiB/s');
  });
  it('writes rates per second with SI prefixes', () => {
    expect(fmtRate(950)).toBe('950 /s');
    expect(fmtRate(12_345)).toBe('12.3 k/s');
    expect(fmtRate(1_020_000, 'events')).toBe('1.02 M events/s');
  });
  it('writes counts, hex, addresses and the key split', () => {
    expect(fmtCount(1048576)).toBe('1,048,576');
    expect(fmtHex(0xa05, 8)).toBe('0x00000a05');
    expect(fmtHex(-1)).toBe('0xffffffff');
    expect(fmtAddr(0x7f0000001000)).toBe('0x7f0000001000');
    expect(keyIndex(0x1234a5)).toBe(0x1234);
    expect(keyByte(0x1234a5)).toBe(0xa5);
    expect(fmtKey(0xa05)).toBe('0x00000a05 (index 0xa, key 0x05)');
  });
});
