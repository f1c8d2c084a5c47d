// Lab 4's commands in `verbslab export-c` (app/scenario/export-c.ts): none has a libibverbs equivalent a program
// could call, so each says what a real program would do instead.
import type { CExport } from '../../app/scenario/export-c/emitter.ts';
import type { nvmfAgentCommands } from './agent-commands.ts';
import type { nvmfCommands } from './commands.ts';

const none = 'NVMe-oF target offload (labs/nvmf): ';
const rfc = `${none}the RFC's offload verbs never reached upstream libibverbs (MLNX_OFED shipped them as mlx5dv_*); the program cannot do this`;
const soft = `${none}the soft NVMe function exists only on the software device`;
const nvmfC: CExport<typeof nvmfCommands> = {
  'nvmf.caps': ({ soft: s }) => s(rfc),
  'nvmf.srq_create': ({ soft: s }) => s(rfc),
  'nvmf.ctrl_create': ({ soft: s }) => s(rfc),
  'nvmf.ctrl_remove': ({ soft: s }) => s(rfc),
  'nvmf.map_nsid': ({ soft: s }) => s(rfc),
  'nvmf.unmap_nsid': ({ soft: s }) => s(rfc),
  'nvmf.qp_enable': ({ soft: s }) => s(rfc),
  'nvmf.snapshot': ({ soft: s }) => s(rfc),
  'nvme.create': ({ soft: s }) => s(soft),
  'nvme.add_namespace': ({ soft: s }) => s(soft),
  'nvme.p2p_queue': ({ soft: s }) => s(soft),
  'nvme.set_ready': ({ soft: s }) => s(soft),
  'nvme.inject_timeout': ({ soft: s }) => s(soft),
  'nvme.pci_error': ({ soft: s }) => s(soft),
  'nvme.peek': ({ soft: s }) => s(soft),
  'nvme.snapshot': ({ soft: s }) => s(soft),
};

const lab = 'lab 4 (labs/nvmf): ';
const nvmfAgentC: CExport<typeof nvmfAgentCommands> = {
  'nvmf.setup': ({ soft }) => soft(`${lab}nvmf.setup starts the lab's NVMe-oF software target and host driver; a program would run nvmet / nvme-rdma or SPDK`),
  'nvmf.queue': ({ soft }) => soft(`${lab}nvmf.queue is rdma_connect / rdma_accept with the NVMe/RDMA private data (librdmacm)`),
  'nvmf.connect': ({ soft }) => soft(`${lab}nvmf.connect sends a Fabrics Connect capsule (nvme connect -t rdma)`),
  'nvmf.admin': ({ soft }) => soft(`${lab}nvmf.admin sends an admin capsule on queue 0`),
  'nvmf.io': ({ soft }) => soft(`${lab}nvmf.io sends NVMe I/O capsules and checks the data`),
  'nvmf.offload': ({ soft }) => soft(`${lab}nvmf.offload sets up the target offload (ibv_create_srq_ex NVMF, ibv_srq_create_nvme_ctrl, ibv_map_nvmf_nsid) behind the lab's software target`),
  'nvmf.offload_enable': ({ soft }) => soft(`${lab}nvmf.offload_enable is ibv_qp_set_nvmf on the target QP of a queue`),
  'nvmf.offload_fault': ({ soft }) => soft(`${lab}nvmf.offload_fault injects a fault into the backend SSD`),
  'nvmf.state': ({ soft }) => soft(`${lab}nvmf.state reads the agents' state`),
};

export const c = { ...nvmfC, ...nvmfAgentC };
