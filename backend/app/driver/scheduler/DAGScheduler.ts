import { Value } from '@sinclair/typebox/value';
import { truncateMessage } from '../../../protocol/bounds.js';
import type { WickListenerEvent } from '../../../protocol/listener.js';
import { MapStatus } from '../../../protocol/shuffle.js';
import type { PartitionAction, PartitionSource, Transformation } from '../../../protocol/task.js';
import { MapOutputTracker } from './MapOutputTracker.js';
import {
  numPartitionsOf,
  type RddPlan,
  resolveSteps,
  type ShuffleDependency,
  transformationsAt,
} from './plan.js';
import { FetchFailedJobError, JobFailedError, type JobSpec } from './TaskScheduler.js';

export interface DagLog {
  info(text: string): void;
  warn(text: string): void;
}

/** Where the scheduler tells of its jobs and stages (the driver's listener bus), and the time. */
export interface DagEvents {
  post(event: WickListenerEvent): void;
  now(): number;
}

const noEvents: DagEvents = { post() {}, now: () => Date.now() };

/** A shuffle's map stage (Spark's ShuffleMapStage), kept for the application's life. */
interface ShuffleMapStage {
  id: number;
  shuffleId: number;
  numMaps: number;
  /** Task sets it has run. */
  runs: number;
}

/** What the scheduler did, for tests and logs. */
export interface DagStats {
  jobs: number;
  mapStagesRun: number;
  mapStagesSkipped: number;
  stagesResubmitted: number;
}

/**
 * Spark's DAGScheduler: a job is the stages of its RDD's lineage cut at shuffle boundaries. Each
 * shuffle's ShuffleMapStage runs (its missing map partitions only) once its own parents are done,
 * then the ResultStage runs the action. Map outputs stay registered with the MapOutputTracker for
 * the application's life, so a later job that reads the same shuffle skips its stage. When a task
 * cannot fetch a map output (FetchFailed), the outputs of that executor are dropped and the
 * stage that failed runs again after its parents have recomputed what is missing, at most
 * wick.stage.maxConsecutiveAttempts times in a row.
 *
 * Task sets go to the TaskScheduler (`submit`), one per stage attempt; their results come back
 * in partition order.
 */
export class DAGScheduler {
  readonly mapOutputs = new MapOutputTracker();
  readonly stats: DagStats = {
    jobs: 0,
    mapStagesRun: 0,
    mapStagesSkipped: 0,
    stagesResubmitted: 0,
  };
  private readonly stages = new Map<number, ShuffleMapStage>();
  /** Shuffles being computed, so that concurrent jobs that need one wait for the same run. */
  private readonly computing = new Map<number, Promise<void>>();
  private nextStageId = 0;
  private nextJobId = 0;
  /**
   * Executors lost so far (an application never reuses an id): the outputs they served
   * themselves are not kept; those of executors lost with their worker are not kept at all.
   */
  private readonly lostExecutors = new Set<string>();
  private readonly lostWithWorker = new Set<string>();

  constructor(
    private readonly submit: (spec: JobSpec) => Promise<unknown[]>,
    private readonly maxConsecutiveAttempts: number,
    private readonly log: DagLog,
    private readonly events: DagEvents = noEvents,
  ) {}

  /**
   * Runs an action's job: its missing map stages, then its ResultStage. Tells the bus of the job
   * (JobStart with every stage it needs, skipped ones too, then JobEnd) and of each stage attempt
   * submitted and completed, as Spark's DAGScheduler posts them.
   */
  async runJob(plan: RddPlan, action: PartitionAction): Promise<unknown[]> {
    const jobId = this.nextJobId++;
    this.stats.jobs++;
    // Parents first, as Spark numbers them: a job's ResultStage has its highest stage id.
    const mapStageIds = this.mapStageIds(plan);
    const resultStageId = this.nextStageId++;
    this.events.post({
      event: 'WickListenerJobStart',
      jobId,
      stageIds: [...mapStageIds, resultStageId],
      time: this.events.now(),
    });
    try {
      const results = await this.runResultStage(plan, action, jobId, resultStageId);
      this.events.post({
        event: 'WickListenerJobEnd',
        jobId,
        result: 'JobSucceeded',
        time: this.events.now(),
      });
      return results;
    } catch (err) {
      this.events.post({
        event: 'WickListenerJobEnd',
        jobId,
        result: 'JobFailed',
        error: truncateMessage(String((err as Error)?.message ?? err)),
        time: this.events.now(),
      });
      throw err;
    }
  }

