// Every lab whose manifest (labs/<id>/index.ts) names no Playwright spec of its own is walked to green in the
// console: the Labs panel lists it, Start opens its session, "Do it" on every step turns it green, no page error.
// A new lab is covered here without editing e2e/ (labs/hello is); a lab with its own spec declares it (`e2e`).
import fs from 'node:fs';
import { expect, test } from '@playwright/test';
import type { LabManifest } from '../app/protocol/lab-manifest.ts';
import { LAB_MANIFESTS } from '../labs/index.generated.ts';
import { openLab, walkLab, type LabFile } from './helpers.ts';

const manifests: readonly LabManifest[] = LAB_MANIFESTS;
const unwalked = manifests.filter((m) => !m.e2e);

test('every lab has a walk: its own spec, or this one', () => {
  for (const m of manifests) if (m.e2e) expect(fs.existsSync(m.e2e), `${m.id}: ${m.e2e}`).toBe(true);
});

for (const m of unwalked) {
  test(`lab ${m.id} walks to green`, async ({ page }) => {
    test.setTimeout(180_000);
    const lab = JSON.parse(fs.readFileSync(`labs/${m.id}/lab.json`, 'utf8')) as LabFile;
    const problems = await openLab(page, m.id);
    await page.getByTestId('lab-start').click();
    await walkLab(page, m.id, lab, 60_000, false);
    expect(problems).toEqual([]);
  });
}
