// Mutable lookups derived from the device's events (and from the host's replies, which carry the same
// objects' full descriptions). High-rate updates mutate these in place; the store publishes a version
// number per domain once per animation frame (docs/console.md).
// One file per model (models/): the key table, the queues, the wire log, memory writes, key checks.
export * from './models/keys.ts';
export * from './models/queues.ts';
export * from './models/wire.ts';
export * from './models/memory.ts';
export * from './models/keychecks.ts';
