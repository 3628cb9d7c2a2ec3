/**
 * `sandbox-extender` command line (commander): serve, rank, replay.
 * Exit codes: 0 ok, 1 runtime failure, 2 invalid configuration, arguments or input (a missing or
 * unusable snapshot or pod file, no kubeconfig to be found).
 */
import { accessSync, constants } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError, loadConfig } from '../config/load.js';
import { listenHostProblem, type ConfigInput } from '../config/schema.js';
import { STRATEGIES, type Strategy } from '../core/fit/strategies/index.js';
import { QuantityError } from '../core/objects/quantity.js';
import { ObjectError } from '../core/objects/records.js';
import { NoKubeConfigError } from '../cluster/kubeConfigError.js';
import { SnapshotError } from '../snapshot/snapshotFile.js';
import { DEFAULT_REPLAY_STRATEGIES, packageVersion, rankCommand, replayCommand, UsageError } from './commands.js';

/** A flag's value as a decimal integer from `min` to `max`, digits only (no sign, exponent, hex or blanks). */
function integer(name: string, min: number, max: number) {
  return (raw: string): number => {
    const n = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}`);
    return n;
  };
}

/** --host as the config's server.host takes it (listenHostProblem): an IP address or a hostname. */
function host(raw: string): string {
  const problem = listenHostProblem(raw);
  if (problem !== null) throw new InvalidArgumentError(`--host ${problem}`);
  return raw;
}

function strategies(raw: string): Strategy[] {
  const list = raw.split(',').map((s) => s.trim());
  for (const s of list) {
    if (!(STRATEGIES as readonly string[]).includes(s))
      throw new InvalidArgumentError(`unknown strategy "${s}" (one of ${STRATEGIES.join(', ')})`);
  }
  return list as Strategy[];
}

/** A flag given at most once: a second value is refused, not silently taking the first's place. */
function once(flag: string, hint: string) {
  return (value: string, previous: string | undefined): string => {
    if (previous !== undefined)
      throw new InvalidArgumentError(`${flag} is given twice (${previous}, ${value}); ${hint}`);
    return value;
  };
}

/** Collects a repeatable option's values in order. */
function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * `text` safe to print on a terminal: control characters other than newline and tab (escape sequences, NUL, bell,
 * C1 controls) written as `\u001b`-style escapes. A message may quote a line of a binary or hostile input file.
 */
function printable(text: string): string {
  return text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function fail(err: unknown): never {
  const usage =
    err instanceof ConfigError ||
    err instanceof UsageError ||
    err instanceof QuantityError ||
    err instanceof ObjectError ||
    err instanceof SnapshotError ||
    err instanceof NoKubeConfigError;
  const code = usage ? 2 : 1;
  process.stderr.write(`sandbox-extender: ${printable((err as Error).message)}\n`);
  process.exit(code);
}

const program = new Command()
  .name('sandbox-extender')
  .description(
    'kube-scheduler extender that places sandbox pods by projected pressure, reserving each placement at once',
  )
  .version(packageVersion(), '-V, --version', 'print the version of sandbox-extender')
  .showHelpAfterError()
  // Invalid arguments exit 2 (commander's own default is 1); --help and --version exit 0.
  .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2));

program
  .command('serve')
  .description('serve the extender verbs; cluster mode (list+watch through a kubeconfig) unless --snapshot is given')
  .option(
    '--snapshot <file>',
    'offline mode: a snapshot file (kubectl get nodes,pods -A -o json|yaml), re-read when it changes',
    once('--snapshot', 'serve reads one snapshot file (rank merges several): put the objects in one List'),
  )
  .addOption(
    new Option(
      '--kubeconfig <file>',
      'cluster mode: kubeconfig (default: $KUBECONFIG, ~/.kube/config, or in-cluster)',
    ).conflicts('snapshot'),
  )
  .option('--config <file>', 'YAML config file (see docs/configuration.md)')
  .option('--port <n>', 'port to listen on (default 8888)', integer('--port', 0, 65535))
  .option('--host <address>', 'IP address or hostname to listen on (default 127.0.0.1)', host)
  .addOption(new Option('--strategy <name>', 'placement strategy').choices(STRATEGIES))
  .action(
    async (opts: {
      snapshot?: string;
      kubeconfig?: string;
      config?: string;
      port?: number;
      host?: string;
      strategy?: Strategy;
    }) => {
      try {
        const overrides: ConfigInput = {
          strategy: opts.strategy,
          kubeconfig: opts.kubeconfig,
          server: { port: opts.port, host: opts.host },
          snapshot: { path: opts.snapshot },
        };
        const config = loadConfig(opts.config, overrides);
        // A snapshot file that is not there is bad input (exit 2), not a runtime failure.
        if (config.snapshot.path) readable(config.snapshot.path);
        // Loaded here, not at start-up: the offline commands need neither the HTTP edge, the Kubernetes client nor the logger.
        const [{ pino }, { serve }] = await Promise.all([import('pino'), import('../runtime/serve.js')]);
        const logger = pino({ level: config.logLevel, base: { app: 'sandbox-extender' } });
        const running = await serve(config, logger);
        const stop = async (signal: string) => {
          logger.info({ signal }, 'shutting down');
          await running.close();
          process.exit(0);
        };
        process.once('SIGTERM', () => void stop('SIGTERM'));
        process.once('SIGINT', () => void stop('SIGINT'));
      } catch (err) {
        fail(err);
      }
    },
  );

program
  .command('rank')
  .description(
    'offline: the nodes kube-scheduler would consider for one pod (Ready, cordon, taints, node affinity) ranked by projected pressure, with the reason of every excluded node; no reservation is made',
  )
  .requiredOption(
    '--snapshot <file>',
    'snapshot file: a v1 List of Nodes and/or Pods, JSON or YAML; repeat to merge several (e.g. nodes and pods dumped separately)',
    collect,
  )
  .requiredOption(
    '--pod <file>',
    'the pod to place, JSON or YAML',
    once('--pod', 'rank takes one pod: run it once for each'),
  )
  .option('--config <file>', 'YAML config file')
  .action((opts: { snapshot: string[]; pod: string; config?: string }) => {
    try {
      // Names come from the files as written: rankCommand escapes control characters in them (\n and \t too).
      process.stdout.write(`${rankCommand(loadConfig(opts.config), opts.snapshot, opts.pod)}\n`);
    } catch (err) {
      fail(err);
    }
  });

program
  .command('replay')
  .description('place identical pods one after another with each strategy and print the peak allocation pressure')
  .option('--nodes <list>', 'node CPU counts, COUNTxCPUS repeats (e.g. 16,64,192 or 1000x32)', '16,64,192')
  .option('--memory-per-cpu <quantity>', 'node memory per CPU', '4Gi')
  .option('--pods <n>', 'number of pods', integer('--pods', 1, 10_000_000), 300)
  .option('--pod-cpu <quantity>', 'CPU request of each pod', '2')
  .option('--pod-memory <quantity>', 'memory request of each pod', '4Gi')
  .option(
    '--honour-capacity',
    'apply the capacity filter (without it capacity is ignored: the overcommit replay)',
    false,
  )
  .option('--strategies <list>', 'comma-separated strategies to run', strategies, [...DEFAULT_REPLAY_STRATEGIES])
  .option('--seed <n>', 'seed of the random strategy', integer('--seed', 0, 2 ** 31 - 1), 1)
  .option(
    '--percentage-of-nodes-to-score <p>',
    "offer each pod only kube-scheduler's sampled window, as at this percentageOfNodesToScore (0: its adaptive default); nodes are walked in the order given",
    integer('--percentage-of-nodes-to-score', 0, 100),
  )
  .option(
    '--zones <n>',
    'with the percentage: node i sits in zone i mod n (kube-scheduler interleaves zones)',
    integer('--zones', 1, 1000),
  )
  .action((opts) => {
    try {
      process.stdout.write(`${replayCommand(opts)}\n`);
    } catch (err) {
      fail(err);
    }
  });

/** @throws SnapshotError when `path` cannot be read. */
function readable(path: string): void {
  try {
    accessSync(path, constants.R_OK);
  } catch (err) {
    throw new SnapshotError(`${path}: cannot read: ${(err as Error).message}`);
  }
}

program.parseAsync(process.argv).catch(fail);
