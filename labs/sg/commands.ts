// The SG lab's commands as protocol descriptors (app/protocol/descriptor.ts), their handlers for the device executor
// (app/host/commands), and their C export. They are scenario steps (lab.json runs them) and read-only for the
// console's session: each strategy run happens on a private session of the device, created and destroyed inside
// the command, so the journal needs none of them to rebuild the session.
import { command } from '../../app/protocol/descriptor.ts';
import type { CExport } from '../../app/scenario/export-c/emitter.ts';
import { SG_COMMANDS } from './schema-commands.ts';

const facts = { readOnly: true } as const;

export const sgCommands = {
  'sg.generate': command({ ...facts, args: () => SG_COMMANDS['sg.generate'].args.shape, result: SG_COMMANDS['sg.generate'].result }),
  'sg.check': command({ ...facts, args: () => SG_COMMANDS['sg.check'].args.shape, result: SG_COMMANDS['sg.check'].result }),
  'sg.run': command({ ...facts, args: () => SG_COMMANDS['sg.run'].args.shape, result: SG_COMMANDS['sg.run'].result }),
  'sg.compare': command({ ...facts, args: () => SG_COMMANDS['sg.compare'].args.shape, result: SG_COMMANDS['sg.compare'].result }),
};

const lab = 'the SG lab (labs/sg): ';
export const sgC: CExport<typeof sgCommands> = {
  'sg.generate': ({ soft }) => soft(`${lab}sg.generate builds a scatter list in the lab; a program has its own I/O buffers`),
  'sg.check': ({ soft }) => soft(`${lab}sg.check applies ib_sg_to_pages per element; on libibverbs the closest is registering the list and seeing which element breaks it`),
  'sg.run': ({ soft }) => soft(`${lab}sg.run runs a whole storage exchange (an initiator and a target QP, registration, descriptor, RDMA, invalidation) on a private session; kernel-only verbs (IB_WR_REG_MR, SG_GAPS MRs) have no libibverbs equivalent`),
  'sg.compare': ({ soft }) => soft(`${lab}sg.compare runs the five strategies side by side on private sessions`),
};
