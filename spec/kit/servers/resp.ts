/**
 * A minimal RESP client: one command on a fresh connection. Readiness checks and fault
 * injection must not depend on ioredis, which would retry and queue instead of failing fast.
 */
import net from 'node:net';
// Timers from the module, not the globals: specs may install jest fake timers.
import { clearTimeout, setTimeout } from 'node:timers';
import { HOST } from './ports';

function encodeCommand(args: string[]): string {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
}

/** One complete reply from the start of `buf`, or undefined if more bytes are needed. */
function parseReply(buf: Buffer): { ok: boolean; value: string } | undefined {
  const eol = buf.indexOf('\r\n');
  if (eol < 0) return undefined;
  const head = buf.subarray(0, eol).toString();
  switch (head[0]) {
    case '+':
    case ':':
      return { ok: true, value: head.slice(1) };
    case '-':
      return { ok: false, value: head.slice(1) };
    case '$': {
      const len = Number(head.slice(1));
      if (len < 0) return { ok: true, value: '' };
      if (buf.length < eol + 2 + len + 2) return undefined;
      return { ok: true, value: buf.subarray(eol + 2, eol + 2 + len).toString() };
    }
    default:
      return { ok: false, value: `unexpected reply: ${JSON.stringify(head)}` };
  }
}

/** Sends one command on a fresh connection; rejects on error reply, close or timeout. */
export function rawCommand(port: number, args: string[], timeoutMs = 2_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    let done = false;
    const socket = net.createConnection({ host: HOST, port });
    const finish = (err: Error | undefined, value?: string): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve(value ?? '');
    };
    const timer = setTimeout(
      () => finish(new Error(`${args[0]} on 127.0.0.1:${port}: no reply within ${timeoutMs} ms`)),
      timeoutMs,
    );
    socket.once('connect', () => socket.write(encodeCommand(args)));
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      const reply = parseReply(buf);
      if (!reply) return;
      if (reply.ok) finish(undefined, reply.value);
      else finish(new Error(`${args[0]} on 127.0.0.1:${port}: ${reply.value}`));
    });
    socket.once('error', (err) => finish(err));
    socket.once('close', () => finish(new Error(`${args[0]} on 127.0.0.1:${port}: connection closed`)));
  });
}
