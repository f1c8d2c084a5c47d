// The argument and result schemas of the SG lab's commands (sg.generate, sg.check, sg.run, sg.compare). No Node
// imports: the protocol's descriptor table (and so the console) reads them.
import { z } from 'zod';
import {
  SgComparison, SgElem, SgGenerateArgs, SgListSpec, SgMapping, SgRunConfig, SgRunResult, SG_STRATEGIES,
} from './schema.ts';

/** Argument and result schemas of the SG lab's commands (labs/sg/commands.ts makes them protocol descriptors). */
export const SG_COMMANDS = {
  'sg.generate': {
    args: SgGenerateArgs,
    result: z.object({ list: z.array(SgElem), bytes: z.number() }),
  },
  'sg.check': {
    args: z.object({
      list: SgListSpec, pageSize: z.number().int().min(512).max(2 ** 30).default(4096), maxNumSg: z.number().int().min(1).optional(),
      indirect: z.boolean().default(false),
    }).strict(),
    result: SgMapping,
  },
  'sg.run': {
    args: z.object({ list: SgListSpec, strategy: z.enum(SG_STRATEGIES), config: SgRunConfig.default(SgRunConfig.parse({})) }).strict(),
    result: SgRunResult,
  },
  'sg.compare': {
    args: z.object({
      list: SgListSpec, profile: z.enum(['rxe', 'cx', 'iwarp', 'minimal']).default('cx'), seed: z.number().int().min(0).default(1),
      mrPool: z.number().int().min(1).max(65536).default(128),
    }).strict(),
    result: SgComparison,
  },
} as const;
