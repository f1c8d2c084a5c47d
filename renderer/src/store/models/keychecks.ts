// KeyCheck failures, kept to explain work completions.
import type { DeviceEvent } from '../../../../app/protocol/index.ts';

export interface KeyCheckRecord { seq: number; device: number; obj: number; key: number; ok: boolean; text: string }
export class KeyChecks {
  rows: KeyCheckRecord[] = [];
  static readonly KINDS = ['KeyCheck'];
  applyEvent(e: DeviceEvent): boolean {
    if (e.kind !== 'KeyCheck') return false;
    // a = key checked
    this.rows.push({ seq: e.seq, device: e.device, obj: e.obj, key: e.a, ok: e.ok !== false, text: e.text ?? '' });
    if (this.rows.length > 2000) this.rows.splice(0, 1000);
    return true;
  }
  lastFailure(before = Infinity): KeyCheckRecord | undefined {
    for (let i = this.rows.length - 1; i >= 0; i--) if (!this.rows[i].ok && this.rows[i].seq < before) return this.rows[i];
    return undefined;
  }
}
