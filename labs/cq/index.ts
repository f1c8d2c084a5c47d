// Lab 2, completion notification and in-order processing: its manifest (app/protocol/lab-manifest.ts).
import { defineLab } from '../../app/protocol/lab-manifest.ts';
import { labCqCommands } from './commands.ts';

export default defineLab({
  id: 'cq',
  commands: labCqCommands,   // lab.cq.*: answered by the host extension (the explorer and the step-by-step replay)
  host: './host.ts',
  panel: './panel.tsx',
  headless: './headless.ts',
  e2e: 'e2e/lab-cq.spec.ts',
});
