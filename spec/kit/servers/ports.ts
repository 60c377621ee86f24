/**
 * Free ports on 127.0.0.1 for the test servers. Port 6379 is never used: another Redis
 * lives there.
 */
import net, { type AddressInfo } from 'node:net';

export const HOST = '127.0.0.1' as const;
/** The port of the Redis on this machine that is not ours. */
const FORBIDDEN_PORT = 6379;

/**
 * Ports handed out by this process: the probe socket is closed before
 * redis-server binds, so parallel starts could otherwise get the same port.
 */
const handedOut = new Set<number>();

function probePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.unref();
    probe.once('error', reject);
    probe.listen(0, HOST, () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await probePort();
    if (port === FORBIDDEN_PORT || handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error('freePort: no free port found on 127.0.0.1 after 50 attempts');
}

export function assertUsablePort(port: number): void {
  if (!Number.isInteger(port) || port <= 0 || port > 65535) {
    throw new RangeError(`port must be an integer in 1..65535, got ${port}`);
  }
  if (port === FORBIDDEN_PORT) {
    throw new RangeError('port 6379 belongs to a Redis that is not ours; never use it');
  }
}
