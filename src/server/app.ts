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
  /** Ready to answer verbs (e.g. the snapshot has been loaded once). */
  readonly ready: () => boolean;
}

type Verb = (body: unknown, deps: VerbDeps) => VerbReply;

export function createApp(deps: VerbDeps, options: AppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.use(timing(deps));
  // Parse any content type as JSON: kube-scheduler sends application/json, curl users often forget the header.
  app.use(express.json({ limit: options.maxRequestBodyBytes, type: () => true, strict: false }));

  const verb = (handler: Verb) => (req: Request, res: Response) => {
    const reply = handler(req.body, deps);
    sendJson(res, reply);
  };
  app.post('/filter', verb(filterVerb));
  app.post('/prioritize', verb(prioritizeVerb));
  app.post('/bind', async (req: Request, res: Response) => {
    sendJson(res, await bindVerb(req.body, deps));
  });

  app.get('/debug/nodes', (_req, res) => {
    res.json(debugNodes(deps.service.model, deps.now()));
  });
  app.get('/debug/nodes/:name', (req, res) => {
    const view = debugNode(deps.service.model, req.params.name, deps.now());
    if (view) res.json(view);
    else res.status(404).json({ Error: `sandbox-extender: node ${req.params.name} is not in the model` });
  });

  app.get('/healthz', (_req, res) => {
    res.type('text/plain').send('ok');
  });
  app.get('/readyz', (_req, res) => {
    if (options.ready()) res.type('text/plain').send('ok');
    else res.status(503).type('text/plain').send('not ready: the cluster model has not completed its initial sync');
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

/**
 * Sends a verb's reply. Echoed Node objects nested thousands of levels deep cannot be encoded
 * (JSON.stringify runs out of stack): that is answered as a bad request, not an internal error.
 */
function sendJson(res: Response, reply: VerbReply): void {
  let text: string;
  try {
    text = JSON.stringify(reply.body);
  } catch (err) {
    res.status(400).json({ Error: `sandbox-extender: the reply cannot be encoded (objects in the request nested too deeply?): ${(err as Error).message}` });
    return;
  }
  res.status(reply.status).type('application/json').send(text);
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
