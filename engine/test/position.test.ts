/** Stream positions: what a read's snapshot includes, how a position moves, and its text. */
import { describe, expect, it } from 'vitest';
import {
  advance,
  formatPosition,
  fromSnapshot,
  includes,
  parsePosition,
  before as precedes,
} from '../streams/position.ts';

describe('a position from a read', () => {
  // xmin 100, next xid 105, 100 and 103 still running when the read took its snapshot.
  const read = fromSnapshot('100:105:100,103');

  it('includes every transaction the snapshot saw, and none it did not', () => {
    expect(includes(read, 99n, 7n)).toBe(true);
    expect(includes(read, 101n, 1n)).toBe(true);
    expect(includes(read, 104n, 1n)).toBe(true);
    expect(includes(read, 100n, 1n)).toBe(false);
    expect(includes(read, 103n, 1n)).toBe(false);
    expect(includes(read, 105n, 1n)).toBe(false);
  });

  it('keeps what it saw past each change delivered, and drops the snapshot once past it', () => {
    const after100 = advance(read, 100n, 2n);
    expect(includes(after100, 100n, 2n)).toBe(true);
    expect(includes(after100, 100n, 3n)).toBe(false);
    expect(includes(after100, 102n, 1n)).toBe(true);
    expect(includes(after100, 103n, 1n)).toBe(false);
    expect(formatPosition(after100)).toBe('100_2_105_100.103');
    const after103 = advance(after100, 103n, 1n);
    expect(formatPosition(after103)).toBe('103_1_105_103');
    expect(includes(after103, 104n, 9n)).toBe(true);
    expect(formatPosition(advance(after103, 105n, 0n))).toBe('105_0');
  });

  it('never moves back', () => {
    expect(advance(read, 99n, 1n)).toBe(read);
    expect(precedes(read, { xid: 100n, seq: 1n })).toBe(true);
    expect(precedes(read, { xid: 100n, seq: 0n })).toBe(false);
  });

  it('is the xid alone when nothing was running', () => {
    expect(formatPosition(fromSnapshot('42:42:'))).toBe('42_0');
  });
});

describe('a position sent back', () => {
  it('reads back what it wrote', () => {
    for (const text of ['0_0', '7412_3', '100_2_105_100.103', '103_0_105_']) {
      expect(formatPosition(parsePosition(text))).toBe(text);
    }
  });

  it('is a 400 when the server could not have written it', () => {
    for (const text of [
      '',
      'abc',
      '1',
      '1_',
      '01_2',
      '-1_0',
      '1_2_3',
      '1_2_3_4_5',
      '1_2_3_4.',
      `${'9'.repeat(21)}_0`,
    ]) {
      expect(() => parsePosition(text), text).toThrow(/not a position this server wrote/);
    }
  });
});