  private async runResultStage(
    plan: RddPlan,
    action: PartitionAction,
    jobId: number,
    stageId: number,
  ): Promise<unknown[]> {
    const stageName = `ResultStage ${stageId} of job ${jobId}`;
    let results: unknown[] | undefined;
    let pending: number[] | undefined;
    for (let attempt = 1; ; attempt++) {
      await this.computeParents(plan, jobId);
      await resolveSteps(plan);
      const full = this.specOf(plan, action);
      results ??= new Array(full.sources.length);
      const todo = pending ?? full.sources.map((_, i) => i);
      try {
        const spec = pending ? subset(full, todo) : full;
        const got = await this.submitStage(
          spec,
          stageId,
          attempt - 1,
          jobId,
          stageName,
          this.parentStageIds(plan),
        );
        for (const [i, r] of got.entries()) results[todo[i] as number] = r;
        return results;
      } catch (err) {
        if (!(err instanceof FetchFailedJobError)) throw err;
        // A resubmitted ResultStage runs only the partitions that had not finished (Spark's).
        for (const [i, r] of err.finished) results[todo[i] as number] = r;
        pending = todo.filter((_, i) => !err.finished.has(i));
        this.fetchFailed(err, stageName, attempt);
      }
    }
  }

  /** A stage attempt's task set, between its StageSubmitted and its StageCompleted. */
  private async submitStage(
    spec: JobSpec,
    stageId: number,
    stageAttemptId: number,
    jobId: number,
    name: string,
    parentIds: number[],
  ): Promise<unknown[]> {
    const numTasks = spec.sources.length;
    const stage = { stageId, stageAttemptId, name: name.slice(0, 200), numTasks };
    this.events.post({
      event: 'WickListenerStageSubmitted',
      ...stage,
      jobId,
      time: this.events.now(),
      parentIds,
    });
    try {
      const results = await this.submit({ ...spec, stage: { stageId, stageAttemptId } });
      this.events.post({ event: 'WickListenerStageCompleted', ...stage, time: this.events.now() });
      return results;
    } catch (err) {
      this.events.post({
        event: 'WickListenerStageCompleted',
        ...stage,
        time: this.events.now(),
        failureReason: truncateMessage(String((err as Error)?.message ?? err)),
      });
      throw err;
    }
  }

  /** The map stages whose output a plan reads directly (Spark's StageInfo.parentIds). */
  private parentStageIds(plan: RddPlan): number[] {
    return [...new Set(plan.deps.map((d) => this.stageOf(d).id))];
  }

  /** The ids of the map stages a plan needs, parents first (given ids now if new). */
  private mapStageIds(plan: RddPlan, into: number[] = [], seen = new Set<number>()): number[] {
    for (const dep of plan.deps) {
      if (seen.has(dep.shuffleId)) continue;
      seen.add(dep.shuffleId);
      this.mapStageIds(dep.parent, into, seen);
      into.push(this.stageOf(dep).id);
    }
    return into;
  }

  /**
   * An executor is gone: the map outputs it served itself go with it. Those its worker's shuffle
   * service serves (MapStatus.shuffleService) stay, unless its worker was lost too (Spark's
   * removeExecutorAndUnregisterOutputs: with the external shuffle service, only a lost host or a
   * FetchFailed unregisters them). Decided per output rather than by an application setting, so
   * that executors on workers with and without the service can serve one shuffle.
   */
  executorLost(executorId: string, workerLost = false): void {
    if (workerLost) this.lostWithWorker.add(executorId);
    else this.lostExecutors.add(executorId);
    const n = this.mapOutputs.removeOutputsOnExecutor(executorId, !workerLost);
    if (n > 0) this.log.info(`Lost ${n} map output(s) with executor ${executorId}`);
  }

