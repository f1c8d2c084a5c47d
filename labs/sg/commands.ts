// The SG lab's commands as protocol descriptors (app/protocol/descriptor.ts); their handlers (handlers.ts) and C
// export (c.ts) are declared next to them in the manifest (index.ts). They are scenario steps (lab.json runs them) and read-only for the
// console's session: each strategy run happens on a private session of the device, created and destroyed inside
// the command, so the journal needs none of them to rebuild the session.
import { command } from '../../app/protocol/descriptor.ts';
import { SG_COMMANDS } from './schema-commands.ts';

const facts = { readOnly: true } as const;

export const sgCommands = {
  'sg.generate': command({ ...facts, args: () => SG_COMMANDS['sg.generate'].args.shape, result: SG_COMMANDS['sg.generate'].result }),
  'sg.check': command({ ...facts, args: () => SG_COMMANDS['sg.check'].args.shape, result: SG_COMMANDS['sg.check'].result }),
  'sg.run': command({ ...facts, args: () => SG_COMMANDS['sg.run'].args.shape, result: SG_COMMANDS['sg.run'].result }),
  'sg.compare': command({ ...facts, args: () => SG_COMMANDS['sg.compare'].args.shape, result: SG_COMMANDS['sg.compare'].result }),
};
