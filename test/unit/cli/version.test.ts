// `loopguard version` (what `kubectl loopguard version` runs): the line --version prints, on stdout, exit 0.
import { describe, expect, it } from '@jest/globals';
import { formatVersion, readBuildInfo } from '../../../src/version.js';
import { cli } from './run.js';

describe('loopguard version', () => {
  it('prints the --version line and exits 0', async () => {
    const line = `${formatVersion(readBuildInfo())}\n`;
    expect(await cli(['version'])).toEqual({ code: 0, stdout: line, stderr: '' });
    expect(await cli(['--version'])).toEqual({ code: 0, stdout: line, stderr: '' });
    expect(line).toMatch(/^loopguard \d+\.\d+\.\d+ \(commit /);
  });

  it('takes no arguments', async () => {
    const r = await cli(['version', 'extra']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('too many arguments');
  });

  it('is listed in --help', async () => {
    expect((await cli(['--help'])).stdout).toMatch(/^\s+version\s+Print the version/m);
  });
});
