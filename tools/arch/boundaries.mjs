// Module boundaries of the workspace, checked by the lint rule house/project-boundaries and by
// tests/architecture/boundaries.spec.ts:
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

/** The rule one import of `path` (a file of `project`) breaks, or null. */
export function boundaryViolation(project, projects, path, specifier) {
  if (specifier.startsWith('.')) {
    const target = resolve(dirname(path), specifier);
    const inside = (target + sep).startsWith(project.root + sep) || target === project.root;
    return inside ? null : 'relative import leaves its project';
  }
  const pkg = packageOf(specifier);
  const importsAnApp = projects.some((other) => other.kind === 'app' && other.packageName === pkg);
  if (importsAnApp && pkg !== project.packageName) {
    return project.kind === 'app' ? 'an app imports another app' : 'a library imports an app';
  }
  // Test files may use test tools (fast-check, jest); the rule is about what the library ships.
  const isBuiltin = specifier.startsWith('node:') || builtinModules.includes(specifier);
  if (project.tags.includes('type:contracts') && !isTestFile(path) && !CONTRACTS_ALLOWED.has(pkg) && !isBuiltin) {
    return 'a contracts library imports a framework or package';
  }
  return null;
}

/** The project whose root holds `path`, or undefined (tools, tests, bench). */
export function projectOf(projects, path) {
  return projects.find((project) => path.startsWith(project.root + sep));
}

/** Returns a list of violations `{ file, specifier, rule }` for one project's files. */
export function checkProject(project, projects, files) {
  const violations = [];
  for (const { path, text } of files) {
    for (const specifier of importsOf(text)) {
      const rule = boundaryViolation(project, projects, path, specifier);
      if (rule) violations.push({ file: path, specifier, rule });
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
