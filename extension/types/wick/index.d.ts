// Written by scripts/types.mjs (npm run types): do not edit.
// The API of `import { WickContext } from 'wick'`.

declare const TaskStates: readonly [
	"LAUNCHING",
	"RUNNING",
	"FINISHED",
	"FAILED",
	"KILLED",
	"LOST"
];
export type TaskState = (typeof TaskStates)[number];
export declare class ClosureError extends Error {
	constructor(message: string);
}
/**
 * What a task measured (Spark's TaskMetrics), as StatusUpdate.metrics carries it: written out
 * here as a plain interface, for the driver program's types (it names no schema library).
 */
export interface TaskMetrics {
	/** A map task's output: its data file's bytes and records. */
	shuffleWrite?: {
		bytesWritten: number;
		recordsWritten: number;
	};
	/**
	 * A reduce task's input: bytes of blocks its own executor wrote (local) and others' (remote),
	 * those fetched to a file rather than memory, records parsed, and how long it waited for them.
	 */
	shuffleRead?: {
		localBytesRead: number;
		remoteBytesRead: number;
		remoteBytesReadToDisk: number;
		recordsRead: number;
		fetchWaitTimeMs: number;
	};
	/** Spills to disk of its shuffle buffers, their estimated size in memory and bytes written. */
	spillCount?: number;
	memoryBytesSpilled?: number;
	diskBytesSpilled?: number;
}
/** Sums task metrics (a driver program's totals over tasks). */
export declare function addTaskMetrics(into: TaskMetrics, m: TaskMetrics | undefined): TaskMetrics;
/** A task's end as a driver program hears of it (Spark's SparkListenerTaskEnd). */
export interface TaskEnd {
	taskId: number;
	/** The scheduler's job of the task (a stage attempt's task set), when it still knew it. */
	jobId?: number;
	executorId: string;
	state: Exclude<TaskState, "LAUNCHING" | "RUNNING">;
	durationMs?: number;
	/** What the task measured (shuffle bytes and records, spills); absent if nothing. */
	metrics?: TaskMetrics;
	/** The stage and its attempt the task ran for, and its partition (index). */
	stageId?: number;
	stageAttemptId?: number;
	index?: number;
	/** How a task that did not finish ended: its error, with its stack. */
	error?: string;
}
/** An action started a job (Spark's SparkListenerJobStart): its stages, the ResultStage last. */
export interface JobStart {
	jobId: number;
	/** Every stage the job needs, skipped ones too (their outputs were there already). */
	stageIds: number[];
	/** ms since the epoch */
	time: number;
}
/** A job ended (Spark's SparkListenerJobEnd). */
export interface JobEnd {
	jobId: number;
	result: "JobSucceeded" | "JobFailed";
	error?: string;
	time: number;
}
/** A stage attempt was submitted with its tasks (a rerun: only its missing partitions). */
export interface StageSubmitted {
	stageId: number;
	stageAttemptId: number;
	jobId: number;
	name: string;
	numTasks: number;
	time: number;
}
/** A stage attempt ended; failureReason when it failed (a fetch failure reruns it). */
export interface StageCompleted {
	stageId: number;
	stageAttemptId: number;
	name: string;
	numTasks: number;
	time: number;
	failureReason?: string;
}
/** A task was launched on an executor (Spark's SparkListenerTaskStart). */
export interface TaskStart {
	taskId: number;
	stageId: number;
	stageAttemptId: number;
	/** The partition it computes. */
	index: number;
	/** Its attempt at that partition (0 first). */
	attempt: number;
	executorId: string;
	time: number;
}
/**
 * What a driver program may listen to (Spark's SparkListener): added with
 * WickContext.addListener. Called in the driver's event loop, one event at a time, in the order
 * they happened; a listener that throws is logged and kept.
 */