  /** A worker is lost (WorkerRemoved): the outputs its shuffle service served are gone. */
  workerRemoved(workerId: string, host: string): void {
    const n = this.mapOutputs.removeOutputsOnHost(host);
    if (n > 0) {
      this.log.info(
        `Lost ${n} map output(s) served by the shuffle service of worker ${workerId} on ${host}`,
      );
    }
  }

  /** Whether an output a task just reported was lost already (its executor or its worker gone). */
  private lostAlready(s: MapStatus): boolean {
    if (s.shuffleService === true) {
      return this.lostWithWorker.has(s.executorId);
    }
    return this.lostExecutors.has(s.executorId) || this.lostWithWorker.has(s.executorId);
  }

  private fetchFailed(err: FetchFailedJobError, stageName: string, attempt: number): void {
    const f = err.fetchFailed;
    // A shuffle service that failed a fetch is likely gone with its worker, which the master
    // says only after its timeout: drop all it serves now, rather than one FetchFailed (and one
    // attempt of wick.stage.maxConsecutiveAttempts) per executor that wrote there.
    const s = this.mapOutputs.status(f.shuffleId, f.mapId);
    if (s?.shuffleService === true && s.executorId === f.executorId) {
      this.mapOutputs.removeOutputsAt(s.location);
    }
    this.mapOutputs.removeOutputsOnExecutor(f.executorId);
    const parent = this.stages.get(f.shuffleId);
    if (attempt >= this.maxConsecutiveAttempts) {
      throw new JobFailedError(
        `Job aborted: ${stageName} failed ${attempt} consecutive times on fetch failures (wick.stage.maxConsecutiveAttempts = ${this.maxConsecutiveAttempts}); most recent: ${err.message}`,
      );
    }
    this.log.warn(
      `${stageName} could not fetch map output ${f.mapId} of shuffle ${f.shuffleId} from executor ${f.executorId} (FetchFailed: ${err.message}); resubmitting ShuffleMapStage ${parent?.id ?? '?'} (its lost partitions) and then ${stageName} (attempt ${attempt + 1} of ${this.maxConsecutiveAttempts})`,
    );
  }

  private async computeParents(plan: RddPlan, jobId: number): Promise<void> {
    // Independent parents (a join's two sides) run at the same time, as Spark submits them.
    await Promise.all(plan.deps.map((d) => this.computeShuffle(d, jobId)));
  }

  private computeShuffle(dep: ShuffleDependency, jobId: number): Promise<void> {
    let p = this.computing.get(dep.shuffleId);
    if (!p) {
      p = this.runShuffleMapStage(dep, jobId).finally(() => this.computing.delete(dep.shuffleId));
      this.computing.set(dep.shuffleId, p);
    }
    return p;
  }

  private stageOf(dep: ShuffleDependency): ShuffleMapStage {
    let s = this.stages.get(dep.shuffleId);
    if (!s) {
      s = {
        id: this.nextStageId++,
        shuffleId: dep.shuffleId,
        numMaps: numPartitionsOf(dep.parent),
        runs: 0,
      };
      this.stages.set(dep.shuffleId, s);
      this.mapOutputs.registerShuffle(dep.shuffleId, s.numMaps);
    }
    return s;
  }

