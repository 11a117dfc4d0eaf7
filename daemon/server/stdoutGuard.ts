/**
 * stdout is the wire: one stray byte corrupts the framing. `claimStdout` hands the RPC writer
 * a private handle on the real stdout and sends everything else that writes there
 * (`process.stdout.write`, `console.log/info/debug`) to stderr. Call it before loading
 * anything that might print.
 */
import { Writable } from 'node:stream';

export function claimStdout(): Writable {
  const stdout = process.stdout;
  const writeToStdout = stdout.write.bind(stdout);
  const wire = new Writable({
    write(chunk: Buffer, _encoding, done) {
      writeToStdout(chunk, (error) => done(error ?? null));
    },
  });
  stdout.on('error', (error) => wire.destroy(error));
  stdout.write = process.stderr.write.bind(process.stderr) as typeof stdout.write;
  console.log = console.error;
  console.info = console.error;
  console.debug = console.error;
  return wire;
}
