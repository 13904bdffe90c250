/** Structured logs on stderr (stdout stays free for what the CLI prints). */
import { pino } from 'pino';

export type Logger = pino.Logger;

export const createLogger = (level: string): Logger =>
  pino({ level, base: { service: 'engage' } }, pino.destination(2));
