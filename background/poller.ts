/**
 * Work a server process does in the background (import jobs, webhook deliveries): `work` runs at
 * once, then `pollMs` after each run ends, never twice at the same time. Each run goes on while it
 * finds work; `wake` starts one now when none is running; `stop` stops the polling and waits for
 * the run in hand, which sees `stopping()` turn true.
 */
export interface Poller {
  /** Looks for work now rather than at the next poll. */
  wake(): void;
  /** Resolves once the run in hand has ended. */
  stop(): Promise<void>;
}

export function startPoller(options: {
  work: (stopping: () => boolean) => Promise<void>;
  pollMs: number;
  onError?: ((error: unknown) => void) | undefined;
}): Poller {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  /** The run in progress, if any: stop() waits for this one, whichever call started it. */
  let working: Promise<void> | null = null;

  const tick = () => {
    if (!working && !stopped) {
      working = options
        .work(() => stopped)
        .catch((error: unknown) => options.onError?.(error))
        .finally(() => {
          working = null;
        });
    }
    return working ?? Promise.resolve();
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => void tick().then(schedule), options.pollMs);
    timer.unref();
  };
  void tick().then(schedule);
  return {
    wake() {
      void tick();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await working;
    },
  };
}

/** The workers a module runs in this process, woken together when it has work for them. */
export class Workers {
  readonly #running = new Set<Poller>();

  /** Keeps `worker` until it stops. */
  add(worker: Poller): Poller {
    this.#running.add(worker);
    return {
      wake: () => worker.wake(),
      stop: async () => {
        this.#running.delete(worker);
        await worker.stop();
      },
    };
  }

  wake(): void {
    for (const worker of this.#running) worker.wake();
  }
}
