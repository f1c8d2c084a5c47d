// TEMPORARY backend of the software target: one namespace as bytes in this process, until the soft NVMe controller
// of the device (native/src/nvme, the `nvme` branch) is merged and the target serves its I/O through that
// controller's rings instead. It is labelled so wherever it shows (the target's state says backend "ts-memory").
// Blocks never written read back as zeros, as a freshly formatted (deallocated) namespace does.

export interface NamespaceInfo { nsid: number; lbaSize: number; blocks: number; backend: 'ts-memory' }

export class MemNamespace {
  private readonly data: Uint8Array;
  /** per-namespace counters, named after the MLNX_OFED offload counters (num_read_cmd, num_read_blocks, ...) */
  readonly counters = { readCmds: 0, readBlocks: 0, writeCmds: 0, writeBlocks: 0, writeInlineCmds: 0, flushCmds: 0, errorCmds: 0 };

  constructor(readonly nsid: number, readonly lbaSize: number, readonly blocks: number) {
    if (![512, 4096].includes(lbaSize)) throw new RangeError(`lbaSize ${lbaSize}: 512 or 4096 (no metadata formats in the temporary backend)`);
    if (!Number.isInteger(blocks) || blocks < 1 || blocks * lbaSize > 64 * 1024 * 1024) throw new RangeError(`blocks ${blocks}: at most 64 MiB`);
    this.data = new Uint8Array(lbaSize * blocks);
  }

  get info(): NamespaceInfo { return { nsid: this.nsid, lbaSize: this.lbaSize, blocks: this.blocks, backend: 'ts-memory' }; }

  /** false when [slba, slba + nlb) is not inside the namespace (the target answers SC 0x80 LBA Out of Range) */
  inRange(slba: bigint, nlb: number): boolean { return slba >= 0n && slba + BigInt(nlb) <= BigInt(this.blocks); }

  read(slba: bigint, nlb: number): Uint8Array {
    const off = Number(slba) * this.lbaSize;
    return this.data.slice(off, off + nlb * this.lbaSize);
  }

  write(slba: bigint, bytes: Uint8Array): void { this.data.set(bytes, Number(slba) * this.lbaSize); }
}
