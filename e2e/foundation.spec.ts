import { expect, test } from '@playwright/test';

test('a worker opens an opfs-sahpool database and its data survives a page reload', async ({ page }) => {
  await page.goto('/');
  const visits = page.locator('#visits[data-ready="true"]');
  await expect(visits).toHaveText(/^\d+$/);
  const first = Number(await visits.textContent());
  await page.reload();
  await expect(page.locator('#visits[data-ready="true"]')).toHaveText(String(first + 1));
});
