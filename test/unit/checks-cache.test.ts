// `npm run lint` keeps eslint's results by each file's content (scripts/checks/run.sh). That is sound only while no
// rule reads type information: such a rule can change its verdict on a file when another file changes, and the cache
// would keep the old one. A config that turns type information on must drop the cache first.
import { describe, expect, it } from '@jest/globals';
import { ESLint } from 'eslint';
import { REPO_ROOT } from '../controlplane/crds.js';

describe("lint's content cache", () => {
  it('is used only with rules that read no type information', async () => {
    const eslint = new ESLint({ cwd: REPO_ROOT });
    for (const file of ['src/main.ts', 'test/unit/checks-cache.test.ts', 'scripts/demo.ts']) {
      const config = (await eslint.calculateConfigForFile(file)) as { languageOptions?: { parserOptions?: Record<string, unknown> } };
      const parserOptions = config.languageOptions?.parserOptions ?? {};
      expect([file, parserOptions['project'] ?? null, parserOptions['projectService'] ?? null]).toEqual([file, null, null]);
    }
  });
});
