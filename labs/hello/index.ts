// The hello lab, the template of a lab: one command (hello.write), one enum (HelloKind), one payload decoder, a
// panel, a scenario; everything it adds is declared here (app/protocol/lab-manifest.ts).
import { defineLab } from '../../app/protocol/lab-manifest.ts';
import { helloCommands } from './commands.ts';
import { helloDecoder } from './decoder.ts';

export default defineLab({
  id: 'hello',
  commands: helloCommands,
  decoders: [helloDecoder],
  c: './c.ts',
  handlers: './handlers.ts',
  panel: './panel.tsx',
});
