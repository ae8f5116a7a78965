// Over 400 lines on purpose: the fused loops (pipelineLoop) and the general push pipeline they
// shortcut must agree element for element, and a property test checks them side by side; kept
// together so that a change to one is made next to the other.
import { tmpdir } from 'node:os';
import vm from 'node:vm';
import type {
  FunctionSpec,
  PartitionAction,
  PartitionSource,
  TaskDescription,
  TaskMetrics,
} from '../../protocol/task.js';
import { spillDirOf } from '../shuffle/spillFiles.js';
import type { FunctionCompiler, TaskPlace } from './compile.js';
import { emitShuffle, type ShuffleInput } from './shuffleRead.js';
import { DEFAULT_SPILL_THRESHOLD, shuffleWriter } from './shuffleWrite.js';
import type { SpillContext } from './spillContext.js';
import { emitLines } from './textFile.js';

/**
 * A reduce task as the executor hands it to a thread: with its fetched shuffle blocks, in memory
 * or in a file (wick.reducer.maxSizeFetchToMem), and what the fetch measured.
 */
export type TaskWithBlocks = TaskDescription & {
  /** One per shuffle read of its source (a coalesced partition's parts may have several), in order. */
  shuffleInputs?: ShuffleInput[];
  fetchMetrics?: NonNullable<TaskMetrics['shuffleRead']>;
};

/**
 * The running task's place, as Spark's TaskContext.get() gives it, on the task thread's global
 * `wickTaskContext`: a debugger's condition (Debug Failed Task's `wickTaskContext.partitionId
 * === 3`) or a log line in a task function reads it. A thread runs one task at a time, so the
 * global is the task's while it runs.
 */
function setTaskContext(task: TaskDescription): void {
  (globalThis as { wickTaskContext?: unknown }).wickTaskContext = Object.freeze({
    stageId: task.stageId,
    partitionId: task.partition,
    attemptNumber: task.attempt,
    taskAttemptId: task.taskId,
    // Spark's TaskContext.resources(): the addresses this task holds, as ResourceInformation.
    resources: Object.freeze(
      Object.fromEntries(
        Object.entries(task.resources ?? {}).map(([name, addresses]) => [
          name,
          Object.freeze({ name, addresses: Object.freeze([...addresses]) }),
        ]),
      ),
    ),
  });
}

/**
 * Runs one task: streams its partition's elements through the transformations into the action,
 * with no intermediate arrays or iterators (a push pipeline), so that a tight job such as SparkPi
 * runs at close to the speed of a hand-written loop. Returns the action's per-partition result;
 * the driver combines the partitions'.
 */
export async function runTask(
  task: TaskDescription,
  compiler: FunctionCompiler,
  metrics: TaskMetrics = {},
): Promise<unknown> {
  setTaskContext(task);
  await compiler.prepare(task);
  const fetched = (task as TaskWithBlocks).fetchMetrics;
  if (fetched) metrics.shuffleRead = { ...fetched };
  const loop = pipelineLoop(task, compiler);
  if (loop) return loop();
  const fn = (spec: FunctionSpec) => {
    const f = compiler.compile(spec);
    const env = spec.env;
    return env === undefined ? f : (...args: unknown[]) => f(...args, env);
  };
  const finish = action(task.action, fn, task, compiler.place, metrics);
  const ctx = spillContext(task, compiler.place, metrics);
  const inputs = [...((task as TaskWithBlocks).shuffleInputs ?? [])];
  await pushPartition(task.source, task.transformations, inputs, finish.push, finish.stopped, {
    fn,
    compile: (spec) => compiler.compile(spec),
    ctx,
    filesDir: compiler.place.filesDir,
  });
  return finish.result();
}

interface Run {
  /** A function of the task, bound to its env. */
  fn: (spec: FunctionSpec) => Fn;
  /** The same, unbound: a fused pipeline passes the env itself. */
  compile: (spec: FunctionSpec) => Fn;
  ctx: SpillContext;
  /** Where this executor keeps the files the application added (a textFile may name one). */
  filesDir: string | undefined;
}

