/**
 * What the server and the CLI print when they cannot go on: one line that names the problem and what
 * to change (a database to create, a port in use, a setting to fix), exit code 1, no stack trace.
 * A failure nobody foresaw is told by its message; LOG_LEVEL=debug or trace adds its stack.
 */
import { userInfo } from 'node:os';

/** A failure the user fixes, told by its message alone (an invalid setting, a missing database). */
export class Problem extends Error {}

/** Where the failing process was: what it connects to and listens on. */
export interface Whereabouts {
  readonly DATABASE_URL?: string | undefined;
  readonly HOST?: string;
  readonly PORT?: number;
  readonly LOG_LEVEL?: string;
}

type Failure = Error & { code?: unknown; syscall?: unknown; address?: unknown; port?: unknown; hostname?: unknown };

/** libpq's defaults, which `createdb` with no option uses. */
const LOCAL_HOSTS = new Set(['', 'localhost', '127.0.0.1', '[::1]']);

/** The database DATABASE_URL names, and the `createdb` command that creates it there. */
function target(url: string) {
  const parsed = new URL(url);
  const name = decodeURIComponent(parsed.pathname.slice(1)) || decodeURIComponent(parsed.username) || 'postgres';
  const user = decodeURIComponent(parsed.username);
  const options = [
    LOCAL_HOSTS.has(parsed.hostname) ? '' : `-h ${parsed.hostname}`,
    parsed.port && parsed.port !== '5432' ? `-p ${parsed.port}` : '',
    user && user !== userInfo().username ? `-U ${user}` : '',
  ].filter(Boolean);
  return {
    name,
    user: user || userInfo().username,
    server: `${parsed.hostname || 'localhost'}:${parsed.port || '5432'}`,
    createdb: ['createdb', ...options, /^[\w-]+$/.test(name) ? name : `'${name.replaceAll("'", "'\\''")}'`].join(' '),
  };
}

/** The line for a failure to reach or use the PostgreSQL server of DATABASE_URL. */
function databaseProblem(error: Failure, url: string): string | undefined {
  const db = target(url);
  const server = `The PostgreSQL server at ${db.server}`;
  const elsewhere = 'or set DATABASE_URL to the server that runs it';
  switch (error.code) {
    case '3D000':
      return (
        `The database "${db.name}" does not exist on the PostgreSQL server at ${db.server}: ` +
        `create it (${db.createdb}), then run this again.`
      );
    case '28P01':
      return `${server} refused the password of user "${db.user}": correct the user or the password in DATABASE_URL.`;
    case '28000':
      return `${server} refused user "${db.user}" (${error.message}): correct DATABASE_URL's user, or create that role.`;
    case '53300':
      return `${server} has no connection left (${error.message}): close some of its clients, or raise max_connections.`;
    case '57P03':
      return `${server} is starting up or shutting down: run this again in a moment.`;
    case 'ECONNREFUSED':
      return `No PostgreSQL server answers at ${db.server} (connection refused): start it, ${elsewhere}.`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `The host of DATABASE_URL, ${new URL(url).hostname}, is not known here: correct DATABASE_URL.`;
    case 'CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `${server} could not be reached (${error.code}): check that it runs and may be reached from here, ${elsewhere}.`;
    default:
      // PgBouncer in transaction mode refuses the settings a connection for prepared statements sends.
      if (/^unsupported startup parameter/.test(error.message))
        return `${error.message}: behind PgBouncer in transaction mode, set DATABASE_PREPARE=0.`;
      return undefined;
  }
}

const HOST_FIX = "set HOST to one of this machine's addresses (127.0.0.1, or 0.0.0.0 for all of them)";

/** The line for a failure to listen on HOST:PORT. */
function listenProblem(error: Failure, host: string, port: number): string | undefined {
  if (error.syscall !== 'listen' && error.syscall !== 'bind') return undefined;
  switch (error.code) {
    case 'EADDRINUSE':
      return `Port ${port} on ${host} is in use (another Engage server?): stop what holds it, or choose another PORT.`;
    case 'EACCES':
      return `This user may not listen on port ${port} of ${host}: choose a PORT above 1023.`;
    case 'EADDRNOTAVAIL':
      return `HOST ${host} is not an address of this machine: ${HOST_FIX}.`;
    default:
      return undefined;
  }
}

/** The one line that tells `error`, if it is one a user can fix. */
export function explain(error: unknown, where: Whereabouts): string | undefined {
  if (error instanceof Problem) return error.message;
  if (!(error instanceof Error)) return undefined;
  const failure = error as Failure;
  const listening = where.PORT === undefined ? undefined : listenProblem(failure, where.HOST ?? '', where.PORT);
  if (listening) return listening;
  if (failure.syscall === 'getaddrinfo' && failure.hostname === where.HOST)
    return `HOST ${where.HOST} is not a name this machine knows: ${HOST_FIX}.`;
  return where.DATABASE_URL ? databaseProblem(failure, where.DATABASE_URL) : undefined;
}

/**
 * Prints the line that tells `error` on stderr and exits 1. A failure nobody foresaw is told by its
 * message, after `what`; its stack only at LOG_LEVEL debug or trace.
 */
export function exitWith(error: unknown, where: Whereabouts, what: string): never {
  const line = explain(error, where);
  if (line !== undefined) {
    console.error(line);
  } else {
    console.error(`${what}: ${error instanceof Error ? error.message : String(error)}`);
    if (where.LOG_LEVEL === 'debug' || where.LOG_LEVEL === 'trace') console.error(error);
  }
  process.exit(1);
}
