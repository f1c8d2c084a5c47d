// Lab 4, NVMe-oF target offload: its manifest (app/protocol/lab-manifest.ts).
import { defineLab } from '../../app/protocol/lab-manifest.ts';
import { nvmfAgentCommands } from './agent-commands.ts';
import { nvmfCommands } from './commands.ts';
import { nvmeRdmaDecoder } from './decoder.ts';
import { NvmeOncs, NvmfLbaSize, NvmfOffloadOps, NvmfPass, NvmfStep } from './enums.ts';

// the object kinds below, for the type checker (h('nvme') in the descriptors)
declare module '../../app/protocol/descriptor.ts' {
  interface LabObjectKinds { nvme: true; nvmeCtrl: true }
}

export default defineLab({
  id: 'nvmf',
  commands: { ...nvmfAgentCommands, ...nvmfCommands },
  /** the soft NVMe function (nvme.create) and the RFC's nvme_ctrl of an offload SRQ (nvmf.ctrl_create) */
  objectKinds: {
    nvme: { prefix: 'nvme', refFields: ['handle', 'bar0'] },
    nvmeCtrl: { prefix: 'nvmectrl', refFields: ['handle'] },
  },
  handleFields: { nvme: 'nvme', nvmeCtrl: 'nvmeCtrl', targetDevice: 'device', hostDevice: 'device' },
  enums: { NvmfStep, NvmfPass, NvmfOffloadOps, NvmeOncs, NvmfLbaSize },
  decoders: [nvmeRdmaDecoder],
  c: './c.ts',
  handlers: './handlers.ts',
  panel: './panel.tsx',
  headless: './headless.ts',
  e2e: 'e2e/lab-nvmf.spec.ts',
  bench: './bench.ts',
});
