// Lab 5, SMB Direct: its manifest (app/protocol/lab-manifest.ts).
import { defineLab } from '../../app/protocol/lab-manifest.ts';
import { labSmbdCommands } from './commands.ts';
import { smbDirectDecoder } from './decoder.ts';

export default defineLab({
  id: 'smbd',
  commands: labSmbdCommands,   // lab.smbd.*: answered by the host extension (the two peers)
  decoders: [smbDirectDecoder],
  host: './host.ts',
  panel: './panel.tsx',
  headless: './headless.ts',
  e2e: 'e2e/lab-smbd.spec.ts',
  bench: './bench.ts',
});
