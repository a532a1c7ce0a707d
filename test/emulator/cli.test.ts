/** `npm run sim:clb` entry point: prints one JSON line without the secret key, stops cleanly on SIGTERM. */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { describe, expect, it } from '@jest/globals';
import { DEFAULT_TEST_CREDENTIALS } from '../../sim/clb-emulator/index.js';

function withoutCredentialEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env['CLB_EMULATOR_SECRET_ID'];
  delete env['CLB_EMULATOR_SECRET_KEY'];
  return env;
}

describe('sim/clb-emulator/main.ts', () => {
  it('starts on a free port, prints endpoint/region/secretId only, serves the API, exits 0 on SIGTERM', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'sim/clb-emulator/main.ts', '--port', '0', '--task-ms', '50', '--seed', '3', '--account', 'since2023'], {
      cwd: process.cwd(),
      env: withoutCredentialEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    try {
      const lines = createInterface({ input: child.stdout });
      const [first] = (await once(lines, 'line')) as [string];
      expect(first).not.toContain(DEFAULT_TEST_CREDENTIALS.secretKey);
      const info = JSON.parse(first) as Record<string, unknown>;
      expect(info).toMatchObject({ region: 'ap-guangzhou', secretId: DEFAULT_TEST_CREDENTIALS.secretId, defaultAccount: true });
      expect(info['endpoint']).toMatch(/^127\.0\.0\.1:\d+$/);
      expect(String(info['secretKeySource'])).toContain('DEFAULT_TEST_CREDENTIALS');

      const config = (await (await fetch(`http://${String(info['endpoint'])}/_admin/config`)).json()) as Record<string, unknown>;
      expect(config['taskDurationMs']).toBe(50);
      const capabilities = (await (await fetch(`http://${String(info['endpoint'])}/_admin/capabilities`)).json()) as Record<string, unknown>;
      expect(capabilities['account']).toBe('since2023');
    } finally {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code, signal] = (await exited) as [number | null, string | null];
      expect({ code, signal, stderr }).toEqual({ code: 0, signal: null, stderr: '' });
    }
  }, 20000);

  it('takes the account from env and never prints the key', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'sim/clb-emulator/main.ts'], {
      cwd: process.cwd(),
      env: { ...withoutCredentialEnv(), CLB_EMULATOR_SECRET_ID: 'AKIDfromEnv', CLB_EMULATOR_SECRET_KEY: 'env-secret-key-value' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const [first] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
      expect(first).not.toContain('env-secret-key-value');
      expect(JSON.parse(first)).toMatchObject({ secretId: 'AKIDfromEnv', secretKeySource: 'env CLB_EMULATOR_SECRET_KEY', defaultAccount: false });
    } finally {
      const exited = once(child, 'exit');
      child.kill('SIGINT');
      expect((await exited)[0]).toBe(0);
    }
  }, 20000);

  it('takes named callers next to the single pair and prints their SecretIds, not their keys', async () => {
    const args = ['--secret-id', 'AKIDsingle', '--secret-key', 'single-key-value', '--caller', 'loopguard:AKIDlg:lg-key:with-colon', '--caller', 'tke:AKIDtke:tke-key-value'];
    const child = spawn(process.execPath, ['--import', 'tsx', 'sim/clb-emulator/main.ts', ...args], {
      cwd: process.cwd(),
      env: withoutCredentialEnv(),
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const [first] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
      for (const key of ['single-key-value', 'lg-key', 'tke-key-value']) expect(first).not.toContain(key);
      const info = JSON.parse(first) as Record<string, unknown>;
      expect(info).toMatchObject({ secretId: 'AKIDsingle', secretKeySource: '--secret-key', callers: { AKIDsingle: 'AKIDsingle', loopguard: 'AKIDlg', tke: 'AKIDtke' } });
      const callers = (await (await fetch(`http://${String(info['endpoint'])}/_admin/callers`)).json()) as unknown[];
      expect(callers).toHaveLength(3);
    } finally {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      expect((await exited)[0]).toBe(0);
    }
  }, 20000);
});
