/**
 * A stand-in daemon that answers nothing: once a whole request has arrived, it writes the
 * header and the first bytes of a frame's body, then exits — a daemon killed mid-write.
 */
import { fileURLToPath } from 'node:url';

export const HALF_FRAME_DAEMON: readonly string[] = ['--import', import.meta.resolve('tsx'), fileURLToPath(import.meta.url)];

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  let received = '';
  process.stdin.setEncoding('utf8').on('data', (text: string) => {
    received += text;
    const header = /Content-Length: (\d+)\r\n\r\n/.exec(received);
    if (header === null || received.length < header.index + header[0].length + Number(header[1])) return;
    process.stdout.write('Content-Length: 4096\r\n\r\n{"jsonrpc":"2.0","id":', () => process.exit(1));
  });
}
