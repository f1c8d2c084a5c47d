// Forms keep the user's choices in the store (switching panels unmounts a form, not its choices); a session reset
// forgets them (the objects they named are gone); the validation rules are the verb's own (ibv_reg_mr's
// LOCAL_WRITE rule is not ibv_bind_mw's); each WR opcode shows the ibv_send_wr fields it uses.
import { describe, expect, it } from 'vitest';
import type { Reply } from '../../../../app/protocol/index.ts';
import { createConsoleStore } from '../store.ts';
import { commandProblem } from '../validate.ts';
import { WR_FIELDS, hasField, incRkey } from '../wr.ts';
import { WrOpcode } from '../../../../app/protocol/index.ts';
import { emptyReply } from './replies.ts';

describe('form choices', () => {
  it('are kept per form across panel switches and forgotten by a session reset', async () => {
    const store = createConsoleStore({
      schedule: () => {},
      transport: { call: async (c) => ({ type: 'reply', id: 1, ok: true, result: c.cmd === 'session.reset' ? { seed: 1, epoch: 1 } : emptyReply(c.cmd) }) as Reply, onEvents() {}, onHost() {}, control() {} },
    });
    const s = () => store.getState();
    s().setFormField('post.send', 'rkeyOf', 'MR:7');
    s().setFormField('post.send', 'opcode', 'IBV_WR_BIND_MW');
    s().setFormField('qp.create', 'type', 'IBV_QPT_UD');
    s().setPanel('wire'); s().setPanel('queues');
    expect(s().forms['post.send']).toEqual({ rkeyOf: 'MR:7', opcode: 'IBV_WR_BIND_MW' });
    expect(s().forms['qp.create']).toEqual({ type: 'IBV_QPT_UD' });
    s().setFormField('post.send', 'rkeyOf', undefined);   // back to the derived default
    expect(s().forms['post.send']).toEqual({ opcode: 'IBV_WR_BIND_MW' });
    expect(await s().resetSession(1)).toBe(true);
    expect(s().forms).toEqual({});
  });
});

describe('verb rules', () => {
  it('checks ibv_reg_mr\'s LOCAL_WRITE rule on mr.reg and mr.rereg, not on a window bind', () => {
    expect(commandProblem({ cmd: 'mr.reg', args: { pd: 1, addr: 0, length: 64, access: ['IBV_ACCESS_REMOTE_WRITE'] } })).toMatch(/LOCAL_WRITE/);
    expect(commandProblem({ cmd: 'mr.rereg', args: { mr: 1, access: ['IBV_ACCESS_REMOTE_ATOMIC'] } })).toMatch(/LOCAL_WRITE/);
    expect(commandProblem({ cmd: 'mw.bind', args: { qp: 1, mw: 2, mr: 3, addr: 0, length: 64, access: ['IBV_ACCESS_REMOTE_WRITE'] } })).toBeNull();
  });
  it('lays out every WR opcode the protocol takes, with the fields of its ibv_send_wr union member', () => {
    expect(Object.keys(WR_FIELDS).sort()).toEqual([...WrOpcode.names].sort());
    expect(hasField('IBV_WR_LOCAL_INV', 'invalidate') && !hasField('IBV_WR_LOCAL_INV', 'sg')).toBe(true);
    expect(hasField('IBV_WR_SEND_WITH_INV', 'invalidate') && hasField('IBV_WR_SEND_WITH_INV', 'sg')).toBe(true);
    expect(hasField('IBV_WR_BIND_MW', 'bind') && !hasField('IBV_WR_BIND_MW', 'sg')).toBe(true);
    expect(hasField('IBV_WR_ATOMIC_CMP_AND_SWP', 'swap') && !hasField('IBV_WR_ATOMIC_FETCH_AND_ADD', 'swap')).toBe(true);
    expect(hasField('IB_WR_REG_MR', 'reg')).toBe(true);
    expect(incRkey(0x1234ff)).toBe(0x123400);   // ibv_inc_rkey: the key byte wraps, the index stays
    expect(incRkey(0x123405)).toBe(0x123406);
  });
});
