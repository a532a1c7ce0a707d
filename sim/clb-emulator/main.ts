/**
 * CLI: `npm run sim:clb -- [--port N] [--region R] [--secret-id ID] [--secret-key KEY] [--caller NAME:ID:KEY]…
 * [--task-ms MS] [--rps N] [--seed N] [--account legacy|since2023]`
 *
 * Credentials: --secret-id/--secret-key, else env CLB_EMULATOR_SECRET_ID/CLB_EMULATOR_SECRET_KEY; plus any number
 * of named pairs `--caller NAME:SECRET_ID:SECRET_KEY` (stats count calls per caller); with none of these, the
 * built-in test account (DEFAULT_TEST_CREDENTIALS in sim/clb-emulator/options.ts). Prints ONE JSON line with the
 * endpoint, region, SecretIds and where the key came from — never a key itself.
 */
import { parseArgs } from 'node:util';
import { ACCOUNT_PROFILES, isAccountProfile } from './capabilities.js';
import type { CallerCredentials } from './options.js';
import { DEFAULT_TEST_CREDENTIALS } from './options.js';
import { startClbEmulator } from './server.js';

function intOption(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a non-negative integer, got ${value}`);
  return n;
}

/** A rate: any non-negative number (0.2 = one request every 5 s). */
function rateOption(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a non-negative number (requests per second), got ${value}`);
  return n;
}

/** `NAME:SECRET_ID:SECRET_KEY`; the key is everything after the second colon. */
function callerOption(value: string): CallerCredentials {
  const [caller = '', secretId = '', ...rest] = value.split(':');
  const secretKey = rest.join(':');
  if (!caller || !secretId || !secretKey) throw new Error('--caller must be NAME:SECRET_ID:SECRET_KEY');
  return { caller, secretId, secretKey };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      region: { type: 'string' },
      'secret-id': { type: 'string' },
      'secret-key': { type: 'string' },
      caller: { type: 'string', multiple: true },
      'task-ms': { type: 'string' },
      rps: { type: 'string' },
      seed: { type: 'string' },
      account: { type: 'string' },
      verbose: { type: 'boolean' },
    },
    strict: true,
  });
  // Empty env values count as unset (a blank `export X=` should not produce an account with an empty key).
  const secretId = values['secret-id'] ?? (process.env['CLB_EMULATOR_SECRET_ID'] || undefined);
  const secretKey = values['secret-key'] ?? (process.env['CLB_EMULATOR_SECRET_KEY'] || undefined);
  if ((secretId === undefined) !== (secretKey === undefined)) {
    throw new Error('give both a SecretId and a SecretKey (flags or CLB_EMULATOR_SECRET_ID/CLB_EMULATOR_SECRET_KEY), or neither');
  }
  const callers = (values.caller ?? []).map(callerOption);
  const keySource =
    values['secret-key'] !== undefined
      ? '--secret-key'
      : secretKey !== undefined
        ? 'env CLB_EMULATOR_SECRET_KEY'
        : callers.length > 0
          ? '--caller'
          : 'DEFAULT_TEST_CREDENTIALS.secretKey in sim/clb-emulator/options.ts';

  const port = intOption(values.port, 'port');
  const taskDurationMs = intOption(values['task-ms'], 'task-ms');
  const rps = rateOption(values.rps, 'rps');
  const faultSeed = intOption(values.seed, 'seed');
  const account = values.account;
  if (account !== undefined && !isAccountProfile(account)) throw new Error(`--account must be one of ${ACCOUNT_PROFILES.join(', ')}, got ${account}`);
  const emulator = await startClbEmulator({
    ...(port === undefined ? {} : { port }),
    ...(values.region ? { region: values.region } : {}),
    // The single pair first, so it stays the one `secretId` reports; it is counted under its SecretId.
    callers: [...(secretId && secretKey ? [{ caller: secretId, secretId, secretKey }] : []), ...callers],
    ...(taskDurationMs === undefined ? {} : { taskDurationMs }),
    ...(rps === undefined ? {} : { rps }),
    ...(faultSeed === undefined ? {} : { faultSeed }),
    ...(account === undefined ? {} : { capabilities: { account } }),
    ...(values.verbose ? { log: (line: string) => console.error(line) } : {}),
  });

  let stopping = false;
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    emulator.close().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(`clb-emulator: error while stopping on ${signal}: ${String(err)}`);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);

  // Printed last: whoever waits for this line may signal us right away, so the handlers must already be in place.
  console.log(
    JSON.stringify({
      endpoint: emulator.endpoint,
      url: emulator.url,
      admin: `${emulator.url}/_admin/`,
      region: emulator.region,
      secretId: emulator.credentials.secretId,
      secretKeySource: keySource,
      callers: Object.fromEntries(Object.entries(emulator.callers).map(([name, c]) => [name, c.secretId])),
      defaultAccount: emulator.credentials.secretId === DEFAULT_TEST_CREDENTIALS.secretId,
    }),
  );
}

main().catch((err: unknown) => {
  console.error(`clb-emulator: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
