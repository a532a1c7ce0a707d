// Pure: what `loopguard doctor` says about the CLB account's default health-check source (src/model/account-default.ts)
// and the console's one-shot switch, with their public sources (docs/doctor.md "The account's default
// health-check source"; docs/tencent-cloud.md §9 #3, #12).
import type { AccountDefault, AccountSource } from '../model/account-default.js';
import { ACCOUNT_DEFAULT_SOURCE } from '../model/cause-text.js';

/** CLB console, Tools > "Verifying health check source IPs": checks a region's CLBs and switches VIP-sourced ones. */
export const BULK_SWITCH_SOURCE = 'https://www.tencentcloud.com/document/product/214/54823';

export interface AccountReport {
  source: AccountSource;
  /** Listeners TKE created that nobody is known to have switched, by health-check source. */
  listeners: { range100_64: number; vip: number };
  /** What it means, one line each: the judgement, then what to do about it. */
  advice: string[];
}

function listeners(n: number): string {
  return `${n} listener${n === 1 ? '' : 's'}`;
}

const WITNESSES = 'that TKE created for Services that neither ask for prevent-loopback nor were changed by loopguard';

export function accountReport(d: AccountDefault): AccountReport {
  // Range100_64 and Vip mean every witness agrees (account-default.ts): none on the other source.
  const seen = (n: number, other: string) => `seen on ${listeners(n)} ${WITNESSES}, none on ${other}`;
  const advice: string[] = [];
  if (d.source === 'Range100_64') {
    advice.push(
      `new listeners get the 100.64.0.0/10 health-check source (${seen(d.range100_64, 'the VIP')}), the default of accounts new to CLB since 2023-02-24 (${ACCOUNT_DEFAULT_SOURCE}); ` +
        'Enforce has no health-check source to switch on those listeners: where such a Service is at risk it only adds prevent-loopback',
      'an older account whose listeners were all switched in the console or through the API looks the same; either way those listeners need no switch',
    );
  } else if (d.source === 'Vip') {
    advice.push(
      `new listeners get the CLB VIP as health-check source (${seen(d.vip, '100.64.0.0/10')}), the default of accounts that used CLB before 2023-02-24 (${ACCOUNT_DEFAULT_SOURCE}); ` +
        'Enforce has the listeners of each at-risk Service it manages switched one by one (ModifyListener, by loopguard or by TKE on prevent-loopback)',
    );
  } else {
    const why =
      d.range100_64 > 0 && d.vip > 0
        ? `${listeners(d.range100_64)} on 100.64.0.0/10 and ${listeners(d.vip)} on the VIP: some were switched, by whom is not known`
        : `${listeners(d.range100_64 + d.vip)} ${WITNESSES}, too few to tell`;
    advice.push(`the health-check source new listeners get is not known (${why})`);
  }
  if (d.vip > 0) advice.push(bulkSwitch());
  return { source: d.source, listeners: { range100_64: d.range100_64, vip: d.vip }, advice };
}

/** The console's one-shot alternative to switching the existing listeners one by one, and what it leaves. */
function bulkSwitch(): string {
  return (
    `one-shot alternative for the existing listeners: the CLB console's Tools > "Verifying health check source IPs" checks the CLBs of a region and switches those health-checked from the VIP to 100.64.0.0/10 (${BULK_SWITCH_SOURCE}; try one or two CLBs first, as the page advises); ` +
    'it does not change what listeners created later get (on this account: the VIP), TKE may put the VIP back on listeners of CLBs it manages when it syncs them (https://www.tencentcloud.com/document/product/457/36835), ' +
    'and it moves health checks only: a Service at risk of loopback still needs prevent-loopback'
  );
}

/** The note on a Service whose own listeners show the 100.64 default: nothing to switch there. */
export function targetAccountNote(d: AccountDefault, key: string): string | undefined {
  const own = d.witnesses.get(key);
  if (d.source !== 'Range100_64' || !own || own.some((s) => s !== 1)) return undefined;
  return `health checks of its listeners already come from 100.64.0.0/10, the account's default for new listeners (${ACCOUNT_DEFAULT_SOURCE}): Enforce has no source to switch here`;
}
