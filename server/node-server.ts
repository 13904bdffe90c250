/**
 * The Node HTTP server `npm start` serves the app on (server/main.ts): timeouts that cut slow and
 * stalled clients off within seconds, the contract's error body and a Request-Id for requests Node
 * refuses before the app sees them, and a close that lets the requests in flight finish and answers
 * 503 to those that do not in time.
 */
import { randomUUID } from 'node:crypto';
import { type IncomingMessage, maxHeaderSize, type Server, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ApiError, contentType, JSON_MEDIA } from '@engage/engine';
import { errorBody } from '@engage/engine/hono';
import { type HttpBindings, serve } from '@hono/node-server';
import { appError } from './errors.ts';
import type { Logger } from './logger.ts';

export interface NodeServerOptions {
  readonly fetch: Parameters<typeof serve>[0]['fetch'];
  readonly port: number;
  readonly hostname: string;
  /** The request line and headers must arrive within this (408). */
  readonly headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this (408). */
  readonly requestTimeoutMs: number;
  /** The longest silence while a request body is awaited (408). */
  readonly bodyTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  readonly logger: Logger;
}

export interface NodeServer {
  /** Resolves once the server listens; rejects with why it cannot (a port in use). */
  readonly listening: Promise<void>;
  /**
   * Stops accepting connections and lets the requests in flight finish, closing each connection
   * once it is idle. After `timeoutMs` the requests the app has not answered are answered 503
   * SHUTTING_DOWN, and CUT_OFF_MS later whatever is left is closed. Resolves when no connection is
   * open, with how many requests were answered so.
   */
  drain(timeoutMs: number): Promise<number>;
}

/** How long the 503s of a drain that timed out have to reach their clients before every connection is closed. */
const CUT_OFF_MS = 1000;

export function startNodeServer(options: NodeServerOptions): NodeServer {
  const { headersTimeoutMs, bodyTimeoutMs, logger } = options;
  /** Requests the app has not answered, by response, each with a way to answer 503 instead. */
  const unanswered = new Map<HttpBindings['outgoing'], () => void>();
  let cutOff = false;
  const fetch: NodeServerOptions['fetch'] = (request, env) => {
    if (cutOff) return shuttingDown(request.method);
    const { outgoing } = env as HttpBindings;
    return new Promise((resolve, reject) => {
      unanswered.set(outgoing, () => resolve(shuttingDown(request.method)));
      Promise.resolve(options.fetch(request, env))
        .then(resolve, reject)
        .finally(() => unanswered.delete(outgoing));
    });
  };
  /** Answers every request in flight 503 (the app's own answer, if it comes, goes nowhere); says how many. */
  const cutOffRequests = () => {
    cutOff = true;
    const count = unanswered.size;
    for (const answer of unanswered.values()) answer();
    unanswered.clear();
    if (count > 0) logger.warn({ requests: count }, 'shutdown timeout: requests still in flight answered 503');
    return count;
  };
  const server = serve({
    fetch,
    port: options.port,
    hostname: options.hostname,
    serverOptions: {
      headersTimeout: headersTimeoutMs,
      requestTimeout: options.requestTimeoutMs,
      keepAliveTimeout: options.keepAliveTimeoutMs,
      // Node checks the two timeouts above every 30 s by default: slow clients outlived them by that much.
      connectionsCheckingInterval: Math.min(1000, headersTimeoutMs / 2),
    },
  }) as Server;
  const listening = new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    const refusal = clientError(error);
    // Anything else is the connection failing (ECONNRESET, EPIPE): no one to answer.
    if (refusal) refuse(socket, refusal, logger);
    else socket.destroy();
  });
  // Node closes a keep-alive connection idle past its timeout; timers run before pending bytes are
  // read, so after the event loop was busy (PGlite works in it) a request already sent on it would
  // be lost. Read first, and close only a connection that stayed silent.
  server.on('timeout', (socket: Socket) => {
    const bytesRead = socket.bytesRead;
    setImmediate(() => {
      if (socket.bytesRead === bytesRead) socket.destroy();
    });
  });
  server.on('request', (request: IncomingMessage, response: ServerResponse) =>
    watchBody(request, response, bodyTimeoutMs, logger),
  );
  // Node counts a connection that has sent nothing yet as busy; a drain closes it like an idle one.
  // (A 'data' listener would take the socket off Node's fast parsing path: bytesRead tells instead.)
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  return {
    listening,
    async drain(timeoutMs) {
      // One turn of the event loop first: a request already sent on an idle connection is read,
      // and so answered, rather than lost with the connection.
      await new Promise((resolve) => setImmediate(resolve));
      const closed = new Promise((resolve) => server.close(resolve));
      // Responses started before the drain did not say Connection: close; their connections turn idle.
      const idle = setInterval(() => {
        server.closeIdleConnections();
        for (const socket of sockets) if (socket.bytesRead === 0) socket.destroy();
      }, 100);
      // The 503s say Connection: close: their connections close once they are sent. A response
      // still being sent then, or a client that does not read its 503, is cut off a moment later.
      let cut = 0;
      let force: NodeJS.Timeout | undefined;
      const deadline = setTimeout(() => {
        cut = cutOffRequests();
        force = setTimeout(() => server.closeAllConnections(), CUT_OFF_MS);
      }, timeoutMs);
      await closed;
      clearInterval(idle);
      clearTimeout(deadline);
      clearTimeout(force);
      return cut;
    },
  };
}

