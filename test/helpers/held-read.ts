/**
 * A session read as the commands that build on its sidecar read it: the sidecar loaded first
 * (or none), the read told what it must take of it, then the sidecar held against the session
 * (sidecar/previous.ts), for tests that plan or compact what they read.
 */
import type { LoadOptions, MessagesOf } from '../../src/read/index.js';
import { loadSession } from '../../src/read/index.js';
import { heldSubject, loadPrevious, sidecarReading } from '../../src/sidecar/previous.js';

export async function loadHeld<Options extends Omit<LoadOptions, 'sidecar'>>(path: string, options: Options, withSidecar = true) {
  const state = withSidecar ? await loadPrevious(path) : null;
  const loaded = await loadSession<Options & Pick<LoadOptions, 'sidecar'>>(path, { ...options, sidecar: sidecarReading(state) });
  const held = heldSubject<MessagesOf<Options>>(path, loaded, state, { strict: options.strict ?? false });
  return { ...loaded, ...held };
}