/**
 * Streams one partition's elements through its transformations into `sink`: the task's, or one
 * parent partition of a coalesced partition (each has its own source and transformations).
 * `inputs` are the fetched shuffle inputs not read yet, in the order of the shuffle reads.
 */
async function pushPartition(
  source: PartitionSource,
  transformations: readonly T[],
  inputs: ShuffleInput[],
  sink: (v: unknown) => void,
  stopped: () => boolean,
  run: Run,
): Promise<void> {
  const { fn } = run;
  // mapPartitions needs the whole partition: split the pipeline there.
  const stages = splitAtMapPartitions(transformations);
  if (stages.mapPartitions.length === 0) {
    await emit(source, fusedPush(stages.after, run.compile, sink), stopped, inputs, run);
    return;
  }
  let elements: unknown[] = [];
  const collect = fusedPush(stages.before, run.compile, (v) => elements.push(v));
  await emit(source, collect, () => false, inputs, run);
  const last = stages.mapPartitions.length - 1;
  for (const [i, mp] of stages.mapPartitions.entries()) {
    const out = (await fn(mp.fn)(elements)) as Iterable<unknown>;
    const next: unknown[] = [];
    // After the last mapPartitions, elements stream into the sink, which may stop early (take).
    const push = fusedPush(
      stages.between[i] ?? [],
      run.compile,
      i === last ? sink : (v) => next.push(v),
    );
    for (const v of out) {
      push(v);
      if (i === last && stopped()) break;
    }
    elements = next;
  }
}

type T = TaskDescription['transformations'][number];
type Fn = (...args: unknown[]) => unknown;
type Loop = (
  src: PartitionSource,
  fns: Fn[],
  envs: unknown[],
  act: Fn | undefined,
  actEnv: unknown,
  action: PartitionAction,
  none: symbol,
) => unknown;

/** Compiled pipeline loops by pipeline (its shape and its functions' sources); see pipelineLoop. */
const loops = new Map<string, Loop>();
const MAX_LOOPS = 500;

/**
 * The common pipelines (a range or an array, then map and filter, then any action) as one loop
 * compiled for the pipeline: the same steps as the push pipeline below, in the same order, with
 * each function called the same way, but written out in one function, so that V8 inlines the
 * task's functions into it and a tight job (SparkPi) runs at the speed of a hand-written loop.
 * Each distinct pipeline gets its own loop (keyed by its functions' sources, which the compiler
 * caches too), so that every call in it only ever sees the same function. Returns undefined for
 * what it does not cover (flatMap, mapPartitions, textFile), which takes the general path.
 */
function pipelineLoop(
  task: TaskDescription,
  compiler: FunctionCompiler,
): (() => unknown) | undefined {
  const src = task.source;
  if (src.kind !== 'range' && src.kind !== 'array') return undefined;
  const ts = task.transformations;
  for (const t of ts) if (t.kind !== 'map' && t.kind !== 'filter') return undefined;
  const a = task.action;
  if (a.kind === 'shuffleWrite') return undefined;
  const actSpec =
    a.kind === 'reduce' || a.kind === 'foreach'
      ? a.fn
      : a.kind === 'aggregate'
        ? a.seqOp
        : undefined;
  let key = `${src.kind}|${a.kind}|${actSpec ? `${actSpec.env === undefined ? 0 : 1}${actSpec.source}` : ''}`;
  for (const t of ts) key += `|${t.kind}${t.fn.env === undefined ? 0 : 1}${t.fn.source}`;
  // As the push pipeline: the action's function is compiled first, then the transformations'
  // from the last to the first.
  const act = actSpec ? compiler.compile(actSpec) : undefined;
  const fns: Fn[] = new Array(ts.length);
  const envs: unknown[] = new Array(ts.length);
  for (let i = ts.length - 1; i >= 0; i--) {
    const t = ts[i] as T;
    fns[i] = compiler.compile(t.fn);
    envs[i] = t.fn.env;
  }
  let loop = loops.get(key);
  if (!loop) {
    if (loops.size >= MAX_LOOPS) loops.clear();
    loop = compileLoop(src.kind, ts, a.kind, actSpec !== undefined && actSpec.env !== undefined);
    loops.set(key, loop);
  }
  const compiled = loop;
  if (a.kind === 'reduce') {
    return () => {
      const r = compiled(src, fns, envs, act, actSpec?.env, a, NO_ELEMENTS);
      return r === NO_ELEMENTS ? { empty: true } : { value: r };
    };
  }
  return () => compiled(src, fns, envs, act, actSpec?.env, a, NO_ELEMENTS);
}

