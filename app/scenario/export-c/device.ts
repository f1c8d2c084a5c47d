// The device commands (app/protocol/commands/device.ts) as libibverbs calls: how `verbslab export-c` writes each step
// (app/scenario/export-c.ts writes the program around them). Typed by the descriptor table, so a step command
// without its emitter does not compile.
import { type CExport } from './emitter.ts';
import type { deviceCommands } from '../../protocol/commands/device.ts';

export const deviceC: CExport<typeof deviceCommands> = {
  'device.list': ({ st, a, soft }) => { soft(`${st.cmd}: a console/session command; nothing to do on libibverbs`); },
  'device.create': ({ n, a, B, what, newObj }) => {
    const o = newObj('device');
    B(`${o.c} = open_device();`);
    B(`CHECK(${n}, ${o.c} != NULL, ${what(`open a device (software profile ${String(a.profile)})`)});`);
  },
  'device.destroy': ({ a, ctx, intCall }) => { intCall(`ibv_close_device(${ctx.h(a.device, 'device')})`, 'ibv_close_device', true); },
  'device.attachNet': ({ a, soft }) => {
    soft('device.attachNet: the exported program runs on the host\'s own RDMA device; putting a software device on the network has no libibverbs step');
  },
  'device.detachNet': ({ soft }) => {
    soft('device.detachNet: the exported program runs on the host\'s own RDMA device; nothing to take off the network');
  },
};
