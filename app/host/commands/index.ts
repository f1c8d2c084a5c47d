// Every device command's handler, by name: the executor dispatches through this table. Its type requires one
// handler per device command descriptor, so adding a descriptor without a handler does not compile.
import type { DeviceCommandName, Handler } from './handler.ts';
import { sessionHandlers } from './session.ts';
import { deviceHandlers } from './device.ts';
import { memoryHandlers } from './memory.ts';
import { queueHandlers } from './queues.ts';
import { engineHandlers } from './engine.ts';
import { LAB_HANDLERS } from '../../../labs/handlers.generated.ts';   // the labs' device commands (their manifests' `handlers`)

export const HANDLERS: { [N in DeviceCommandName]: Handler<N> } = {
  ...sessionHandlers, ...deviceHandlers, ...memoryHandlers, ...queueHandlers, ...engineHandlers, ...LAB_HANDLERS,
};
