// `npm run lint` keeps eslint's results by each file's content (scripts/checks/run.sh). That is sound only while no
// rule reads type information: such a rule can change its verdict on a file when another file changes, and the cache
// would keep the old one. A config that turns type information on must drop the cache first.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../controlplane/crds.js';

describe("lint's content cache", () => {
  it('is used only with rules that read no type information', () => {
    const script = readFileSync(join(REPO_ROOT, 'scripts/checks/run.sh'), 'utf8');
    const config = readFileSync(join(REPO_ROOT, 'eslint.config.js'), 'utf8');
    expect(script).toContain('--cache-strategy content');
    expect(config.match(/TypeChecked|projectService|parserOptions|\bproject\s*:/g) ?? []).toEqual([]);
  });
});
