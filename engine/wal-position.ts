/**
 * Positions in PostgreSQL's write-ahead log, as it writes them (`16/B374D848`): what a
 * Consistency-Token carries and what replicas report having replayed.
 */

/** A position's value, or undefined when the text is not one. */
export function parsePosition(text: string): bigint | undefined {
  const match = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/i.exec(text);
  return match ? (BigInt(`0x${match[1]}`) << 32n) + BigInt(`0x${match[2]}`) : undefined;
}

/** A position as PostgreSQL writes it. */
export const formatPosition = (position: bigint): string =>
  `${(position >> 32n).toString(16).toUpperCase()}/${(position & 0xffffffffn).toString(16).toUpperCase()}`;
