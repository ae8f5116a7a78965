/**
 * A Server-Sent Events client for tests: reads a fetch response's stream and hands out events one
 * by one, waiting for the next as it arrives (no deadline of its own: the test's timeout ends a
 * wait that never succeeds). close() aborts the request.
 */
export interface SseEvent {
  event: string;
  data: string;
}

export class SseClient {
  private buffer = '';
  private readonly events: SseEvent[] = [];
  private waiting: (() => void) | undefined;
  private done = false;
  private readonly controller = new AbortController();

  private constructor(readonly response: Response) {}

  /** `headers`: e.g. a login cookie for a web UI that authenticates. */
  static async open(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const controller = new AbortController();
    const res = await fetch(url, {
      signal: controller.signal,
      headers: { accept: 'text/event-stream', ...headers },
    });
    const client = new SseClient(res);
    Object.assign(client, { controller });
    void client.pump();
    return client;
  }

  /** The next event, or undefined once the stream has ended. */
  async next(): Promise<SseEvent | undefined> {
    for (;;) {
      const e = this.events.shift();
      if (e) return e;
      if (this.done) return undefined;
      await new Promise<void>((r) => {
        this.waiting = r;
      });
    }
  }

  /** The next event named `name`, skipping others. */
  async nextOf(name: string): Promise<SseEvent> {
    for (;;) {
      const e = await this.next();
      if (!e) throw new Error(`The stream ended before a "${name}" event`);
      if (e.event === name) return e;
    }
  }

  close(): void {
    this.controller.abort();
  }

  private async pump(): Promise<void> {
    const body = this.response.body;
    try {
      if (!body) return;
      const decoder = new TextDecoder();
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        this.buffer += decoder.decode(chunk, { stream: true });
        for (let end = this.buffer.indexOf('\n\n'); end >= 0; end = this.buffer.indexOf('\n\n')) {
          const block = this.buffer.slice(0, end);
          this.buffer = this.buffer.slice(end + 2);
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          this.events.push({ event, data: data.join('\n') });
          this.wake();
        }
      }
    } catch {
      // Aborted by close(), or the server went away.
    } finally {
      this.done = true;
      this.wake();
    }
  }

  private wake(): void {
    const w = this.waiting;
    this.waiting = undefined;
    w?.();
  }
}
