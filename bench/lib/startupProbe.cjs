// Start-up probe (issue 31, phase timings): loaded with NODE_OPTIONS=--require <this file> into
// Wick's processes, it writes `PROBE {json}` lines to stderr with wall-clock stamps (epoch ms) and
// CPU times (ms) of an executor's start: Node's own start (performance.timeOrigin), this file's
// load (Node booted), the CLI bundle's compile (vm.Script in dist/wick.cjs, with or without a code
// cache) and the log lines "Connecting to driver" and "Successfully registered with driver".
// A worker's line says when it spawned each child; a submit's, when its driver saw the executor
// added and registered. bench/lib/executorStartPhases.ts reads them.
const now = () => performance.timeOrigin + performance.now();
const cpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const argv = process.argv;
const role = argv.includes('executor')
  ? 'executor'
  : argv.includes('executor-standby')
    ? 'standby'
    : argv.includes('worker')
      ? 'worker'
      : argv.includes('submit')
        ? 'submit'
        : undefined;
if (role) {
  const marks = { role, pid: process.pid, timeOrigin: performance.timeOrigin, preload: now() };
  const write = process.stderr.write.bind(process.stderr);
  const emit = (event) =>
    write(`PROBE ${JSON.stringify({ ...marks, event, at: now(), cpuAt: cpu() })}\n`);
  const vm = require('node:vm');
  const Script = vm.Script;
  vm.Script = function ProbedScript(source, options) {
    marks.compileStart ??= now();
    marks.cpuCompileStart ??= cpu();
    const script = new Script(source, options);
    marks.compileEnd ??= now();
    marks.cpuCompileEnd ??= cpu();
    marks.hadCache = options?.cachedData !== undefined;
    marks.cacheRejected = script.cachedDataRejected;
    return script;
  };
  const lines = {
    connecting: /Connecting to driver/,
    registered: /Successfully registered with driver/,
    added: /Executor added: /,
    driverRegistered: /Registered executor .* with ID /,
  };
  const last = new Set(['registered', 'driverRegistered']);
  process.stderr.write = (chunk, ...rest) => {
    const text = String(chunk);
    let done;
    for (const [k, re] of Object.entries(lines)) {
      if (marks[k] !== undefined || !re.test(text)) continue;
      marks[k] = now();
      marks[`cpu_${k}`] = cpu();
      if (last.has(k)) done = k;
    }
    const r = write(chunk, ...rest);
    if (done) emit(done);
    return r;
  };
  if (role === 'worker') {
    const cp = require('node:child_process');
    const spawn = cp.spawn;
    cp.spawn = function probedSpawn(file, args, ...rest) {
      const at = now();
      const child = spawn.call(this, file, args, ...rest);
      const appId = (args ?? []).join(' ').match(/--app-id (\S+)/)?.[1];
      write(`PROBE ${JSON.stringify({ role, event: 'spawn', at, after: now(), file, appId })}\n`);
      return child;
    };
  }
}
