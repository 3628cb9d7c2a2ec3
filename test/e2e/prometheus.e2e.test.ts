/**
 * The extender's monitoring on a real Prometheus (Debian's package, installed by test/e2e/prometheus.sh):
 *
 * 1. The alerting rules: `promtool check rules manifests/prometheus-rules.yaml` (the chart's rules, default values)
 *    and `promtool test rules test/alerts/*.test.yaml` (unit tests with input series). No cluster needed.
 * 2. The dashboard: a Prometheus of the running cluster (prometheus.sh start: static targets, the extender and both
 *    kube-schedulers, one scrape a second) with the chart's rules rendered by helm for these jobs, a burst of pods
 *    through sandbox-scheduler, then every target of every panel of charts/sandbox-extender/dashboards/
 *    sandbox-extender.json, its variables substituted, is sent to /api/v1/query: each must return at least one
 *    series with a number (not NaN). The variable scheduler_job must find exactly the sandbox kube-scheduler's job.
 *    With the cluster healthy, no alert is pending or firing.
 * 3. A frozen extender: SIGSTOP to its process (pid from .e2e/pids), SandboxExtenderDown (rendered with `for: 3s`)
 *    goes pending, then firing; SIGCONT, and it clears; the extender is ready again for the tests after this one.
 *
 * The results (a line per query, the alert timings) go to the console and .e2e/logs/prometheus.txt.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse as parseYaml, stringify as toYaml } from 'yaml';
import {
  E2E_DIR,
  REPO_ROOT,
  SETUP_TIMEOUT_MS,
  STATE_DIR,
  fetchText,
  metricValue,
  run,
  setUpCluster,
  tearDownCluster,
  waitExtenderSettled,
  waitFor,
  type ClusterEnv,
} from './kit/controlPlane.js';
import { Kubectl, createNamespace, deleteNamespace, podManifests, waitAllRunningReady } from './kit/kubectl.js';

const NAMESPACE = 'e2e-prometheus';
const POD_COUNT = 40;
/** `$__rate_interval` and `$__range` of the queries: the whole test fits in it. */
const WINDOW = '1m';
const DOWN_FOR_SECONDS = 3;

interface Target {
  refId: string;
  expr: string;
}
interface Panel {
  id: number;
  type: string;
  title: string;
  targets?: Target[];
}
interface Variable {
  name: string;
  type: string;
  query?: unknown;
  definition?: string;
  includeAll?: boolean;
  allValue?: string;
  multi?: boolean;
}
interface Dashboard {
  panels: Panel[];
  templating: { list: Variable[] };
}
interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}
interface Alert {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
  activeAt: string;
}

let env: ClusterEnv;
let kubectl: Kubectl;
let promUrl = '';
let work = '';
let frozenPid = 0;
const report: string[] = [];
const log = (line: string) => {
  report.push(line);
  process.stderr.write(`[prometheus e2e] ${line}\n`);
};

async function api<T>(path: string): Promise<T> {
  const body = JSON.parse(await fetchText(`${promUrl}${path}`)) as { status: string; data: T; error?: string };
  if (body.status !== 'success') throw new Error(`${path}: ${body.error ?? body.status}`);
  return body.data;
}
const query = async (expr: string) =>
  (await api<{ resultType: string; result: Sample[] }>(`/api/v1/query?query=${encodeURIComponent(expr)}`)).result;
const alerts = async () => (await api<{ alerts: Alert[] }>('/api/v1/alerts')).alerts;

/** Grafana's formatting of a multi-value variable inside a regex matcher: (a|b), values regex-escaped. */
const regexOf = (values: readonly string[]) => {
  const escaped = values.map((v) => v.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));
  return escaped.length === 1 ? escaped[0]! : `(${escaped.join('|')})`;
};

