/**
 * A GET as a stream of its changes (`Accept: text/event-stream`): the read is parsed and planned as
 * a GET, checked in one statement (the token, the filters' values, the snapshot it would read and
 * how far retention has pruned), then handed to the process's hub (streams/hub.ts), which writes
 * its events from the position of `Last-Event-ID`, or from that snapshot.
 */
import { compileSubscribe } from '../compile/changes.ts';
import { compileRead } from '../compile/read.ts';
import type { Scope } from '../compile/scope.ts';
import { ApiError } from '../errors.ts';
import { EVENT_STREAM_MEDIA } from '../media-types.ts';
import { parseRequest, type RawRequest } from '../parse/index.ts';
import { planRead } from '../plan/read.ts';
import type { ReadPlan } from '../plan/types.ts';
import type { StreamHub } from '../streams/hub.ts';
import {
  before,
  CHANGE_POSITION_HEADER,
  formatPosition,
  fromSnapshot,
  type Position,
  parsePosition,
} from '../streams/position.ts';
import type { Context } from './context.ts';

/** A stream's response: its body is written until the client goes or the server closes it. */
export interface EngineStream {
  readonly status: 200;
  readonly headers: Record<string, string>;
  readonly body: ReadableStream<Uint8Array>;
}

/** Whether a request asks for a stream of changes rather than a page. */
export const wantsStream = (method: string, accept: string | null | undefined): boolean =>
  method === 'GET' && accept !== null && accept !== undefined && accept.includes(EVENT_STREAM_MEDIA);

/** A stream carries the resource's own fields: a select that embeds or aggregates is refused by name. */
function checkStreamable(plan: ReadPlan): void {
  const { name } = plan.resource;
  for (const column of plan.columns) {
    if (column.kind === 'embed' || column.kind === 'spread') {
      throw new ApiError('INVALID_QUERY', `a stream of ${name} carries its own fields: select embeds "${column.key}"`, {
        hint: 'Leave embeds out of select, and read them with a GET when an event arrives.',
      });
    }
    if (column.kind === 'aggregate') {
      throw new ApiError(
        'INVALID_QUERY',
        `a stream of ${name} carries its own fields: select aggregates "${column.key}"`,
        {
          hint: 'Leave aggregates out of select, and count with a GET when an event arrives.',
        },
      );
    }
  }
  const embed = plan.embeds[0];
  if (embed) {
    throw new ApiError(
      'INVALID_QUERY',
      `a stream of ${name} carries its own fields: it cannot filter by "${embed.name}"`,
    );
  }
}

interface SubscribeRow {
  authorized: number;
  tenant: string | null;
  snapshot: string;
  pruned: string;
}

export async function subscribe(
  ctx: Context,
  hub: StreamHub | null,
  raw: RawRequest,
  scope: Scope | undefined,
): Promise<EngineStream> {
  const { plan, row, resumed } = await ctx.untilAuthorized(scope, async () => {
    const resource = ctx.resourceFor(raw.resource, 'GET');
    if (!resource.changes) {
      throw new ApiError('NOT_ACCEPTABLE', `${resource.name} has no stream of changes`, {
        hint: 'Ask for application/json.',
      });
    }
    // Read as JSON would be: the stream's events carry its objects.
    const header = (name: string) => (name.toLowerCase() === 'accept' ? 'application/json' : raw.header(name));
    const request = parseRequest({ ...raw, method: 'GET', header });
    const plan = planRead(resource, request, ctx.maxRows);
    checkStreamable(plan);
    const last = raw.header('last-event-id');
    const resumed = last ? parsePosition(last) : null;
    const statement = compileSubscribe(compileRead({ ...plan, limit: 0, count: null }, scope, ctx.scoping));
    const [row] = await ctx.execute<SubscribeRow>(statement.text, statement.params, scope, 'authorize');
    return { plan, row: row!, resumed, authorized: row!.authorized };
  });
  ctx.learn(scope, row.tenant);
  const now = fromSnapshot(row.snapshot);
  const position = resumed ? checkResumable(resumed, row) : now;
  const tenant = plan.resource.tenant ? row.tenant : null;
  // Streams of the same query in the same tenant share the evaluation of each change.
  const key = `${plan.resource.name}\n${tenant}\n${queryKey(raw.query)}`;
  // A resource with changes means the engine has a hub.
  const body = hub!.open({ plan, tenant }, key, scope, position, row.tenant ?? '');
  const headers = {
    'Content-Type': EVENT_STREAM_MEDIA,
    'Cache-Control': 'no-cache',
    // nginx would otherwise hold events back in its buffer.
    'X-Accel-Buffering': 'no',
    [CHANGE_POSITION_HEADER]: formatPosition(position),
  };
  return { status: 200, headers, body };
}

/** A position sent back: not older than retention keeps, and one this database could have written. */
function checkResumable(position: Position, row: SubscribeRow): Position {
  const [xid, seq] = row.pruned.split('_');
  if (before(position, { xid: BigInt(xid!), seq: BigInt(seq!) })) {
    throw new ApiError('CHANGE_POSITION_EXPIRED', 'changes after this position are no longer kept', {
      hint: 'Read again, and subscribe from the Change-Position header of that read.',
    });
  }
  const next = BigInt(row.snapshot.split(':')[1]!);
  if (position.xid > next || (position.snapshot !== null && position.snapshot.xmax > next)) {
    throw new ApiError('INVALID_QUERY', 'Last-Event-ID names a position past any this database has written', {
      hint: 'Send back the id of the last event received, or the Change-Position header of a read.',
    });
  }
  return position;
}

/** The query string without what does not change which rows a stream follows (order and pages). */
function queryKey(query: string): string {
  return query
    .split('&')
    .filter((p) => !/^(order|limit|offset)=/.test(p))
    .sort()
    .join('&');
}
