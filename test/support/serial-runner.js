// The integration project's Jest runner: Jest's own, marked serial. Integration suites share cluster-wide state
// (the kube-system/kube-proxy profile, the operator's Lease in loopguard-system), so they run one at a time in
// Jest's main process. Jest takes `isSerial` per runner, so the unit project keeps its workers (jest.config.js
// `maxWorkers`) in the same run: Jest runs one runner's files after the other's, never both at once.
// JavaScript, not TypeScript: jest-runner's types describe its CommonJS build (`default` one level down), while
// this ESM file gets its ESM build, whose default export is the class itself.
import TestRunner from 'jest-runner';

export default class SerialRunner extends TestRunner {
  isSerial = true;
}
