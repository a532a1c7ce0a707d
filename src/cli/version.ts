// The package version, for `--version` and the SARIF tool driver. package.json sits two levels above this file both
// in the source tree (src/cli) and in the image (dist/cli, with package.json copied next to dist/).
import { readFileSync } from 'node:fs';

export function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}
