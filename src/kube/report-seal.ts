// How loopguard knows, after a restart, which stored Reports it wrote (docs/reports.md §3): an annotation holds an
// HMAC-SHA256 over the whole report (all that `sameReport` compares, its namespace included), keyed with the
// observation checkpoint's key (docs/security.md "Trust model"). A name or a label anyone can copy; the seal only who
// holds the key can make, and a copy moved or edited does not verify. Pure. The HMAC is the checkpoint's own, over a
// message that starts with REPORT_DOMAIN: a checkpoint's sealed bytes are gzip, so neither seal can stand for the other.
import { openCheckpoint, sealCheckpoint } from '../cloud/observation-checkpoint.js';
import { reportContent, type Report } from '../model/namespace-report.js';

export const REPORT_SEAL_ANNOTATION = 'loopguard.dev/report-seal';
const REPORT_DOMAIN = 'loopguard.dev/report-seal/v1\n';

/** The report without its seal (an annotations map left empty goes too): what the seal is computed over. */
function unsealed(report: Report): Report {
  const { [REPORT_SEAL_ANNOTATION]: _seal, ...others } = (report.metadata['annotations'] ?? {}) as Record<string, string>;
  const { annotations: _all, ...metadata } = report.metadata;
  return { ...report, metadata: Object.keys(others).length > 0 ? { ...metadata, annotations: others } : metadata };
}

function message(report: Report): Buffer {
  return Buffer.from(REPORT_DOMAIN + reportContent(unsealed(report)), 'utf8');
}

/** `report` with loopguard's seal over its content (any earlier seal replaced). */
export function sealReport(key: Buffer, report: Report): Report {
  const base = unsealed(report);
  const text = message(base);
  const sealed = sealCheckpoint(key, text);
  const seal = sealed.subarray(0, sealed.length - text.length).toString('base64');
  const annotations = { ...((base.metadata['annotations'] ?? {}) as Record<string, string>), [REPORT_SEAL_ANNOTATION]: seal };
  return { ...base, metadata: { ...base.metadata, annotations } };
}

/** Whether `report` is, whole, one loopguard sealed with `key` (in this namespace, unedited since). */
export function sealedByLoopguard(key: Buffer, report: Report): boolean {
  const seal = (report.metadata['annotations'] as Record<string, unknown> | undefined)?.[REPORT_SEAL_ANNOTATION];
  if (typeof seal !== 'string') return false;
  const text = message(report);
  const opened = openCheckpoint(key, Buffer.concat([Buffer.from(seal, 'base64'), text]));
  // A seal of another length shifts where the message starts: it must open to exactly this report's message.
  return Buffer.isBuffer(opened) && opened.equals(text);
}
