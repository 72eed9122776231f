import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
// @ts-expect-error plain ESM helper without type declarations
import { checkProject, checkWorkspace, importsOf } from '../../tools/arch/boundaries.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));

interface Project {
  name: string;
  root: string;
  packageName: string;
  tags: string[];
  kind: 'app' | 'lib';
}

describe('module boundaries', () => {
  it('every project is tagged with its type and scope', () => {
    const { projects } = checkWorkspace(root) as { projects: Project[] };
    expect(projects.length).toBeGreaterThanOrEqual(9);
    for (const p of projects) {
      expect(p.tags.some((t) => t.startsWith('type:'))).toBe(true);
      expect(p.tags.some((t) => t.startsWith('scope:'))).toBe(true);
    }
    const apps = projects
      .filter((p) => p.kind === 'app')
      .map((p) => p.name)
      .sort();
    expect(apps).toEqual([
      'admin-gateway',
      'console',
      'demo-room',
      'management-api',
      'media-agent',
      'recording-service',
      'runtime-registry',
      'usage-aggregator',
      'webhook-worker',
    ]);
  });

  it('the workspace has no boundary violations', () => {
    const { violations } = checkWorkspace(root) as { violations: unknown[] };
    expect(violations).toEqual([]);
  });

  describe('the checker itself', () => {
    const projects: Project[] = [
      { name: 'a', root: join(root, 'apps/a'), packageName: '@switchboard/a', tags: ['type:app'], kind: 'app' },
      { name: 'b', root: join(root, 'apps/b'), packageName: '@switchboard/b', tags: ['type:app'], kind: 'app' },
      {
        name: 'contracts',
        root: join(root, 'libs/contracts'),
        packageName: '@switchboard/contracts',
        tags: ['type:contracts'],
        kind: 'lib',
      },
      { name: 'kit', root: join(root, 'libs/kit'), packageName: '@switchboard/kit', tags: ['type:util'], kind: 'lib' },
    ];
    const [a, , contracts, kit] = projects as [Project, Project, Project, Project];
    const file = (p: Project, text: string) => [{ path: join(p.root, 'src/x.ts'), text }];

    it('finds static, re-export, side-effect and dynamic imports', () => {
      expect(
        importsOf(
          `import { x } from '@a/b';\nexport * from './c.js';\nimport 'reflect-metadata';\nconst m = await import('pg');`,
        ),
      ).toEqual(['@a/b', './c.js', 'reflect-metadata', 'pg']);
    });

    it('flags an app importing another app', () => {
      expect(checkProject(a, projects, file(a, `import { X } from '@switchboard/b';`))).toEqual([
        expect.objectContaining({ rule: 'an app imports another app' }),
      ]);
    });

    it('flags a relative import into another project', () => {
      expect(checkProject(a, projects, file(a, `import { X } from '../../b/src/y.js';`))).toEqual([
        expect.objectContaining({ rule: 'relative import leaves its project' }),
      ]);
    });

    it('flags a contracts library importing a framework', () => {
      expect(
        checkProject(
          contracts,
          projects,
          file(
            contracts,
            `import { Injectable } from '@nestjs/common';\nimport { Type } from '@sinclair/typebox';\nimport { x } from 'node:crypto';`,
          ),
        ),
      ).toEqual([
        expect.objectContaining({
          specifier: '@nestjs/common',
          rule: 'a contracts library imports a framework or package',
        }),
      ]);
    });

    it("lets the contracts library's tests use test tools, but not its code", () => {
      const spec = [{ path: join(contracts.root, 'src/x.spec.ts'), text: `import fc from 'fast-check';` }];
      expect(checkProject(contracts, projects, spec)).toEqual([]);
      expect(checkProject(contracts, projects, file(contracts, `import fc from 'fast-check';`))).toHaveLength(1);
    });

    it('flags a library importing an app', () => {
      expect(checkProject(kit, projects, file(kit, `import { X } from '@switchboard/a';`))).toEqual([
        expect.objectContaining({ rule: 'a library imports an app' }),
      ]);
    });
  });
});
