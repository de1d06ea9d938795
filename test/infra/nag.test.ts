/**
 * cdk-nag AwsSolutions on the synthesized app: no unacknowledged finding, and
 * no acknowledgement that matches nothing (a stale one would hide nothing but
 * still read as if a risk were accepted).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { NAG_REASONS } from '../../lib/nag.js';
import { synthesized, validationReport } from './support.js';

interface Report {
  pluginReports: { pluginName: string; conclusion: string; violations: unknown[]; suppressedViolations: { acknowledgedId: string; reason: string }[] }[];
}

// Staging has no Embed distribution by default (lib/stack-config.ts), so the CloudFront acknowledgements (and the
// widget deployment's, which lives on the distribution) match nothing there.
const { widgetAssetRead, widgetBucketObjects, widgetGetBucket, widgetGetObject, widgetList, widgetAbort, widgetDeleteObject, widgetDeploymentRuntime } = NAG_REASONS;
const WIDGET = [widgetAssetRead, widgetBucketObjects, widgetGetBucket, widgetGetObject, widgetList, widgetAbort, widgetDeleteObject, widgetDeploymentRuntime];
const CDN_REASONS = new Set<string>([NAG_REASONS.cdnDefaultCertificate, NAG_REASONS.cdnNoGeoRestriction, NAG_REASONS.cdnNoWaf, ...WIDGET].map((r) => r.reason));

// Production attaches the Embed web ACL by default (embedWaf), so CFR2 needs no acknowledgement there.
describe.each([
  ['staging', { stage: 'staging' }, false, false],
  ['production', { stage: 'production' }, true, true],
  ['staging with the distribution and the Public web ACL', { stage: 'staging', embedCdn: 'true', publicWaf: 'true' }, true, false],
])('cdk-nag AwsSolutions (%s)', (_name, context, cdn, embedAcl) => {
  const { outdir } = synthesized(context);
  const expected = Object.values(NAG_REASONS).filter((r) => (cdn || !CDN_REASONS.has(r.reason)) && !(embedAcl && r === NAG_REASONS.cdnNoWaf));
  const report = JSON.parse(readFileSync(validationReport(outdir), 'utf8')) as Report;
  const nag = report.pluginReports.find((r) => r.pluginName === 'AwsSolutions')!;

  it('has zero unacknowledged findings', () => {
    expect(nag.violations).toEqual([]);
    expect(nag.conclusion).toBe('success');
  });

  it('uses every acknowledgement, each with a reason', () => {
    const used = new Set(nag.suppressedViolations.map((v) => v.acknowledgedId));
    expect([...used].sort()).toEqual([...new Set(expected.map((r) => r.id))].sort());
    // Two acknowledgements may share a rule (APIG4: the Embed API, the open Public methods); each must match findings.
    const reasons = new Set(nag.suppressedViolations.map((v) => v.reason));
    for (const r of expected) expect(reasons.has(r.reason)).toBe(true);
    for (const v of nag.suppressedViolations) expect(v.reason.length).toBeGreaterThan(40);
  });
});
