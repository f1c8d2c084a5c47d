// Lab 1, scatter lists under one key: its manifest (app/protocol/lab-manifest.ts).
import { defineLab } from '../../app/protocol/lab-manifest.ts';
import { sgCommands } from './commands.ts';

export default defineLab({
  id: 'sg',
  commands: sgCommands,
  c: './c.ts',
  handlers: './handlers.ts',
  panel: './panel.tsx',
  e2e: 'e2e/sg-lab.spec.ts',
});
