// One built gateway for the Node suites (tests/node-*): started on a free
// loopback port with a fresh data folder, so on its own embedded PostgreSQL
// and development seed, and stopped after. $SVC_BIN_DIR names the built
// binaries (default ../bin).
import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const binDir = process.env.SVC_BIN_DIR || path.resolve(here, '../bin');

// startGateway starts one gateway. extraArgs(dataDir), when given, may
// write files into the data folder and answers more flags (e.g. --config).
// It resolves once the development seed is written and /healthz answers,
// with the credentials, the data folder, the logs so far and stop().
export async function startGateway(name, extraArgs = async () => []) {
  const dataDir = await mkdtemp(path.join(tmpdir(), `svc-${name}-`));
  // Run as root, the embedded PostgreSQL runs as an account of its own,
  // which must be able to pass through this folder to its own.
  await chmod(dataDir, 0o711);
  const env = { ...process.env };
  delete env.SVC_DATABASE_URL; // the gateway's own embedded cluster under dataDir
  const gateway = spawn(path.join(binDir, 'gateway'), [
    '--addr', '127.0.0.1:0', '--data-dir', dataDir, '--plugins-dir', path.join(binDir, 'plugins'),
    ...(await extraArgs(dataDir)),
  ], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let logs = '';
  gateway.stderr.on('data', (b) => { logs += b.toString(); });
  const stop = async () => {
    if (gateway.exitCode === null) {
      const done = new Promise((resolve) => gateway.once('exit', resolve));
      gateway.kill('SIGTERM');
      await Promise.race([done, new Promise((r) => setTimeout(r, 20_000))]);
      if (gateway.exitCode === null) gateway.kill('SIGKILL');
    }
    await rm(dataDir, { recursive: true, force: true });
  };
  const exited = new Promise((resolve) => gateway.once('exit', (code) => resolve(code)));
  const credsPath = path.join(dataDir, 'dev-credentials.json');
  const deadline = Date.now() + 60_000;
  for (;;) {
    const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r(undefined), 200))]);
    if (code !== undefined) throw new Error(`gateway exited (${code}):\n${logs}`);
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`gateway did not seed within 60 s:\n${logs}`);
    }
    try {
      await stat(credsPath);
      const creds = JSON.parse(await readFile(credsPath, 'utf8'));
      const res = await fetch(`${creds.base_url}/healthz`);
      if (res.ok) return { creds, dataDir, logs: () => logs, stop };
    } catch { /* not yet */ }
  }
}