/** The value of each template variable, as Grafana would substitute it. */
async function variableValues(dashboard: Dashboard): Promise<Map<string, string>> {
  const values = new Map<string, string>();
  for (const v of dashboard.templating.list) {
    if (v.type === 'datasource') continue;
    if (v.type === 'textbox') {
      values.set(v.name, String(v.query));
      continue;
    }
    if (v.includeAll && v.allValue) {
      values.set(v.name, v.allValue); // "All", the default selection
      continue;
    }
    const m = /^label_values\((.+),\s*([a-zA-Z_]+)\)$/.exec(substitute(v.definition ?? '', values));
    if (!m) throw new Error(`variable ${v.name}: unsupported definition ${v.definition}`);
    const found = await api<string[]>(`/api/v1/label/${m[2]}/values?match[]=${encodeURIComponent(m[1]!)}`);
    log(`variable ${v.name} = ${JSON.stringify(found)} (${v.definition})`);
    values.set(v.name, regexOf(found));
    values.set(`${v.name}:found`, JSON.stringify(found));
  }
  return values;
}

function substitute(expr: string, values: ReadonlyMap<string, string>): string {
  return expr
    .replaceAll('$__rate_interval', WINDOW)
    .replaceAll('$__range', WINDOW)
    .replace(/\$\{?([a-zA-Z_]+)\}?/g, (whole, name: string) => values.get(name) ?? whole);
}

/** The chart's PrometheusRule for this cluster's jobs (prometheus.sh names them), as a plain rule file (helm of the tools build, beside kubectl). */
async function renderRules(): Promise<string> {
  const values = join(work, 'rule-values.json');
  writeFileSync(
    values,
    JSON.stringify({
      schedulerName: env.SANDBOX_SCHEDULER_NAME,
      prometheusRule: {
        enabled: true,
        extenderSelector: 'job="sandbox-extender"',
        alerts: { down: { for: `${DOWN_FOR_SECONDS}s`, severity: 'critical' } },
      },
    }),
  );
  const { stdout } = await run(join(dirname(env.KUBECTL!), 'helm'), [
    'template',
    'sandbox-extender',
    'charts/sandbox-extender',
    '--namespace',
    'kube-system',
    '-f',
    values,
    '--show-only',
    'templates/prometheusrule.yaml',
  ]);
  const rule = parseYaml(stdout) as { spec: unknown };
  const file = join(work, 'sandbox-extender-rules.yaml');
  writeFileSync(file, toYaml(rule.spec));
  return file;
}

/** The extender's pid from .e2e/pids, checked to be the node process cluster-up.sh started (pid + start time). */
function extenderPid(): number {
  const [pid, start] = readFileSync(join(STATE_DIR, 'pids', 'sandbox-extender'), 'utf8')
    .trim()
    .split(/\s+/)
    .map(Number);
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  if (Number(fields[19]) !== start)
    throw new Error(`pid ${pid} is not the extender cluster-up.sh started (start time ${fields[19]} ≠ ${start})`);
  const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  if (!cmdline.some((a) => a.endsWith('cli/main.js')))
    throw new Error(`pid ${pid} is not the extender's node process: ${cmdline.join(' ')}`);
  return pid!;
}

beforeAll(async () => {
  env = await setUpCluster();
  kubectl = new Kubectl(env);
  work = mkdtempSync(join(tmpdir(), 'prometheus-e2e-'));
}, SETUP_TIMEOUT_MS);

afterAll(async () => {
  if (frozenPid) process.kill(frozenPid, 'SIGCONT'); // never leave the extender frozen
  if (promUrl) await run('bash', [join(E2E_DIR, 'prometheus.sh'), 'stop']);
  await deleteNamespace(kubectl, NAMESPACE).catch(() => undefined);
  if (work) rmSync(work, { recursive: true, force: true });
  writeFileSync(join(STATE_DIR, 'logs', 'prometheus.txt'), `${report.join('\n')}\n`);
  await tearDownCluster();
}, 300_000);

