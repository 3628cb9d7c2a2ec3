/**
 * A client uploading a large body, in its own process (as kube-scheduler is: with the client in the server's own
 * process, the race this is for never shows). Writes `head`, then a body of `fill` bytes in 64 KiB pieces (70 MiB at
 * most; each piece chunk-framed when `chunked` is 1), each after the last was taken, reading whatever comes
 * meanwhile; `count` connections one after another. Prints a JSON array: what each connection read by the time it
 * closed (a write that fails once the server closed, EPIPE or ECONNRESET, ends it too).
 *
 * Usage: node uploadingClient.mjs PORT HEAD FILL CHUNKED COUNT
 */
import { connect } from 'node:net';

const [port, head, fill, chunked, count] = process.argv.slice(2);
const piece = Buffer.alloc(64 * 1024, Number(fill));
const framed =
  chunked === '1'
    ? Buffer.concat([Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n')])
    : piece;

function upload() {
  return new Promise((resolve) => {
    let text = '';
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write(head);
      let sent = 0;
      const more = () => {
        while (!socket.destroyed && sent < 70 * 1024 * 1024) {
          sent += piece.length;
          if (!socket.write(framed)) return void socket.once('drain', more);
        }
      };
      more();
    });
    socket.on('data', (d) => (text += d.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(text));
  });
}

const replies = [];
for (let i = 0; i < Number(count); i++) replies.push(await upload());
process.stdout.write(JSON.stringify(replies));
