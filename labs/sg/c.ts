// The SG lab's commands in `verbslab export-c` (app/scenario/export-c.ts).
import type { CExport } from '../../app/scenario/export-c/emitter.ts';
import type { sgCommands } from './commands.ts';

const lab = 'the SG lab (labs/sg): ';
export const c: CExport<typeof sgCommands> = {
  'sg.generate': ({ soft }) => soft(`${lab}sg.generate builds a scatter list in the lab; a program has its own I/O buffers`),
  'sg.check': ({ soft }) => soft(`${lab}sg.check applies ib_sg_to_pages per element; on libibverbs the closest is registering the list and seeing which element breaks it`),
  'sg.run': ({ soft }) => soft(`${lab}sg.run runs a whole storage exchange (an initiator and a target QP, registration, descriptor, RDMA, invalidation) on a private session; kernel-only verbs (IB_WR_REG_MR, SG_GAPS MRs) have no libibverbs equivalent`),
  'sg.compare': ({ soft }) => soft(`${lab}sg.compare runs the five strategies side by side on private sessions`),
};
