// The krew manifest to install from, made from its source plugins/loopguard.yaml: spec.version, spec.homepage, and
// per built archive its platform's uri (the release folder + the archive's name) and sha256. Platforms of the source
// with no archive are left out (npm run build:krew builds linux/amd64 only; npm run release builds all four).
// Pure: test/unit/krew-manifest.test.ts.
import { parseDocument, type YAMLMap, type YAMLSeq } from 'yaml';

export interface BuiltArchive {
  os: string;
  arch: string;
  name: string;
  sha256: string;
}

export interface ManifestInput {
  version: string;
  homepage: string;
  /** The folder the archives are served from, without a trailing slash. */
  releaseUrl: string;
  archives: readonly BuiltArchive[];
  /** The first comment line of the output: what wrote it. */
  writtenBy: string;
}

export function krewManifest(source: string, input: ManifestInput): string {
  const doc = parseDocument(source);
  doc.setIn(['spec', 'version'], input.version);
  doc.setIn(['spec', 'homepage'], input.homepage);
  const platforms = doc.getIn(['spec', 'platforms']) as YAMLSeq<YAMLMap>;
  const unused = new Set(input.archives);
  platforms.items = platforms.items.filter((item) => {
    const os = item.getIn(['selector', 'matchLabels', 'os']);
    const arch = item.getIn(['selector', 'matchLabels', 'arch']);
    const archive = input.archives.find((a) => a.os === os && a.arch === arch);
    if (!archive) return false;
    unused.delete(archive);
    item.set('uri', `${input.releaseUrl}/${archive.name}`);
    item.set('sha256', archive.sha256);
    return true;
  });
  const stray = [...unused].map((a) => `${a.os}/${a.arch}`);
  if (stray.length > 0) throw new Error(`plugins/loopguard.yaml has no platform for ${stray.join(', ')}`);
  // The source's comments are about the source, not this output.
  doc.commentBefore = ` ${input.writtenBy}`;
  const version = doc.getIn(['spec', 'version'], true) as { comment?: string | null };
  version.comment = null;
  (doc.contents as YAMLMap<{ commentBefore?: string | null }>).items[0]!.key.commentBefore = null;
  return doc.toString({ lineWidth: 0 });
}
