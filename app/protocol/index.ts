export * from './enums.ts';
export * from './commands.ts';
export * from './messages.ts';
export * from './net.ts';
export * from './eventframe.ts';
export * from './bth.ts';
export * from './descriptor.ts';
export { KIND_FACTS, OBJECT_KINDS } from './labs.ts';
export * from './attach.ts';
