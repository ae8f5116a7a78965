import type { Command } from 'commander';
import { execa } from 'execa';
import { wickProtocol } from '../../protocol/index.js';
import { Ping, Pong } from '../../protocol/rpc.js';
import { RpcEndpoint, RpcEnv } from '../../rpc/index.js';

/**
 * `wick demo`: the RPC layer end to end, until SparkPi can run. It starts a second process with an
 * RpcEnv and an Echo endpoint, finds the endpoint through the verifier, asks it over TCP, prints
 * the latencies, and stops the process again.
 */
class Echo extends RpcEndpoint {
  constructor() {
    super();
    this.on(Ping, (msg) => Pong({ seq: msg.seq }));
  }
}

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('Start an RpcEnv in a second process and ask it Ping over TCP')
    .option('-n, --asks <count>', 'how many asks to send', '2000')
    .action(async (opts: { asks: string }) => {
      const count = Number(opts.asks);
      if (!Number.isInteger(count) || count < 1) {
        throw new Error(`--asks must be a whole number of at least 1, got "${opts.asks}"`);
      }
      await runDemo(count);
    });
  program
    .command('demo-server', { hidden: true })
    .description('The second process of `wick demo`')
    .action(async () => {
      const env = await RpcEnv.create({ protocol: wickProtocol, name: 'wickDemo', port: 0 });
      env.setupEndpoint('Echo', new Echo());
      process.stdout.write(`${JSON.stringify({ address: env.address })}\n`);
      const stop = () => void env.stop();
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
      await env.awaitTermination();
    });
}

async function runDemo(count: number): Promise<void> {
  const script = process.argv[1] as string;
  const child = execa(process.execPath, [script, 'demo-server'], {
    stdin: 'ignore',
    stderr: 'inherit',
    buffer: false,
  });
  try {
    const address = await firstLine(child.stdout);
    const env = await RpcEnv.create({
      protocol: wickProtocol,
      name: 'wickDemoClient',
      clientMode: true,
    });
    try {
      const ref = await env.setupEndpointRef(address, 'Echo');
      console.log(
        `Started an RpcEnv in process ${child.pid}; found ${ref} through its endpoint verifier.`,
      );
      const micros: number[] = [];
      for (let seq = 0; seq < count; seq++) {
        const t0 = process.hrtime.bigint();
        await ref.ask(Ping({ seq }));
        micros.push(Number(process.hrtime.bigint() - t0) / 1000);
      }
      micros.sort((a, b) => a - b);
      const pct = (p: number) =>
        (micros[Math.min(micros.length - 1, Math.floor(p * micros.length))] as number).toFixed(0);
      console.log(`Asked Ping ${count} times over TCP: p50 ${pct(0.5)} µs, p99 ${pct(0.99)} µs.`);
    } finally {
      await env.stop();
    }
  } finally {
    child.kill('SIGTERM');
    await child.catch(() => {});
  }
  console.log('Stopped the second process; nothing is left running.');
}

async function firstLine(stream: NodeJS.ReadableStream | null): Promise<string> {
  if (!stream) throw new Error('the demo process has no stdout');
  let buf = '';
  for await (const chunk of stream) {
    buf += chunk.toString();
    const nl = buf.indexOf('\n');
    if (nl >= 0) return (JSON.parse(buf.slice(0, nl)) as { address: string }).address;
  }
  throw new Error('the demo process exited before it printed its address');
}
