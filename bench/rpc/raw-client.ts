import net from 'node:net';

interface Response {
  jsonrpc: '2.0';
  id: number;
  result: { type: string; seq: number };
}

/**
 * The baseline client of the rpc benchmark: one socket, requests shaped like Wick's (a JSON-RPC
 * request carrying an envelope), responses matched to their promise by id.
 */
export class RawClient {
  private nextId = 1;
  private readonly waiting = new Map<number, (r: Response['result']) => void>();
  private buf = '';

  private constructor(private readonly socket: net.Socket) {
    socket.setNoDelay(true);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.buf += chunk;
      let nl = this.buf.indexOf('\n');
      while (nl !== -1) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        const res = JSON.parse(line) as Response;
        const resolve = this.waiting.get(res.id);
        this.waiting.delete(res.id);
        resolve?.(res.result);
        nl = this.buf.indexOf('\n');
      }
    });
  }

  static connect(port: number): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: '127.0.0.1', port }, () => resolve(new RawClient(socket)));
      socket.once('error', reject);
    });
  }

  ping(seq: number): Promise<Response['result']> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      const req = {
        jsonrpc: '2.0',
        id,
        method: 'Ping',
        params: {
          to: 'Echo',
          from: 'client-benchClient-0123456789ab',
          message: { type: 'Ping', seq },
        },
      };
      this.socket.write(`${JSON.stringify(req)}\n`);
    });
  }

  close(): void {
    this.socket.destroy();
  }
}
