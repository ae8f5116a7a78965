/**
 * The master process of the `master` benchmark: a real Master (startMaster, as `wick master` runs
 * it) on loopback, alone in its process so that its CPU time can be read from /proc. Prints
 * {"address","pid","webUiPort"} when ready; exits on SIGTERM or when stdin closes.
 *
 *   node --import tsx bench/lib/masterServer.ts [key=value ...]   (extra configuration)
 *
 * Commands on stdin (control.ts): `profile-start {}` and `profile-stop {file}` take a CPU profile
 * of just the span between them (node:inspector), written to `file` as a .cpuprofile.
 */
import { WickConf } from '../../backend/conf/WickConf.js';
import { MasterWebUI } from '../../backend/http/MasterWebUI.js';
import { startMaster } from '../../backend/master/startMaster.js';
import { type Command, serveCommands } from './control.js';
import { exitWithParent } from './process.js';
import { profilingCommand } from './profiling.js';

const conf = new WickConf({
  'wick.master.host': '127.0.0.1',
  'wick.master.port': '0',
  'wick.master.ui.port': '0',
  'wick.worker.timeout': '60s',
});
for (const pair of process.argv.slice(2)) {
  const eq = pair.indexOf('=');
  if (eq > 0) conf.set(pair.slice(0, eq), pair.slice(eq + 1));
}
const running = await startMaster(conf, { webUi: MasterWebUI.start });

serveCommands(async (c: Command) => {
  const result = await profilingCommand(c);
  if (result === undefined) throw new Error(`unknown command ${c.cmd}`);
  return result;
});
exitWithParent(() => running.stop());
process.stdout.write(
  `${JSON.stringify({ address: running.env.address, pid: process.pid, webUiPort: running.webUi.port })}\n`,
);
