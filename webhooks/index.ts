/**
 * Webhooks (docs/webhooks.md): the events writes record in the engine's outbox, posted to
 * the endpoints organisations register (`webhook_endpoint`), signed as Standard Webhooks, retried
 * with backoff over about a day, every try logged (`webhook_delivery`, `webhook_attempt`). A module
 * beside the engine: this facade is all its callers see.
 * @example
 * const webhooks = createWebhooks({ db, engine });
 * const worker = webhooks.startWorker(); // in every server process
 */
import { ApiError, type Database, type Engine, UUID } from '@engage/engine';
import { type Poller, startPoller, Workers } from '../background/poller.ts';
import { deliverRound, RETRY_SECONDS, redeliver } from './deliveries.ts';

export interface WebhooksOptions {
  readonly db: Database;
  readonly engine: Engine;
  /** Deliver to private, loopback and link-local addresses too (WEBHOOK_ALLOW_PRIVATE=1): a local receiver. */
  readonly allowPrivate?: boolean;
  /** The waits before each retry, in seconds (default RETRY_SECONDS: about a day in all). */
  readonly retrySeconds?: readonly number[];
  /** How long an endpoint has to answer (default 10 s). */
  readonly timeoutMs?: number;
}

export interface Webhooks {
  /** Posts due deliveries in this process, polling every `pollMs` (default 1000); every process may run one. */
  startWorker(options?: { pollMs?: number; onError?: (error: unknown) => void }): Poller;
  /** Sends a delivery again from its first try; 404 when the organisation has none of that id. */
  redeliver(organisationId: string, id: string): Promise<Record<string, unknown>>;
}

export function createWebhooks(options: WebhooksOptions): Webhooks {
  const { db, engine } = options;
  const delivery = {
    allowPrivate: options.allowPrivate ?? false,
    timeoutMs: options.timeoutMs ?? 10_000,
    retrySeconds: options.retrySeconds ?? RETRY_SECONDS,
  };
  const workers = new Workers();
  return {
    startWorker(workerOptions = {}) {
      return workers.add(
        startPoller({
          pollMs: workerOptions.pollMs ?? 1000,
          onError: workerOptions.onError,
          async work(stopping) {
            while (!stopping() && (await deliverRound(db, engine, delivery)));
          },
        }),
      );
    },

    async redeliver(organisationId, id) {
      const row = UUID.test(id) ? await redeliver(db, organisationId, id) : null;
      if (!row) throw new ApiError('NOT_FOUND', 'there is no webhook delivery with that id in your organisation');
      workers.wake();
      return row;
    },
  };
}
