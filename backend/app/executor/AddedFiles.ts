import type { AddFiles } from '../../protocol/executor.js';
import type { MessageOf } from '../../protocol/registry.js';
import type { TaskDescription } from '../../protocol/task.js';
import type { RpcEndpointRef } from '../../rpc/index.js';
import { fetchAddedFiles } from './fetchAppFiles.js';

type Files = MessageOf<typeof AddFiles>['files'];

/**
 * The files the application added, on this executor: the names of those here (a task says how
 * many of the driver's it needs: names are never reused, so the count of distinct names here is
 * what it compares with), and the tasks waiting for more. The driver may name a file twice (in
 * AppConfig and again when this executor registers), so it is counted by name, never by message.
 */
export class AddedFiles {
  private readonly have = new Set<string>();
  private held: TaskDescription[] = [];
  private chain = Promise.resolve();
  /** Why the last fetch failed: a task that needs more files fails at once, rather than wait. */
  private failure: string | undefined;

  constructor(
    /** Where they go. */
    private readonly dir: string,
    /** The driver's file server, looked up when first needed. */
    private readonly server: () => Promise<RpcEndpointRef>,
    /** Runs a task whose files are here. */
    private readonly run: (task: TaskDescription) => void,
    /** Fails tasks whose files cannot be fetched. */
    private readonly fail: (tasks: readonly TaskDescription[], message: string) => void,
  ) {}

  /** The files of AppConfig, fetched before the executor registers. */
  async fetchFirst(files: Files): Promise<void> {
    await fetchAddedFiles(await this.server(), files, this.dir);
    for (const f of files) this.have.add(f.path);
  }

  /** Runs the task once the files it needs are here (now, if they are). */
  launch(task: TaskDescription): void {
    if ((task.files ?? 0) <= this.have.size) this.run(task);
    else if (this.failure) this.fail([task], this.failure);
    else this.held.push(task);
  }

  /** Files added after AppConfig: fetched in order; the tasks that need them wait. */
  add(files: Files): void {
    this.chain = this.chain.then(async () => {
      try {
        const lacking = files.filter((f) => !this.have.has(f.path));
        if (lacking.length > 0) await fetchAddedFiles(await this.server(), lacking, this.dir);
        for (const f of lacking) this.have.add(f.path);
        this.failure = undefined;
        this.releaseHeld();
      } catch (err) {
        this.failure = `Cannot fetch the files the application added: ${(err as Error).message}`;
        const held = this.held;
        this.held = [];
        this.fail(held, this.failure);
      }
    });
  }

  private releaseHeld(): void {
    const here = this.have.size;
    const ready = this.held.filter((t) => (t.files ?? 0) <= here);
    this.held = this.held.filter((t) => (t.files ?? 0) > here);
    for (const t of ready) this.run(t);
  }
}
