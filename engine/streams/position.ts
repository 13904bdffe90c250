/**
 * A stream's position: every change at or before (xid, seq) in log order has been delivered, and,
 * for a position taken from a read's snapshot, so has every change of a transaction the snapshot
 * saw (an xid below `xmax` not among the `running` ones). Written `<xid>_<seq>`, or
 * `<xid>_<seq>_<xmax>_<running, dot-separated>` while the snapshot still matters.
 */
import { ApiError } from '../errors.ts';

export interface Position {
  readonly xid: bigint;
  readonly seq: bigint;
  /** The snapshot of the read the position came from, while it says more than (xid, seq). */
  readonly snapshot: { readonly xmax: bigint; readonly running: readonly bigint[] } | null;
}

/** The most running transactions a position may name: a snapshot lists those of every connection. */
const MAX_RUNNING = 10_000;
const NUMBER = '(0|[1-9][0-9]{0,19})';
const FORMAT = new RegExp(`^${NUMBER}_${NUMBER}(?:_${NUMBER}_((?:${NUMBER}(?:\\.${NUMBER})*)?))?$`);

/** A snapshot's part of a position, dropped once the position is past it. */
function pruned(xid: bigint, snapshot: Position['snapshot']): Position['snapshot'] {
  if (snapshot === null || xid >= snapshot.xmax) return null;
  return { xmax: snapshot.xmax, running: snapshot.running.filter((r) => r >= xid) };
}

/** The position of a read whose snapshot is `pg_current_snapshot()::text` (`xmin:xmax:xip,...`). */
export function fromSnapshot(text: string): Position {
  const [xmin, xmax, running] = text.split(':');
  const xid = BigInt(xmin!);
  const list = running ? running.split(',').map(BigInt) : [];
  return { xid, seq: 0n, snapshot: pruned(xid, { xmax: BigInt(xmax!), running: list }) };
}

export function formatPosition(p: Position): string {
  const head = `${p.xid}_${p.seq}`;
  return p.snapshot ? `${head}_${p.snapshot.xmax}_${p.snapshot.running.join('.')}` : head;
}

/** A position a client sent back (`Last-Event-ID`); a 400 for text the server never wrote. */
export function parsePosition(text: string): Position {
  const match = FORMAT.exec(text);
  const running = match?.[4] ? match[4].split('.') : [];
  if (!match || running.length > MAX_RUNNING) {
    throw new ApiError('INVALID_QUERY', `Last-Event-ID "${text.slice(0, 100)}" is not a position this server wrote`, {
      hint: 'Send back the id of the last event received, or the Change-Position header of a read.',
    });
  }
  const xid = BigInt(match[1]!);
  const snapshot = match[3] === undefined ? null : { xmax: BigInt(match[3]), running: running.map(BigInt) };
  return { xid, seq: BigInt(match[2]!), snapshot: pruned(xid, snapshot) };
}

/** Whether the change (xid, seq) is at or before the position: delivered, or seen by its read. */
export function includes(p: Position, xid: bigint, seq: bigint): boolean {
  if (xid < p.xid || (xid === p.xid && seq <= p.seq)) return true;
  return p.snapshot !== null && xid < p.snapshot.xmax && !p.snapshot.running.includes(xid);
}

/** The position once the change (xid, seq), which follows every change it includes, is delivered too. */
export function advance(p: Position, xid: bigint, seq: bigint): Position {
  if (xid < p.xid || (xid === p.xid && seq <= p.seq)) return p;
  return { xid, seq, snapshot: pruned(xid, p.snapshot) };
}

/** Whether a position comes before another in log order (its (xid, seq) alone). */
export const before = (a: Position, b: { xid: bigint; seq: bigint }): boolean =>
  a.xid < b.xid || (a.xid === b.xid && a.seq < b.seq);

/** The header of every read of a resource with changes: the position a stream of it resumes from. */
export const CHANGE_POSITION_HEADER = 'Change-Position';
