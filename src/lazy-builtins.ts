/**
 * Node built-ins that many runs never use (hashing, gzip, pipes, terminals, worker threads),
 * loaded on first use. An import at the top of a module is paid by every command's start-up,
 * even `estimate` of one small file; Node 20 has no `process.getBuiltinModule`, so they are
 * required here. Node caches each one, so a call after the first is a lookup.
 */
import { createRequire } from 'node:module';

const load = createRequire(import.meta.url);

export const lazyCrypto = (): typeof import('node:crypto') => load('node:crypto') as typeof import('node:crypto');
export const lazyZlib = (): typeof import('node:zlib') => load('node:zlib') as typeof import('node:zlib');
export const lazyNet = (): typeof import('node:net') => load('node:net') as typeof import('node:net');
export const lazyStream = (): typeof import('node:stream') => load('node:stream') as typeof import('node:stream');
export const lazyTty = (): typeof import('node:tty') => load('node:tty') as typeof import('node:tty');
export const lazyReadline = (): typeof import('node:readline') => load('node:readline') as typeof import('node:readline');
export const lazyV8 = (): typeof import('node:v8') => load('node:v8') as typeof import('node:v8');
export const lazyWorkerThreads = (): typeof import('node:worker_threads') => load('node:worker_threads') as typeof import('node:worker_threads');
