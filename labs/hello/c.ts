// hello.write in `verbslab export-c`: the program would post the same RDMA WRITE itself.
import type { CExport } from '../../app/scenario/export-c/emitter.ts';
import type { helloCommands } from './commands.ts';

export const c: CExport<typeof helloCommands> = {
  'hello.write': ({ soft }) => soft('the hello lab (labs/hello): hello.write is ibv_post_send of one IBV_WR_RDMA_WRITE with the message, then ibv_poll_cq'),
};