/**
 * The answer to a request a drain cut off: the contract's 503, after which the connection closes.
 * Its statements may still run, so a write may have been made.
 */
function shuttingDown(method: string): Response {
  const requestId = randomUUID();
  const read = method === 'GET' || method === 'HEAD';
  const error = appError('SHUTTING_DOWN', 'this server shut down before it finished the request; send it again', {
    hint: read ? undefined : 'The write may have been made: check before sending it again.',
    headers: { 'Retry-After': '1' },
  });
  return new Response(errorBody(error, requestId), {
    status: error.status,
    headers: {
      'Content-Type': contentType(JSON_MEDIA),
      'Request-Id': requestId,
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
      Connection: 'close',
      ...error.headers,
    },
  });
}

/** Node's parser and timeout errors (llhttp's codes) as the contract's. */
function clientError(error: NodeJS.ErrnoException & { reason?: string }): ApiError | null {
  const reason = error.reason ?? error.message;
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError(
        'REQUEST_HEADER_FIELDS_TOO_LARGE',
        `the request line and headers are larger than ${maxHeaderSize} bytes; send a shorter URL or fewer headers`,
      );
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError('REQUEST_TIMEOUT', 'the request did not arrive in time; send it again');
    case 'HPE_INVALID_URL':
      return new ApiError(
        'INVALID_REQUEST',
        `the request URL is not valid (${reason}): percent-encode spaces and non-ASCII characters,` +
          ' e.g. city=eq.Z%C3%BCrich for city=eq.Zürich',
      );
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_TRANSFER_ENCODING':
      return new ApiError(
        'INVALID_REQUEST',
        `the request's body length is not valid (${reason}): send one Content-Length with the body's size` +
          ' in bytes, or Transfer-Encoding: chunked without a Content-Length',
      );
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new ApiError('PAYLOAD_TOO_LARGE', 'the chunk extensions of the request body are too large');
    default:
      return error.code?.startsWith('HPE_')
        ? new ApiError('INVALID_REQUEST', `the request is not valid HTTP/1.1 (${reason})`)
        : null;
  }
}

/**
 * Answers on the socket itself, as Node's own handler does, then closes the connection: an answer
 * only if no response was started on it (one the app has not sent yet, while it waits for the body,
 * does not count).
 */
function refuse(socket: Duplex, error: ApiError, logger: Logger) {
  // The parser fails again on each piece a refused client still sends.
  if (lingering.has(socket)) return;
  // Node's ServerResponse on this socket, if any (the property Node's own handler reads).
  const response = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (socket.writable && !response?.headersSent) {
    const requestId = randomUUID();
    const body = errorBody(error, requestId);
    const headers = {
      'Content-Type': contentType(JSON_MEDIA),
      'Content-Length': Buffer.byteLength(body),
      'Request-Id': requestId,
      Connection: 'close',
      ...error.headers,
    };
    const head = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
    socket.end(`HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\n${head.join('')}\r\n${body}`);
    logger.debug({ code: error.code, requestId }, error.message);
    linger(socket);
  } else {
    socket.destroy();
  }
}

/** Sockets closed for sending that still read, and drop, what their client sends. */
const lingering = new WeakSet<Duplex>();
const LINGER_MS = 2000;

/**
 * Closes a connection whose client may still be sending: a socket closed with bytes unread makes the
 * kernel reset the connection, which can discard the response before the client read it. So only
 * the sending side closes, and what still comes is dropped for a moment.
 */
function linger(socket: Duplex) {
  lingering.add(socket);
  socket.end();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  socket.once('close', () => clearTimeout(timer));
}

const BODY_CHECKS = 4;

/**
 * Cuts off a request whose body stops arriving while the server waits for it: REQUEST_TIMEOUT_MS
 * bounds the whole request, this bounds silence. A body left in its buffer by an app busy elsewhere
 * (Node then stops reading the socket) is not a silent client. A response sent before the body
 * arrived closes the connection gently.
 */
function watchBody(request: IncomingMessage, response: ServerResponse, idleMs: number, logger: Logger) {
  if (request.headers['content-length'] === undefined && request.headers['transfer-encoding'] === undefined) return;
  const { socket } = request;
  let bytesRead = socket.bytesRead;
  let quiet = 0;
  const timer = setInterval(() => {
    if (request.complete || response.headersSent) {
      clearInterval(timer);
    } else if (socket.bytesRead !== bytesRead || request.readableLength >= request.readableHighWaterMark) {
      bytesRead = socket.bytesRead;
      quiet = 0;
      // Quiet checks in a row, not time on the clock: after the event loop was busy (PGlite works in
      // it), the bytes that came meanwhile are read before the next check.
    } else if (++quiet >= BODY_CHECKS) {
      clearInterval(timer);
      const message = `no part of the request body arrived for ${idleMs} ms; send the request again`;
      refuse(socket, new ApiError('REQUEST_TIMEOUT', message), logger);
    }
  }, idleMs / BODY_CHECKS);
  response.once('close', () => clearInterval(timer));
  // A response that closes the connection before the body arrived (server/app.ts): Node destroys
  // the socket once the response is sent (`destroySoon`); linger instead.
  response.once('finish', () => {
    if (!request.complete && socket.listeners('finish').includes(socket.destroy)) {
      socket.removeListener('finish', socket.destroy);
      linger(socket);
    }
  });
}