/**
 * What a reduce loop returns for a partition with no elements. The loop returns the bare value,
 * and its caller wraps it: an object made at the end of the loop function is a site that has
 * never run when V8 optimizes the loop (on stack, during the first task), and in executors V8 then
 * deoptimized the loop at that site at the end of every task (about 1,400 times in SparkPi's
 * 1,000 tasks × 3 jobs), each costing the pool thread tens of microseconds.
 */
const NO_ELEMENTS = Symbol('no elements');

function compileLoop(
  source: 'range' | 'array',
  ts: readonly T[],
  action: PartitionAction['kind'],
  actHasEnv: boolean,
): Loop {
  const head: string[] = [];
  let steps = '';
  for (const [i, t] of ts.entries()) {
    head.push(`const f${i} = fns[${i}], e${i} = envs[${i}];`);
    const call = t.fn.env === undefined ? `f${i}(x)` : `f${i}(x, e${i})`;
    steps += t.kind === 'map' ? `x = ${call};\n` : `if (!${call}) continue;\n`;
  }
  const withEnv = (args: string) => (actHasEnv ? `act(${args}, actEnv)` : `act(${args})`);
  const each = eachElement(source);
  let init: string;
  let loops: string;
  let result: string;
  switch (action) {
    case 'collect':
      init = 'const out = [];';
      loops = each(`${steps}out.push(x);`);
      result = 'return out;';
      break;
    case 'count':
      init = 'let n = 0;';
      loops = each(`${steps}n++;`);
      result = 'return n;';
      break;
    case 'take':
      init = 'const out = []; const n = action.n;';
      loops = each(`${steps}if (out.length < n) out.push(x);\nif (out.length >= n) break;`);
      result = 'return out;';
      break;
    case 'reduce':
      // Two loops: the first finds the first element, the second folds the rest in, so that the
      // loop that does the work tests no "first element yet?" flag on every element. Batches of
      // 500 SparkPi tasks through runBatch on a worker thread took 1.4–2.4% more CPU than the same
      // darts in a hand-written loop so, against 2.8–5.0% with one loop (scratch harness).
      init = 'let acc; let empty = true;';
      loops = `${each(`${steps}acc = x; empty = false; NEXT; break;`)}\n${each(`${steps}acc = ${withEnv('acc, x')};`)}`;
      // The partition's result object is made by the caller (see NO_ELEMENTS).
      result = 'return empty ? none : acc;';
      break;
    case 'aggregate':
      init = 'let acc = structuredClone(action.zero);';
      loops = each(`${steps}acc = ${withEnv('acc, x')};`);
      result = 'return acc;';
      break;
    case 'foreach':
      init = '';
      loops = each(`${steps}${withEnv('x')};`);
      result = 'return null;';
      break;
    case 'shuffleWrite':
      throw new Error('A shuffle write takes the general path');
  }
  return vm.compileFunction(
    `${head.join('\n')}\n${init}\n${eachHead(source)}\n${loops}\n${result}`,
    ['src', 'fns', 'envs', 'act', 'actEnv', 'action', 'none'],
    { filename: 'wick-task-pipeline.js' },
  ) as Loop;
}

/**
 * The declarations a source's loops share: loops over one source go on from where the one before
 * them stopped (`NEXT` in a body moves past the current element).
 */
function eachHead(source: 'range' | 'array'): string {
  return source === 'range'
    ? 'const start = src.start, end = src.end, step = src.step;\nlet v = start;'
    : 'const data = src.data;\nlet i = 0;';
}