describe('alerting rules (promtool)', () => {
  it('check rules: the plain rule file is valid', async () => {
    const { stdout } = await run('promtool', ['check', 'rules', 'manifests/prometheus-rules.yaml']);
    log(stdout.trim().replace(/\n\s*/g, ' '));
    expect(stdout).toMatch(/SUCCESS: 10 rules found/);
  });

  it('test rules: every alert fires from its series at its `for`, and clears', async () => {
    const files = readdirSync(join(REPO_ROOT, 'test', 'alerts'))
      .filter((f) => f.endsWith('.test.yaml'))
      .map((f) => `test/alerts/${f}`);
    expect(files.length).toBeGreaterThan(0);
    const { stdout, stderr } = await run('promtool', ['test', 'rules', ...files]);
    log(`promtool test rules ${files.join(' ')}: ${(stdout + stderr).trim().replace(/\n\s*/g, ' ')}`);
    expect(stdout + stderr).toMatch(/SUCCESS/);
    expect(stdout + stderr).not.toMatch(/FAILED/);
  });
});

describe('on a real Prometheus scraping the cluster', () => {
  let dashboard: Dashboard;

  beforeAll(async () => {
    dashboard = JSON.parse(
      readFileSync(join(REPO_ROOT, 'charts/sandbox-extender/dashboards/sandbox-extender.json'), 'utf8'),
    ) as Dashboard;
    const rules = await renderRules();
    const { stdout } = await run('bash', [join(E2E_DIR, 'prometheus.sh'), 'start', rules]);
    promUrl = stdout.trim().split('\n').at(-1)!;
    log(`Prometheus ${(await api<{ version: string }>('/api/v1/status/buildinfo')).version} at ${promUrl}`);
    await waitFor(
      'every target scraped and up',
      30_000,
      async () => {
        const up = await query('up');
        return up.length === 3 && up.every((s) => s.value[1] === '1') ? true : undefined;
      },
      async () => JSON.stringify(await query('up')),
    );
  }, 120_000);

  it('a burst, then every query of the dashboard returns data', async () => {
    await createNamespace(kubectl, NAMESPACE);
    // kube-scheduler's histograms are born with their first observation. On this fresh cluster the burst can be
    // placed between two scrapes: its SLI series would then appear with their final counts, never increase, and
    // rate() would stay 0 (histogram_quantile: NaN). On a running cluster they exist before any burst, so one pod
    // is placed first and the burst waits until Prometheus holds its SLI series.
    const pod = { namespace: NAMESPACE, cpu: '2', memory: '4Gi', schedulerName: env.SANDBOX_SCHEDULER_NAME! };
    await kubectl.apply(podManifests({ ...pod, prefix: 'prom-first', count: 1 }));
    await waitAllRunningReady(kubectl, NAMESPACE, 1);
    await waitFor("Prometheus to hold kube-scheduler-sandbox's SLI series", 30_000, async () => {
      const r = await query('sum(scheduler_pod_scheduling_sli_duration_seconds_count{job="kube-scheduler-sandbox"})');
      return Number(r[0]?.value[1]) >= 1 ? true : undefined;
    });
    await kubectl.apply(podManifests({ ...pod, prefix: 'prom', count: POD_COUNT - 1 }));
    await waitAllRunningReady(kubectl, NAMESPACE, POD_COUNT);
    const settled = await waitExtenderSettled(env);
    // Prometheus has caught up when it holds the extender's own count of placements.
    const placed = metricValue(settled, 'sandbox_extender_placements_total', { result: 'placed' });
    await waitFor(`Prometheus to see ${placed} placements`, 30_000, async () => {
      const r = await query('sum(sandbox_extender_placements_total{job="sandbox-extender",result="placed"})');
      return Number(r[0]?.value[1]) === placed ? true : undefined;
    });

    const values = await variableValues(dashboard);
    expect(JSON.parse(values.get('scheduler_job:found') ?? '[]')).toEqual(['kube-scheduler-sandbox']);
    // kube-scheduler's series are born with the burst's first attempt: rate() needs a second scrape of them, so
    // the queries are repeated (once a second, for at most 20 s) until each has data, as a refreshing dashboard would.
    const started = Date.now();
    let rounds = 0;
    let empty: string[] = [];
    let lines: string[] = [];
    let count = 0;
    do {
      if (rounds++ > 0) await new Promise((r) => setTimeout(r, 1000));
      empty = [];
      lines = [];
      count = 0;
      for (const panel of dashboard.panels) {
        for (const t of panel.targets ?? []) {
          const expr = substitute(t.expr, values);
          expect(expr).not.toMatch(/\$/);
          const result = await query(expr);
          const numbers = result.map((s) => Number(s.value[1])).filter((v) => Number.isFinite(v));
          count++;
          lines.push(
            `${numbers.length > 0 ? 'data ' : 'EMPTY'} ${String(result.length).padStart(3)} series, e.g. ${(numbers[0] ?? NaN).toPrecision(4).padStart(9)}  ${panel.title} [${t.refId}]`,
          );
          if (numbers.length === 0)
            empty.push(`${panel.title} [${t.refId}]: ${expr} → ${JSON.stringify(result).slice(0, 300)}`);
        }
      }
    } while (empty.length > 0 && Date.now() - started < 20_000);
    for (const line of lines) log(line);
    log(`after ${rounds} round(s) in ${((Date.now() - started) / 1000).toFixed(1)} s:`);
    log(`${count} dashboard queries, ${count - empty.length} with data`);
    expect(count).toBeGreaterThan(15);
    expect(empty).toEqual([]);

    // A healthy cluster after a burst raises no alert.
    expect((await alerts()).map((a) => `${a.labels.alertname} ${a.state}`)).toEqual([]);
    await deleteNamespace(kubectl, NAMESPACE);
    await waitExtenderSettled(env);
  }, 300_000);

  it('a frozen extender (SIGSTOP) raises SandboxExtenderDown, pending then firing; SIGCONT clears it', async () => {
    const pid = extenderPid();
    const down = async () => (await alerts()).find((a) => a.labels.alertname === 'SandboxExtenderDown');
    const t0 = Date.now();
    process.kill(pid, 'SIGSTOP');
    frozenPid = pid;
    const seconds = () => ((Date.now() - t0) / 1000).toFixed(1);
    let pendingAt = '';
    const firing = await waitFor('SandboxExtenderDown firing', 60_000, async () => {
      const a = await down();
      if (a?.state === 'pending' && !pendingAt) pendingAt = seconds();
      return a?.state === 'firing' ? a : undefined;
    });
    const firingAt = seconds();
    expect(pendingAt).not.toBe(''); // seen pending before firing (polled every 0.5 s; `for` is 3 s)
    expect(firing.labels).toMatchObject({ job: 'sandbox-extender', severity: 'critical' });
    expect(firing.labels.instance).toBe(new URL(env.EXTENDER_URL!).host);

    const t1 = Date.now();
    process.kill(pid, 'SIGCONT');
    frozenPid = 0;
    await waitFor('SandboxExtenderDown to clear', 60_000, async () => ((await down()) ? undefined : true));
    const clearedAfter = ((Date.now() - t1) / 1000).toFixed(1);
    log(
      `SIGSTOP at 0 s: SandboxExtenderDown pending at ${pendingAt} s, firing at ${firingAt} s (for: ${DOWN_FOR_SECONDS}s, scrape and evaluation every 1 s); SIGCONT after ${((t1 - t0) / 1000).toFixed(1)} s, cleared ${clearedAfter} s later`,
    );
    // The same process serves again, ready, and Prometheus scrapes it.
    expect(extenderPid()).toBe(pid);
    await waitFor('the extender ready again', 30_000, async () =>
      (await fetch(`${env.EXTENDER_URL}/readyz`)).ok ? true : undefined,
    );
    expect((await query('up{job="sandbox-extender"}'))[0]?.value[1]).toBe('1');
  }, 180_000);
});
