/**
 * The HTTP edge: POST /filter, /prioritize and /bind on the verbs' own path (verbEdge.ts: raw-body and
 * one JSON.parse, the hot path), and express 5 for the rest: GET (and HEAD) /healthz, /readyz, /metrics,
 * /debug/nodes and /debug/nodes/NAME, 405 for another method on them, and the answer to anything else.
 * Handlers only parse → call the verbs → encode; every failure becomes a JSON answer, never an
 * escaped exception, and the server and its state carry on.
 */
import type { RequestListener } from 'node:http';
import express, { type NextFunction, type Request, type Response } from 'express';
import { debugNode, debugNodes } from '../core/text/debugView.js';
import type { RequestLog } from '../observability/requestLog.js';
import type { VerbDeps } from './handlers.js';
import { verbEdge } from './verbEdge.js';

export interface AppOptions {
  /** server.maxRequestBodyBytes, maxRequestDepth and maxRequestElements: the bounds of a verb's body (verbEdge.ts). */
  readonly maxRequestBodyBytes: number;
  readonly maxRequestDepth: number;
  readonly maxRequestElements: number;
  /** server.maxObjectMembers (unset: no bound). */
  readonly maxObjectMembers?: number;
  /** Where what is wrong with a request is logged (rate-limited); unset: not logged. */
  readonly requestLog?: RequestLog;
  /** Extra lines for a ready GET /readyz (e.g. how fresh each watch is). */
  readonly readyDetails?: () => string;
}

/** Sends `value` as JSON text ending with a newline (as the verbs' replies do: a terminal prompt stays on its own line). */
function sendJson(res: Response, status: number, value: unknown): void {
  res
    .status(status)
    .type('application/json')
    .send(`${JSON.stringify(value)}\n`);
}

/** The request listener of the extender's server: the verbs (verbEdge.ts) in front of the express app (everything else). */
export function createApp(deps: VerbDeps, options: AppOptions): RequestListener {
  const { maxRequestBodyBytes, maxRequestDepth, maxRequestElements, maxObjectMembers, requestLog } = options;
  return verbEdge(
    deps,
    { maxRequestBodyBytes, maxRequestDepth, maxRequestElements, maxObjectMembers, requestLog },
    expressApp(deps, options),
  );
}

/** The express app of every route but the verbs' POSTs. */
function expressApp(deps: VerbDeps, options: AppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(timing(deps));

  // Each path read with GET (and HEAD, which express answers with the GET handler, without the body); any other
  // method on it: 405 with Allow (readOnly), not the 404 of a path that does not exist.
  const readOnly = onlyGetAndHead(options.requestLog);
  app
    .route('/debug/nodes')
    .get((req, res) => {
      const sort = req.query.sort ?? 'name';
      if (sort !== 'name' && sort !== 'pressure') {
        sendJson(res, 400, { Error: `sandbox-extender: sort must be name or pressure, not ${JSON.stringify(sort)}` });
        return;
      }
      sendJson(res, 200, debugNodes(deps.service.cache, deps.now(), sort));
    })
    .all(readOnly);
  app
    .route('/debug/nodes/:name')
    .get((req, res) => {
      const view = debugNode(deps.service.cache, req.params.name, deps.now());
      if (view) sendJson(res, 200, view);
      else sendJson(res, 404, { Error: `sandbox-extender: node ${req.params.name} is not in the extender's cache` });
    })
    .all(readOnly);

  app
    .route('/healthz')
    .get((_req, res) => {
      res.type('text/plain').send('ok');
    })
    .all(readOnly);
  app
    .route('/readyz')
    .get((_req, res) => {
      const reason = deps.notReady?.() ?? null; // the verbs' own gate: /readyz says exactly when they refuse
      const details = options.readyDetails?.() ?? '';
      if (reason === null) res.type('text/plain').send(`ok${details ? `\n${details}` : ''}`);
      else
        res
          .status(503)
          .type('text/plain')
          .send(`not ready: ${reason}${details ? `\n${details}` : ''}`);
    })
    .all(readOnly);
  app
    .route('/metrics')
    .get(async (_req, res) => {
      res.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics());
    })
    .all(readOnly);

  app.use((req, res) => {
    const message = `no route for ${req.method} ${req.path}; the verbs are POST /filter, /prioritize and /bind`;
    sendJson(res, 404, { Error: `sandbox-extender: ${message}` });
    options.requestLog?.note({ reason: 'no_route', message }, req.socket.remoteAddress, {
      method: req.method,
      path: req.originalUrl,
      status: 404,
    });
  });
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const { status, message } = describeError(err);
    if (status >= 500) deps.logger.error({ err }, 'request failed');
    else
      options.requestLog?.note({ reason: 'invalid_http', message }, req.socket.remoteAddress, {
        method: req.method,
        path: req.originalUrl,
        status,
      });
    sendJson(res, status, { Error: `sandbox-extender: ${message}` });
  });
  return app;
}

/**
 * The answer to a method other than GET or HEAD on a path that is only read: 405 with `Allow: GET, HEAD` and the
 * JSON `Error` of every refusal, logged as `method` like a verb called with another method than POST (verbEdge.ts).
 */
function onlyGetAndHead(requestLog: RequestLog | undefined) {
  return (req: Request, res: Response) => {
    const message = `${req.method} ${req.path}: this path is read with GET or HEAD`;
    res.set('Allow', 'GET, HEAD');
    sendJson(res, 405, { Error: `sandbox-extender: ${message}` });
    requestLog?.note({ reason: 'method', message }, req.socket.remoteAddress, {
      method: req.method,
      path: req.originalUrl,
      status: 405,
    });
  };
}

/** Counts every request and times it, labelled by verb. */
function timing(deps: VerbDeps) {
  return (req: Request, res: Response, next: NextFunction) => {
    const path = req.path.replace(/\/+$/, '').toLowerCase(); // express routing is neither strict nor case-sensitive
    const verb =
      path === '/filter' ? 'filter' : path === '/prioritize' ? 'prioritize' : path === '/bind' ? 'bind' : 'other';
    const stop = deps.metrics.requestDuration.startTimer({ verb });
    res.on('finish', () => {
      stop();
      deps.metrics.requests.inc({ verb, code: String(res.statusCode) });
    });
    next();
  };
}

function describeError(err: unknown): { status: number; message: string } {
  // express's router refuses a path parameter that is not valid percent-encoding (/debug/nodes/%zz) with a URIError.
  if (err instanceof URIError) return { status: 400, message: 'the path is not valid percent-encoding' };
  const e = err as { type?: string; status?: number; message?: string };
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500)
    return { status: e.status, message: e.message ?? 'bad request' };
  return { status: 500, message: 'internal error' };
}
