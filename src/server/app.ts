/**
 * The HTTP edge (express 5): POST /filter, /prioritize and /bind; GET /healthz, /readyz, /metrics,
 * /debug/nodes and /debug/nodes/NAME.
 * Handlers only parse → call the verbs → encode; every failure becomes a JSON answer, never an
 * escaped exception, and the server and its state carry on.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { debugNode, debugNodes } from '../core/debugView.js';
import { bindVerb, filterVerb, prioritizeVerb, type VerbDeps, type VerbReply } from './handlers.js';

export interface AppOptions {
  readonly maxRequestBodyBytes: number;
  /** Extra lines for a ready GET /readyz (e.g. how fresh each watch is). */
  readonly readyDetails?: () => string;
}

type Verb = (body: unknown, deps: VerbDeps) => VerbReply;

function send(res: Response, reply: VerbReply): void {
  res.status(reply.status).type('application/json').send(reply.body);
}

/**
 * A request that declares a body larger than the limit is answered 413 at once, from its
 * Content-Length header, and its connection closed: nothing waits for a body that will be refused.
 */
function refuseLargeBodies(limit: number) {
  return (req: Request, res: Response, next: NextFunction) => {
    const declared = Number(req.headers['content-length']);
    if (!(declared > limit)) {
      next();
      return;
    }
    res.set('Connection', 'close');
    res.status(413).json({ Error: `sandbox-extender: request body larger than ${limit} bytes (server.maxRequestBodyBytes)` });
    req.socket.end();
  };
}

export function createApp(deps: VerbDeps, options: AppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(timing(deps));
  app.use(refuseLargeBodies(options.maxRequestBodyBytes));
  // Parse any content type as JSON: kube-scheduler sends application/json, curl users often forget the header.
  app.use(express.json({ limit: options.maxRequestBodyBytes, type: () => true, strict: false }));

  const verb = (handler: Verb) => (req: Request, res: Response) => {
    send(res, handler(req.body, deps));
  };
  app.post('/filter', verb(filterVerb));
  app.post('/prioritize', verb(prioritizeVerb));
  app.post('/bind', async (req: Request, res: Response) => {
    send(res, await bindVerb(req.body, deps));
  });

  app.get('/debug/nodes', (req, res) => {
    const sort = req.query.sort ?? 'name';
    if (sort !== 'name' && sort !== 'pressure') {
      res.status(400).json({ Error: `sandbox-extender: sort must be name or pressure, not ${JSON.stringify(sort)}` });
      return;
    }
    res.json(debugNodes(deps.service.cache, deps.now(), sort));
  });
  app.get('/debug/nodes/:name', (req, res) => {
    const view = debugNode(deps.service.cache, req.params.name, deps.now());
    if (view) res.json(view);
    else res.status(404).json({ Error: `sandbox-extender: node ${req.params.name} is not in the extender's cache` });
  });

  app.get('/healthz', (_req, res) => {
    res.type('text/plain').send('ok');
  });
  app.get('/readyz', (_req, res) => {
    const reason = deps.notReady?.() ?? null; // the verbs' own gate: /readyz says exactly when they refuse
    const details = options.readyDetails?.() ?? '';
    if (reason === null) res.type('text/plain').send(`ok${details ? `\n${details}` : ''}`);
    else res.status(503).type('text/plain').send(`not ready: ${reason}${details ? `\n${details}` : ''}`);
  });
  app.get('/metrics', async (_req, res) => {
    res.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics());
  });

  app.use((req, res) => {
    res.status(404).json({ Error: `sandbox-extender: no route for ${req.method} ${req.path}; the verbs are POST /filter, /prioritize and /bind` });
  });
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const { status, message } = describeError(err, options.maxRequestBodyBytes);
    if (status >= 500) deps.logger.error({ err }, 'request failed');
    res.status(status).json({ Error: `sandbox-extender: ${message}` });
  });
  return app;
}

/** Counts every request and times it, labelled by verb. */
function timing(deps: VerbDeps) {
  return (req: Request, res: Response, next: NextFunction) => {
    const path = req.path.replace(/\/+$/, '').toLowerCase(); // express routing is neither strict nor case-sensitive
    const verb = path === '/filter' ? 'filter' : path === '/prioritize' ? 'prioritize' : path === '/bind' ? 'bind' : 'other';
    const stop = deps.metrics.requestDuration.startTimer({ verb });
    res.on('finish', () => {
      stop();
      deps.metrics.requests.inc({ verb, code: String(res.statusCode) });
    });
    next();
  };
}

function describeError(err: unknown, limit: number): { status: number; message: string } {
  const e = err as { type?: string; status?: number; message?: string };
  if (e?.type === 'entity.too.large') return { status: 413, message: `request body larger than ${limit} bytes (server.maxRequestBodyBytes)` };
  if (e?.type === 'entity.parse.failed') return { status: 400, message: `request body is not valid JSON: ${e.message}` };
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) return { status: e.status, message: e.message ?? 'bad request' };
  return { status: 500, message: 'internal error' };
}
