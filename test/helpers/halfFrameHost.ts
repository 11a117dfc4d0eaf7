/**
 * A program using the client library whose daemon dies in the middle of a frame: it prints how
 * the spawn failed and returns, and then must exit on its own like any program with no work left.
 */
import { PatchClient } from '../../client/index.ts';
import { HALF_FRAME_DAEMON } from './halfFrameDaemon.ts';

try {
  await PatchClient.spawn({ daemonArgs: HALF_FRAME_DAEMON });
  console.log('spawned');
} catch (error) {
  console.log((error as Error).name);
}