  private async runShuffleMapStage(dep: ShuffleDependency, jobId: number): Promise<void> {
    const stage = this.stageOf(dep);
    const name = `ShuffleMapStage ${stage.id} (shuffle ${dep.shuffleId})`;
    let ran = false;
    for (let attempt = 1; ; ) {
      await this.computeParents(dep.parent, jobId);
      const missing = this.mapOutputs.missing(dep.shuffleId);
      if (missing.length === 0) {
        if (!ran) {
          this.stats.mapStagesSkipped++;
          this.log.info(`Skipping ${name}: its ${stage.numMaps} map outputs are available`);
        }
        return;
      }
      if (stage.runs > 0) {
        this.stats.stagesResubmitted++;
        this.log.info(
          `Resubmitting ${name}: ${missing.length} of ${stage.numMaps} map outputs are missing`,
        );
      } else {
        this.log.info(`Submitting ${name} with ${missing.length} tasks`);
      }
      const stageAttemptId = stage.runs++;
      this.stats.mapStagesRun++;
      const partitioner = await dep.partitioner();
      await resolveSteps(dep.parent);
      const full = this.specOf(dep.parent, {
        kind: 'shuffleWrite',
        shuffleId: dep.shuffleId,
        numPartitions: dep.numPartitions,
        partitioner,
        ...(dep.aggregator ? { aggregator: dep.aggregator } : {}),
        ...(dep.mapSideCombine ? { mapSideCombine: true } : {}),
      });
      let results: unknown[];
      try {
        results = await this.submitStage(
          subset(full, missing),
          stage.id,
          stageAttemptId,
          jobId,
          name,
          this.parentStageIds(dep.parent),
        );
      } catch (err) {
        if (!(err instanceof FetchFailedJobError)) throw err;
        this.fetchFailed(err, name, attempt++);
        continue;
      }
      for (const [i, r] of results.entries()) {
        const mapId = missing[i] as number;
        if (
          !Value.Check(MapStatus, r) ||
          r.sizes.length !== dep.numPartitions ||
          r.crc32s.length !== dep.numPartitions
        ) {
          throw new JobFailedError(
            `Map task ${mapId} of ${name} returned ${JSON.stringify(r)?.slice(0, 200)}, not a MapStatus with ${dep.numPartitions} sizes and CRC-32s`,
          );
        }
        // A task set's results come when all its tasks are done: an executor lost meanwhile
        // took the outputs it wrote, which then run again.
        if (!this.lostAlready(r)) this.mapOutputs.registerMapOutput(dep.shuffleId, mapId, r);
      }
      // Outputs lost meanwhile (an executor gone) are run again; their parents are checked then.
      if (this.mapOutputs.missing(dep.shuffleId).length === 0) return;
      ran = true;
      attempt = 1;
    }
  }

  /** A source with its shuffle reads' blocks located now (a coalesced partition's too). */
  private located<S extends PartitionSource>(s: S): S {
    if (s.kind === 'shuffle')
      return { ...s, blocks: this.mapOutputs.blocksFor(s.shuffleId, s.reduceId) };
    if (s.kind === 'coalesced')
      return { ...s, parts: s.parts.map((p) => ({ ...p, source: this.located(p.source) })) };
    return s;
  }

  /** The task set of a stage: every partition's source (shuffle reads located now) and functions. */
  private specOf(plan: RddPlan, action: PartitionAction): JobSpec {
    const sources: PartitionSource[] = [];
    const per: JobSpec['transformations'][] = [];
    let uniform = true;
    for (const seg of plan.segments) {
      for (const [local, s] of seg.sources().entries()) {
        sources.push(this.located(s));
        const own = transformationsAt(seg, local);
        if (own) uniform = false;
        per.push(own ?? (seg.transformations as Transformation[]));
      }
    }
    const single = plan.segments.length === 1 && uniform;
    return {
      sources,
      transformations: single ? (per[0] ?? []) : [],
      ...(single ? {} : { partitionTransformations: per }),
      action,
    };
  }
}

function subset(spec: JobSpec, partitions: number[]): JobSpec {
  return {
    ...spec,
    sources: partitions.map((p) => spec.sources[p] as PartitionSource),
    ...(spec.partitionTransformations
      ? {
          partitionTransformations: partitions.map((p) => spec.partitionTransformations?.[p] ?? []),
        }
      : {}),
    partitions,
  };
}
