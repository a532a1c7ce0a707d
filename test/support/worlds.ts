// The TKE worlds loopguard may meet (issue 10 #3; test/integration/worlds.test.ts says why these and not the others):
// {TKE switches the source on prevent-loopback} × {TKE's sync puts back its view of every health-check field, or only
// declared ones} × {the account's default source}, and loopguard's two L4 paths (l4.sourceSwitch) in the worlds that
// decide them. Suites that must hold in every world run over this list.
import type { SyncScope } from '../../sim/tke-simulator/index.js';

export interface TkeWorld {
  name: string;
  switchOnPreventLoopback: boolean;
  syncScope: SyncScope;
  account: 'legacy' | 'since2023';
  sourceSwitch: 'Direct' | 'TKEFirst';
}

export const TKE_WORLDS: readonly TkeWorld[] = [
  { name: 'documented TKE (switch, sync all, legacy account)', switchOnPreventLoopback: true, syncScope: 'all', account: 'legacy', sourceSwitch: 'Direct' },
  { name: 'switch, sync declared, legacy account', switchOnPreventLoopback: true, syncScope: 'declared', account: 'legacy', sourceSwitch: 'Direct' },
  { name: 'switch, sync all, account since 2023', switchOnPreventLoopback: true, syncScope: 'all', account: 'since2023', sourceSwitch: 'Direct' },
  { name: 'switch, sync declared, account since 2023', switchOnPreventLoopback: true, syncScope: 'declared', account: 'since2023', sourceSwitch: 'Direct' },
  { name: 'older TKE (no switch, sync declared, legacy account)', switchOnPreventLoopback: false, syncScope: 'declared', account: 'legacy', sourceSwitch: 'Direct' },
  { name: 'documented TKE, l4.sourceSwitch: TKEFirst', switchOnPreventLoopback: true, syncScope: 'all', account: 'legacy', sourceSwitch: 'TKEFirst' },
  { name: 'older TKE, l4.sourceSwitch: TKEFirst', switchOnPreventLoopback: false, syncScope: 'declared', account: 'legacy', sourceSwitch: 'TKEFirst' },
];
