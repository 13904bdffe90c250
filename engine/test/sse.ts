/** Reads a stream of Server-Sent Events as a client would: events, ids and comments, in order. */

export interface SseEvent {
  readonly id: string | null;
  readonly event: string | null;
  /** The data lines joined with line feeds, parsed as JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: what a test reads of an event
  readonly data: any;
}

export class SseReader {
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>;
  readonly #decoder = new TextDecoder();
  #buffer = '';
  /** The last id any block set, as EventSource keeps it. */
  lastId: string | null = null;
  readonly comments: string[] = [];
  readonly #events: SseEvent[] = [];
  ended = false;

  constructor(body: ReadableStream<Uint8Array>) {
    this.#reader = body.getReader();
  }

  #parse(): void {
    for (let end = this.#buffer.indexOf('\n\n'); end >= 0; end = this.#buffer.indexOf('\n\n')) {
      const block = this.#buffer.slice(0, end);
      this.#buffer = this.#buffer.slice(end + 2);
      let id: string | null = null;
      let event: string | null = null;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) this.comments.push(line.slice(1).trim());
        else if (line.startsWith('id: ')) id = line.slice(4);
        else if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      if (id !== null) this.lastId = id;
      if (data.length) this.#events.push({ id, event, data: JSON.parse(data.join('\n')) });
    }
  }

  /** Reads until `done` holds of what has been read, or fails after `ms`. */
  async #until(done: () => boolean, ms: number, what: string): Promise<void> {
    const deadline = Date.now() + ms;
    while (!done()) {
      if (this.ended) throw new Error(`the stream ended before ${what}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${what} within ${ms} ms`);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), left);
      });
      const chunk = await Promise.race([this.#reader.read(), timeout]);
      clearTimeout(timer);
      if (chunk === 'timeout') continue;
      if (chunk.done) this.ended = true;
      else this.#buffer += this.#decoder.decode(chunk.value, { stream: true });
      this.#parse();
    }
  }

  /** The next `n` events. */
  async next(n = 1, ms = 15_000): Promise<SseEvent[]> {
    await this.#until(() => this.#events.length >= n, ms, `${n} events`);
    return this.#events.splice(0, n);
  }

  /** The events up to and including the first that `last` holds of. */
  async through(last: (e: SseEvent) => boolean, ms = 15_000): Promise<SseEvent[]> {
    await this.#until(() => this.#events.some(last), ms, 'the awaited event');
    return this.#events.splice(0, this.#events.findIndex(last) + 1);
  }

  /** Reads until a comment `text` arrives. */
  async comment(text: string, ms = 15_000): Promise<void> {
    await this.#until(() => this.comments.includes(text), ms, `the comment "${text}"`);
  }

  /** Reads until the stream ends; rejects if the server errored it. */
  async end(ms = 15_000): Promise<void> {
    await this.#until(() => this.ended, ms, 'the end');
  }

  cancel(): Promise<void> {
    return this.#reader.cancel();
  }
}
