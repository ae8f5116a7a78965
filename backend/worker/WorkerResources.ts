/**
 * The cores and memory a worker offers and what its executors and drivers hold of them (Spark's
 * Worker.coresUsed / memoryUsed). The master decides what runs where, so a reservation past what
 * is free is not refused here: it is what the master sent, and refusing it would leave the two
 * disagreeing. Releasing more than is held is a bug in the caller, and is refused.
 */
export class WorkerResources {
  private coresHeld = 0;
  private memoryHeld = 0;

  constructor(
    readonly cores: number,
    /** MiB. */
    readonly memory: number,
    /** Told after each reservation and release (the worker's page shows what is used). */
    private readonly changed: () => void = () => {},
  ) {}

  get coresUsed(): number {
    return this.coresHeld;
  }

  get memoryUsed(): number {
    return this.memoryHeld;
  }

  get coresFree(): number {
    return this.cores - this.coresHeld;
  }

  get memoryFree(): number {
    return this.memory - this.memoryHeld;
  }

  /** Holds `cores` and `memory` MiB for an executor or a driver that starts here. */
  reserve(cores: number, memory: number): void {
    checkAmount('reserve', cores, memory);
    this.coresHeld += cores;
    this.memoryHeld += memory;
    this.changed();
  }

  /** Gives back what a finished executor or driver held. */
  release(cores: number, memory: number): void {
    checkAmount('release', cores, memory);
    if (cores > this.coresHeld || memory > this.memoryHeld) {
      throw new Error(
        `Cannot release ${cores} cores and ${memory} MiB: only ${this.coresHeld} cores and ${this.memoryHeld} MiB are in use`,
      );
    }
    this.coresHeld -= cores;
    this.memoryHeld -= memory;
    this.changed();
  }
}

function checkAmount(what: string, cores: number, memory: number): void {
  if (!Number.isInteger(cores) || cores < 0 || !Number.isInteger(memory) || memory < 0) {
    throw new Error(
      `Cannot ${what} ${cores} cores and ${memory} MiB: expected whole numbers of at least 0`,
    );
  }
}