/** A loop over the source's elements, from where the last one stopped, each as `x`. */
function eachElement(source: 'range' | 'array'): (body: string) => string {
  if (source === 'array') {
    return (body) =>
      `for (; i < data.length; i++) { let x = data[i];\n${body.replace('NEXT', 'i++')}\n }`;
  }
  return (body) => {
    const b = body.replace('NEXT', 'v += step');
    return `if (step > 0) {
  for (; v < end; v += step) { let x = v;\n${b}\n }
} else {
  for (; v > end; v += step) { let x = v;\n${b}\n }
}`;
  };
}

function splitAtMapPartitions(ts: readonly T[]): {
  before: T[];
  mapPartitions: T[];
  between: T[][];
  after: readonly T[];
} {
  const first = ts.findIndex((t) => t.kind === 'mapPartitions');
  if (first < 0) return { before: [], mapPartitions: [], between: [], after: ts };
  const before = ts.slice(0, first);
  const mapPartitions: T[] = [];
  const between: T[][] = [];
  for (const t of ts.slice(first)) {
    if (t.kind === 'mapPartitions') {
      mapPartitions.push(t);
      between.push([]);
    } else {
      (between[between.length - 1] as T[]).push(t);
    }
  }
  return { before, mapPartitions, between, after: [] };
}

type Fused = (fns: Fn[], envs: unknown[], sink: (v: unknown) => void) => (v: unknown) => void;

/** Fused pipelines by their shape and functions' sources (see fusedPush). */
const fused = new Map<string, Fused>();

/**
 * The push of a pipeline of narrow transformations (no mapPartitions) as one function compiled
 * for it: each call in it only ever sees the same function, so V8 inlines the task's functions
 * into it (closures composed step by step, shared by every pipeline, call through megamorphic
 * sites: WordCount's job ran about a tenth slower through them). Keyed like pipelineLoop's loops.
 */
function fusedPush(
  ts: readonly T[],
  compile: (spec: FunctionSpec) => Fn,
  sink: (v: unknown) => void,
): (v: unknown) => void {
  if (ts.length === 0) return sink;
  let key = '';
  for (const t of ts) key += `|${t.kind}${t.fn.env === undefined ? 0 : 1}${t.fn.source}`;
  let make = fused.get(key);
  if (!make) {
    if (fused.size >= MAX_LOOPS) fused.clear();
    make = compileFused(ts);
    fused.set(key, make);
  }
  // The last function is compiled first, as the range/array loops do.
  const fns: Fn[] = new Array(ts.length);
  const envs: unknown[] = new Array(ts.length);
  for (let i = ts.length - 1; i >= 0; i--) {
    const t = ts[i] as T;
    fns[i] = compile(t.fn);
    envs[i] = t.fn.env;
  }
  return make(fns, envs, sink);
}

function compileFused(ts: readonly T[]): Fused {
  const head: string[] = [];
  let body = `sink(v${ts.length});`;
  for (let i = ts.length - 1; i >= 0; i--) {
    const t = ts[i] as T;
    head.push(`const f${i} = fns[${i}], e${i} = envs[${i}];`);
    const call = (arg: string) =>
      t.fn.env === undefined ? `f${i}(${arg})` : `f${i}(${arg}, e${i})`;
    const v = `v${i}`;
    const out = `v${i + 1}`;
    switch (t.kind) {
      case 'map':
        body = `const ${out} = ${call(v)};\n${body}`;
        break;
      case 'filter':
        body = `if (${call(v)}) {\nconst ${out} = ${v};\n${body}\n}`;
        break;
      case 'flatMap':
        body = `for (const ${out} of ${call(v)}) {\n${body}\n}`;
        break;
      case 'mapValues':
        body = `const ${out} = [${v}[0], ${call(`${v}[1]`)}];\n${body}`;
        break;
      case 'flatMapValues':
        body = `for (const y${i} of ${call(`${v}[1]`)}) {\nconst ${out} = [${v}[0], y${i}];\n${body}\n}`;
        break;
      case 'keyBy':
        body = `const ${out} = [${call(v)}, ${v}];\n${body}`;
        break;
      case 'mapPartitions':
        throw new Error('mapPartitions is handled apart');
    }
  }
  const code = `${head.join('\n')}\nreturn function fusedPush(v0) {\n${body}\n};`;
  // Named as the loops are: a stack through it points at no file of the user's.
  return vm.compileFunction(code, ['fns', 'envs', 'sink'], {
    filename: 'wick-task-pipeline.js',
  }) as Fused;
}

