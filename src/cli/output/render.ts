// Pure: a report in the format asked for (-o). JSON and YAML carry everything (a saved `doctor -o json` is also a
// cluster profile for `loopguard plan --profile-from`); the text formats are for people.
import { stringify as toYaml } from 'yaml';
import type { Report } from '../report.js';
import { renderMarkdown } from './markdown.js';
import { renderSarif } from './sarif.js';
import { renderTable } from './table.js';

export const DOCTOR_FORMATS = ['table', 'wide', 'json', 'yaml', 'markdown', 'sarif'] as const;
export const PLAN_FORMATS = ['table', 'wide', 'json', 'yaml', 'markdown', 'sarif'] as const;
export type OutputFormat = (typeof PLAN_FORMATS)[number];

export function render(report: Report, format: OutputFormat, version: string): string {
  switch (format) {
    case 'table':
      return renderTable(report, false);
    case 'wide':
      return renderTable(report, true);
    case 'json':
      return `${JSON.stringify(report, null, 2)}\n`;
    case 'yaml':
      return toYaml(report, { lineWidth: 0 });
    case 'markdown':
      return renderMarkdown(report);
    case 'sarif':
      return renderSarif(report, version);
  }
}