export interface WickListener {
	onJobStart?(event: JobStart): void;
	onJobEnd?(event: JobEnd): void;
	onStageSubmitted?(event: StageSubmitted): void;
	onStageCompleted?(event: StageCompleted): void;
	onTaskStart?(event: TaskStart): void;
	onTaskEnd?(event: TaskEnd): void;
}
/**
 * A lazy, partitioned collection in the spirit of Spark's RDD. Transformations only describe work;
 * actions ship it to executors, one task per partition. Functions travel as source text: what they
 * use from outside must be passed as `env`, their last argument (`map((x, env) => x * env.k, { k })`),
 * and is checked before anything runs. Elements and results travel as JSON.
 *
 * Pair operations (reduceByKey, join, …) apply to an RDD of `[key, value]` arrays and shuffle
 * it: the job then runs in stages (DAGScheduler). Keys are JSON values, equal when their
 * canonical JSON is (docs/protocol.md, "Shuffle"): `1` and `1.0` are one key, `{a, b}` and
 * `{b, a}` too, `"1"` and `1` are two.
 */
export declare class RDD<T> {
	private readonly runner;
	/** The number of partitions (a textFile's splits are computed here if no job did yet). */
	get numPartitions(): number;
	map<U, E = undefined>(f: (x: T, env: E) => U, env?: E): RDD<U>;
	filter<E = undefined>(f: (x: T, env: E) => boolean, env?: E): RDD<T>;
	flatMap<U, E = undefined>(f: (x: T, env: E) => Iterable<U>, env?: E): RDD<U>;
	/** `f` gets a whole partition as an array and returns (or resolves to) its new elements. */
	mapPartitions<U, E = undefined>(f: (xs: T[], env: E) => Iterable<U> | Promise<Iterable<U>>, env?: E): RDD<U>;
	/** Pairs `[f(x), x]`. */
	keyBy<K, E = undefined>(f: (x: T, env: E) => K, env?: E): RDD<[
		K,
		T
	]>;
	/** This RDD's partitions, then `other`'s (no shuffle). */
	union(other: RDD<T>): RDD<T>;
	/**
	 * Each element with its index, `[x, i]`, in partition order (Spark's zipWithIndex). The first
	 * index of each partition needs the sizes of those before it: the first job that uses this RDD
	 * first runs a job that counts them (once; Spark runs it when zipWithIndex is called).
	 */
	zipWithIndex(): RDD<[
		T,
		number
	]>;
	/**
	 * At most `numPartitions` partitions (Spark's coalesce). Without a shuffle, partition i is the
	 * parent's partitions ⌊i·N/n⌋ to ⌊(i+1)·N/n⌋ − 1, read one after another in one task (Spark's
	 * grouping when partitions prefer no host), so a sorted RDD stays sorted; with fewer than
	 * `numPartitions` they stay as they are. With `shuffle`, it is repartition(numPartitions).
	 */
	coalesce(numPartitions: number, shuffle?: boolean): RDD<T>;
	mapValues<K, V, U, E = undefined>(this: RDD<[
		K,
		V
	]>, f: (v: V, env: E) => U, env?: E): RDD<[
		K,
		U
	]>;
	flatMapValues<K, V, U, E = undefined>(this: RDD<[
		K,
		V
	]>, f: (v: V, env: E) => Iterable<U>, env?: E): RDD<[
		K,
		U
	]>;
	keys<K, V>(this: RDD<[
		K,
		V
	]>): RDD<K>;
	values<K, V>(this: RDD<[
		K,
		V
	]>): RDD<V>;
	/**
	 * Spark's combineByKey: each key's values become one combiner (createCombiner, mergeValue),
	 * combined in each map task first, then across them (mergeCombiners), in `numPartitions`
	 * partitions (default: as many as this RDD has).
	 */
	combineByKey<K, V, C, E = undefined>(this: RDD<[
		K,
		V
	]>, createCombiner: (v: V, env: E) => C, mergeValue: (c: C, v: V, env: E) => C, mergeCombiners: (a: C, b: C, env: E) => C, numPartitions?: number, env?: E): RDD<[
		K,
		C
	]>;
	/** Each key's values combined with `f` (associative and commutative), map-side first. */
	reduceByKey<K, V, E = undefined>(this: RDD<[
		K,
		V
	]>, f: (a: V, b: V, env: E) => V, numPartitions?: number, env?: E): RDD<[
		K,
		V
	]>;
	/** reduceByKey starting each key (in each map task) from a copy of `zero`. */
	foldByKey<K, V, E = undefined>(this: RDD<[
		K,
		V
	]>, zero: V, f: (a: V, b: V, env: E) => V, numPartitions?: number, env?: E): RDD<[
		K,
		V
	]>;
	/** Each key's values folded into a copy of `zero` with seqOp; combOp merges the folds. */
	aggregateByKey<K, V, U, E = undefined>(this: RDD<[
		K,
		V
	]>, zero: U, seqOp: (acc: U, v: V, env: E) => U, combOp: (a: U, b: U, env: E) => U, numPartitions?: number, env?: E): RDD<[
		K,
		U
	]>;
	/** Each key with the array of its values (in no particular order). */
	groupByKey<K, V>(this: RDD<[
		K,
		V
	]>, numPartitions?: number): RDD<[
		K,
		V[]
	]>;
	/** How many elements each key has (Spark's countByKey), as a Map of the keys collected. */
	countByKey<K, V>(this: RDD<[
		K,
		V
	]>): Promise<Map<K, number>>;
	/** The same pairs, spread over `numPartitions` by the hash of their keys (HashPartitioner). */
	partitionBy<K, V>(this: RDD<[
		K,
		V
	]>, numPartitions: number): RDD<[
		K,
		V
	]>;
	/** Each key of either RDD with its values in this one and in `other` (Spark's cogroup). */
	cogroup<K, V, W>(this: RDD<[
		K,
		V
	]>, other: RDD<[
		K,
		W
	]>, numPartitions?: number): RDD<[
		K,
		[
			V[],
			W[]
		]
	]>;
	/** `[k, [v, w]]` for each pair of values of a key in both (Spark's `(K, (V, W))`). */
	join<K, V, W>(this: RDD<[
		K,
		V
	]>, other: RDD<[
		K,
		W
	]>, numPartitions?: number): RDD<[
		K,
		[
			V,
			W
		]
	]>;
	/** As join, and `[k, [v, null]]` for a key `other` lacks. */
	leftOuterJoin<K, V, W>(this: RDD<[
		K,
		V
	]>, other: RDD<[
		K,
		W
	]>, numPartitions?: number): RDD<[
		K,
		[
			V,
			W | null
		]
	]>;
	/** As join, and `[k, [null, w]]` for a key this RDD lacks. */
	rightOuterJoin<K, V, W>(this: RDD<[
		K,
		V
	]>, other: RDD<[
		K,
		W
	]>, numPartitions?: number): RDD<[
		K,
		[
			V | null,
			W
		]
	]>;
	/** Both outer joins: a key either side lacks gets `null` there. */
	fullOuterJoin<K, V, W>(this: RDD<[
		K,
		V
	]>, other: RDD<[
		K,
		W
	]>, numPartitions?: number): RDD<[
		K,
		[
			V | null,
			W | null
		]
	]>;
	/**
	 * The pairs sorted by key (the key order of docs/protocol.md): a RangePartitioner whose bounds
	 * come from a sample of the keys, taken by a job of its own when the sort's map stage first
	 * runs (Spark samples when sortByKey is called; here the RDD stays lazy), then each partition
	 * sorted. Partition i's keys all come before partition i + 1's.
	 */
	sortByKey<K, V>(this: RDD<[
		K,
		V
	]>, ascending?: boolean, numPartitions?: number): RDD<[
		K,
		V
	]>;
	/** Distinct elements (by canonical JSON). */
	distinct(numPartitions?: number): RDD<T>;
	/** The elements grouped by `f(x)`: `[key, elements]`. */
	groupBy<K, E = undefined>(f: (x: T, env: E) => K, numPartitions?: number, env?: E): RDD<[
		K,
		T[]
	]>;
	/** The elements sorted by `f(x)` (sortByKey on it). */
	sortBy<K, E = undefined>(f: (x: T, env: E) => K, ascending?: boolean, numPartitions?: number, env?: E): RDD<T>;
	/** The same elements in `numPartitions` partitions, dealt round robin (a shuffle). */
	repartition(numPartitions: number): RDD<T>;
	collect(): Promise<T[]>;
	count(): Promise<number>;
	take(n: number): Promise<T[]>;
	first(): Promise<T>;
	/** Combines the elements with `f`, which must be associative and commutative. */
	reduce<E = undefined>(f: (a: T, b: T, env: E) => T, env?: E): Promise<T>;
	fold<E = undefined>(zero: T, f: (a: T, b: T, env: E) => T, env?: E): Promise<T>;
	/** Each partition folds its elements into a copy of `zero` with seqOp; combOp merges partitions. */
	aggregate<U, E = undefined>(zero: U, seqOp: (acc: U, x: T, env: E) => U, combOp: (a: U, b: U, env: E) => U, env?: E): Promise<U>;
	sum(): Promise<number>;
	foreach<E = undefined>(f: (x: T, env: E) => void, env?: E): Promise<void>;
	private derive;
	private narrow;
	/** The partitions a shuffle of this RDD has by default: as many as it has (Spark's, unset). */
	private numPartitionsLazy;
	/** A ShuffleDependency on this RDD, and the RDD of its reducers' partitions. */
	private shuffle;
	private run;
}
/** A task by its stage and partition (protocol/common.ts's FailedTask, as a plain public type). */
export interface FailedTaskOf {
	stageId: number;
	partitionId: number;
}
export declare class JobFailedError extends Error {
	/** The task whose failures aborted the job, when one did (the application's failure names it). */
	readonly failedTask?: FailedTaskOf | undefined;
	constructor(message: string, 
	/** The task whose failures aborted the job, when one did (the application's failure names it). */
	failedTask?: FailedTaskOf | undefined);
}
export type JobStatus = "RUNNING" | "SUCCEEDED" | "FAILED";
export type StageStatus = "ACTIVE" | "COMPLETE" | "FAILED";
/** A job (Spark's SparkJobInfo, with its times). */
export interface JobInfo {
	jobId: number;
	stageIds: number[];
	status: JobStatus;
	submissionTime: number;
	completionTime?: number;
	error?: string;
}
/** A stage, at its latest attempt (Spark's SparkStageInfo, with its status and times). */
export interface StageInfo {
	stageId: number;
	currentAttemptId: number;
	name: string;
	numTasks: number;
	numActiveTasks: number;
	numCompletedTasks: number;
	numFailedTasks: number;
	submissionTime: number;
	completionTime?: number;
	status: StageStatus;
	failureReason?: string;
}
/** What a program reads of its jobs and stages (Spark's SparkStatusTracker): wc.statusTracker(). */
export interface StatusTracker {
	/** Running jobs' ids. */
	getActiveJobIds(): number[];
	/** Running stages' ids. */
	getActiveStageIds(): number[];
	getJobInfo(jobId: number): JobInfo | undefined;
	getStageInfo(stageId: number): StageInfo | undefined;
	/** Running stages, in the order they were submitted. */
	activeStages(): StageInfo[];
}
/**
 * A typed configuration key with its default, in the manner of Spark's ConfigEntry. Entries are
 * declared next to the code that reads them and collected in one registry, so that unknown keys
 * can be reported and the configuration documented.
 */
