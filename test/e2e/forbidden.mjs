#!/usr/bin/env node
// The lines of the extender's log that show the API server refusing it a request (HTTP 403, "forbidden"), except
// those logged while kube-apiserver was (re)starting: a freshly started API server answers 403 to users whose
// permissions come from RBAC objects until its RBAC authorizer has loaded them, which is no missing permission.
// The window of each start is read from kube-apiserver's log, where the e2e scripts write the evidence:
//
//   --- e2e 2026-12-01T08:00:01.120Z: starting /path/kube-apiserver ...  (lib.sh e2e_start)
//   --- e2e 2026-12-01T08:00:07.412Z: ready                             (lib.sh e2e_wait_for, once /readyz said ok)
//
// A refusal logged (pino "time", ms) inside [starting, ready] is ignored; every other one counts, and so does a line
// without a readable time, or one after a start that never reached "ready" (nothing is assumed). So is a write into a
// namespace being deleted (admission's NamespaceLifecycle answers 403 "... because it is being terminated"): a test
// tearing its namespace down while kube-scheduler still places its pods, no missing permission.
//
//   node test/e2e/forbidden.mjs EXTENDER_LOG [KUBE_APISERVER_LOG]
//     prints the refusals that count; exit 0 when there are any, 1 when there are none (like grep)
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A request refused by the API server, as the extender logs it. */
export const FORBIDDEN = /forbidden|HTTP(-Code)?:? *403|"(code|statusCode)": *403/i;

/** A 403 of admission's NamespaceLifecycle: a write into a namespace being deleted (see the header). */
export const NAMESPACE_TERMINATING = /because it is being terminated/;

const MARK = /^--- e2e (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z): (starting|ready)\b/;

/** [fromMs, toMs] of each start of kube-apiserver that reached "ready", from its log text. */
export function bootstrapWindows(apiserverLog) {
  const windows = [];
  let from = null;
  for (const line of apiserverLog.split('\n')) {
    const m = MARK.exec(line);
    if (!m) continue;
    if (m[2] === 'starting') from = Date.parse(m[1]);
    else if (from !== null) {
      windows.push([from, Date.parse(m[1])]);
      from = null;
    }
  }
  return windows;
}

/** The refusal lines of `extenderLog` that count (see the header). */
export function countedRefusals(extenderLog, apiserverLog = '') {
  const windows = bootstrapWindows(apiserverLog);
  return extenderLog.split('\n').filter((line) => {
    if (!FORBIDDEN.test(line) || NAMESPACE_TERMINATING.test(line)) return false;
    const time = /"time":(\d{12,})/.exec(line)?.[1];
    if (time === undefined) return true;
    const t = Number(time);
    return !windows.some(([from, to]) => t >= from && t <= to);
  });
}

/** The counted refusals in the log files (a missing file has none). */
export function forbiddenLinesIn(
  extenderLogFile,
  apiserverLogFile = join(dirname(extenderLogFile), 'kube-apiserver.log'),
) {
  if (!existsSync(extenderLogFile)) return [];
  return countedRefusals(
    readFileSync(extenderLogFile, 'utf8'),
    existsSync(apiserverLogFile) ? readFileSync(apiserverLogFile, 'utf8') : '',
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [extenderLog, apiserverLog] = process.argv.slice(2);
  if (!extenderLog) {
    process.stderr.write('usage: forbidden.mjs EXTENDER_LOG [KUBE_APISERVER_LOG]\n');
    process.exit(2);
  }
  const lines = forbiddenLinesIn(extenderLog, apiserverLog);
  if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`);
  process.exit(lines.length > 0 ? 0 : 1);
}