interface Finish {
  push: (v: unknown) => void;
  result: () => unknown | Promise<unknown>;
  /** True once the action needs no more elements (take). */
  stopped: () => boolean;
}

function spillContext(task: TaskDescription, place: TaskPlace, metrics: TaskMetrics): SpillContext {
  return {
    // Without a shuffle dir (a test's thread) a spill goes to the temp folder.
    dir: spillDirOf(place.shuffleDir ?? tmpdir()),
    taskId: task.taskId,
    threshold: place.spillThreshold ?? DEFAULT_SPILL_THRESHOLD,
    metrics,
  };
}

function action(
  a: PartitionAction,
  fn: (spec: FunctionSpec) => (...args: unknown[]) => unknown,
  task: TaskDescription,
  place: TaskPlace,
  metrics: TaskMetrics,
): Finish {
  switch (a.kind) {
    case 'shuffleWrite':
      return shuffleWriter(a, task, place, fn, metrics);
    case 'collect': {
      const out: unknown[] = [];
      return { push: (v) => out.push(v), result: () => out, stopped: () => false };
    }
    case 'count': {
      let n = 0;
      return {
        push: () => {
          n++;
        },
        result: () => n,
        stopped: () => false,
      };
    }
    case 'take': {
      const out: unknown[] = [];
      return {
        push: (v) => {
          if (out.length < a.n) out.push(v);
        },
        result: () => out,
        stopped: () => out.length >= a.n,
      };
    }
    case 'reduce': {
      const f = fn(a.fn);
      let acc: unknown;
      let empty = true;
      return {
        push: (v) => {
          if (empty) {
            acc = v;
            empty = false;
          } else acc = f(acc, v);
        },
        // An empty partition contributes nothing; the driver tells it apart from a value.
        result: () => (empty ? { empty: true } : { value: acc }),
        stopped: () => false,
      };
    }
    case 'aggregate': {
      const f = fn(a.seqOp);
      let acc = structuredClone(a.zero);
      return {
        push: (v) => {
          acc = f(acc, v);
        },
        result: () => acc,
        stopped: () => false,
      };
    }
    case 'foreach': {
      const f = fn(a.fn);
      return { push: (v) => void f(v), result: () => null, stopped: () => false };
    }
  }
}

async function emit(
  src: PartitionSource,
  push: (v: unknown) => void,
  stopped: () => boolean,
  inputs: ShuffleInput[],
  run: Run,
): Promise<void> {
  const finish = { stopped };
  switch (src.kind) {
    case 'coalesced':
      for (const part of src.parts) {
        await pushPartition(part.source, part.transformations, inputs, push, stopped, run);
        if (stopped()) return;
      }
      return;
    case 'shuffle': {
      const input = inputs.shift();
      if (!input) throw new Error('A shuffle reduce task came without its fetched blocks');
      emitShuffle(src, input, run.fn, push, stopped, run.ctx);
      return;
    }
    case 'array':
      for (const v of src.data) {
        push(v);
        if (finish.stopped()) return;
      }
      return;
    case 'range': {
      const { start, end, step } = src;
      if (step > 0) {
        for (let v = start; v < end; v += step) {
          push(v);
          if (finish.stopped()) return;
        }
      } else {
        for (let v = start; v > end; v += step) {
          push(v);
          if (finish.stopped()) return;
        }
      }
      return;
    }
    case 'textFile':
      await emitLines(src.path, run.filesDir, src.start, src.end, push, finish);
      return;
  }
}