export interface ConfigEntry<T> {
	readonly key: string;
	readonly doc: string;
	readonly defaultValue: T;
	/** The default as a user would write it, for docs and messages. */
	readonly defaultText: string;
	parse(raw: string): T;
}
declare class WickConf {
	private readonly settings;
	constructor(initial?: Iterable<[
		string,
		string
	]> | Record<string, string>);
	set(key: string, value: string): this;
	getRaw(key: string): string | undefined;
	contains(key: string): boolean;
	get<T>(entry: ConfigEntry<T>): T;
	/** Parses every known key that is set, so that a daemon fails at start-up, not mid-run. */
	validate(): void;
	unknownKeys(): string[];
	entries(): [
		string,
		string
	][];
	clone(): WickConf;
}
export interface WickContextOptions {
	/** wick://host:port (or several, comma-separated); else wick.master, else WICK_MASTER. */
	master?: string;
	/** Else wick.app.name, else WICK_APP_NAME. */
	appName?: string;
	/** wick.* settings; they override what `wick submit` passed. */
	conf?: Record<string, string>;
}
/**
 * The entry point of a Wick application (Spark's SparkContext): connects to the cluster, gets
 * executors, and runs the jobs of the RDDs made from it.
 *
 *   const wc = await WickContext.create({ appName: 'Pi' });
 *   const n = await wc.range(0, 1000, 1, 4).map((x) => x * x).reduce((a, b) => a + b);
 *   await wc.stop();
 */
