// Module boundaries of the workspace, checked by tests/architecture/boundaries.spec.ts:
// - an app never imports another app (services talk through contracts over NATS);
// - a `type:contracts` library imports nothing but TypeBox and Node built-ins (no framework);
// - a library never imports an app;
// - no relative import leaves its own project.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';

const CONTRACTS_ALLOWED = new Set(['@sinclair/typebox']);

export function loadProjects(root) {
  const projects = [];
  for (const group of ['apps', 'libs']) {
    const dir = join(root, group);
    let names = [];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const projectRoot = join(dir, name);
      let project, pkg;
      try {
        project = JSON.parse(readFileSync(join(projectRoot, 'project.json'), 'utf8'));
        pkg = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8'));
      } catch {
        continue;
      }
      projects.push({
        name: project.name,
        root: projectRoot,
        packageName: pkg.name,
        tags: project.tags ?? [],
        kind: group === 'apps' ? 'app' : 'lib',
      });
    }
  }
  return projects;
}

export function sourceFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry === 'dist') continue;
    const full = join(dir, entry);
    if (statSync(full).isDirectory()) out.push(...sourceFiles(full));
    else if (/\.(ts|mts|js|mjs)$/.test(entry)) out.push(full);
  }
  return out;
}

// Static imports and re-exports, dynamic imports, and side-effect imports.
const IMPORT_RE = new RegExp(
  [
    String.raw`(?:^|[\s;])(?:import|export)\s[^'";]*?from\s*['"]([^'"]+)['"]`,
    String.raw`import\(\s*['"]([^'"]+)['"]\s*\)`,
    String.raw`^\s*import\s*['"]([^'"]+)['"]`,
  ].join('|'),
  'gm',
);

export function importsOf(text) {
  const out = [];
  for (const m of text.matchAll(IMPORT_RE)) out.push(m[1] ?? m[2] ?? m[3]);
  return out;
}

function packageOf(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

function isTestFile(path) {
  return /\.(spec|integration-spec|testing)\.(ts|mts|js|mjs)$/.test(path);
}

/** Returns a list of violations `{ file, specifier, rule }` for one project's files. */
export function checkProject(project, projects, files) {
  const violations = [];
  const apps = new Map(projects.filter((p) => p.kind === 'app').map((p) => [p.packageName, p]));
  const isContracts = project.tags.includes('type:contracts');
  for (const { path, text } of files) {
    for (const specifier of importsOf(text)) {
      if (specifier.startsWith('.')) {
        const target = resolve(dirname(path), specifier);
        if (!(target + sep).startsWith(project.root + sep) && target !== project.root) {
          violations.push({ file: path, specifier, rule: 'relative import leaves its project' });
        }
        continue;
      }
      const pkg = packageOf(specifier);
      if (apps.has(pkg) && pkg !== project.packageName) {
        violations.push({
          file: path,
          specifier,
          rule: project.kind === 'app' ? 'an app imports another app' : 'a library imports an app',
        });
      }
      // Test files may use test tools (fast-check, jest); the rule is about what the library ships.
      if (
        isContracts &&
        !isTestFile(path) &&
        !CONTRACTS_ALLOWED.has(pkg) &&
        !specifier.startsWith('node:') &&
        !builtinModules.includes(specifier)
      ) {
        violations.push({ file: path, specifier, rule: 'a contracts library imports a framework or package' });
      }
    }
  }
  return violations;
}

export function checkWorkspace(root) {
  const projects = loadProjects(root);
  const violations = [];
  for (const project of projects) {
    const src = join(project.root, 'src');
    const files = sourceFiles(src).map((path) => ({ path, text: readFileSync(path, 'utf8') }));
    violations.push(...checkProject(project, projects, files).map((v) => ({ ...v, file: relative(root, v.file) })));
  }
  return { projects, violations };
}