export declare class WickContext {
	readonly conf: WickConf;
	readonly appName: string;
	readonly master: string;
	private stopped;
	private readonly addedFiles;
	private activeJobs;
	private keepAlive;
	private readonly onBeforeExit;
	private nextShuffleId;
	private readonly env;
	private readonly driver;
	private readonly client;
	private readonly fileServer;
	/** The driver's events: where the application's listeners hang (assembleDriver.ts). */
	private readonly bus;
	/**
	 * The program called process.exit() before stop(): no stop can run now (nothing asynchronous
	 * does), but the unregister is one write on an open socket, which goes out at once. Its status
	 * says how the application ended; should the write not make it, the master sees the connection
	 * drop and ends the application FAILED anyway.
	 */
	private readonly onExit;
	/**
	 * stop() has stopped the executors, but how the application ended is not said yet: that waits
	 * for the end of the turn (see end()), and a failure or the process's exit meanwhile decides it.
	 */
	private verdictPending;
	/** The verdict a plain stop() left open was a failure (see end). */
	private failedAfterStop;
	/** How the application failed, for its ApplicationEnd. */
	private failure;
	/** Once stop() has begun: the driver's RpcEnv closed, its application unregistered. */
	private closed;
	/** The contexts not stopped yet: what a driver that fails reports its failure through. */
	private static readonly running;
	/** The status tracker, the progress bar and the event log (status/watchApplication.ts). */
	private readonly watch;
	private constructor();
	/**
	 * Listens to the application's events (Spark's SparkContext.addSparkListener): each task's
	 * end with its metrics. Returns what removes it.
	 */
	addListener(listener: WickListener): () => void;
	/**
	 * The application's jobs and stages as they run (Spark's SparkContext.statusTracker): active
	 * job and stage ids, and each one's progress (tasks done, running, failed).
	 */
	statusTracker(): StatusTracker;
	get appId(): string;
	static create(options?: WickContextOptions): Promise<WickContext>;
	/**
	 * Ships a file to every executor (Spark's addFile): a task reads it at WickFiles.get(name),
	 * `name` being the path's last part; in the driver, WickFiles.get gives the path added. Adding
	 * the same file again does nothing; another file under a name already added is refused.
	 */
	addFile(path: string): Promise<void>;
	/** Spark's defaultParallelism: wick.default.parallelism, else the executors' cores (≥ 2). */
	get defaultParallelism(): number;
	/** Distributes an array over `numSlices` partitions. */
	parallelize<T>(data: readonly T[], numSlices?: number): RDD<T>;
	/** The numbers start, start + step, … before end, in `numSlices` partitions; nothing is shipped. */
	range(start: number, end: number, step?: number, numSlices?: number): RDD<number>;
	/**
	 * The lines of a text file, in at least `minPartitions` partitions: a file the application
	 * added (`wick submit --files`, addFile), named as it was added or by its name alone, which
	 * every executor reads from its own copy; or any other file, by a path every executor can read
	 * (a shared file system). Lazy, as Spark's sc.textFile: it returns the RDD at once, and the file
	 * is sized (its splits computed) when a job first needs them, so a file added after this call
	 * but before the job counts as added; a missing file fails that job. The RDD is no promise, so
	 * code written for the old `await wc.textFile(…)` still works (awaiting a value gives it).
	 */
	textFile(path: string, minPartitions?: number): RDD<string>;
	/**
	 * The added file a textFile path means: its name alone (as WickFiles.get takes it), or the path
	 * it was added from (relative paths resolved as addFile resolved them).
	 */
	private addedFileOf;
	/** Unregisters the application, stops its executors, and closes the driver's connections. */
	stop(): Promise<void>;
	private end;
	/**
	 * Unregisters (unless a failure did) and closes the driver's RpcEnv. After a plain stop() the
	 * unregister waits for the end of the turn: the job template's `try { … } finally { await
	 * wc.stop() }` stops the context *before* its error reaches the top of the application, and
	 * an application that catches a job's failure may stop, then set process.exitCode or call
	 * process.exit(1). All of that runs in promise jobs before the turn ends; the error (through
	 * failAll), the exit (onExit) or the exit status set by then ends the application FAILED: how
	 * the driver's program ended says how its application did, not whether it stopped first. Else
	 * it FINISHED.
	 */
	private close;
}
export declare const WickFiles: {
	/** The local path of an added file, by its name (the added path's last part). */
	get(name: string): string;
	/** The folder that holds the added files on this executor (undefined in the driver). */
	getRootDirectory(): string | undefined;
};

export {};
