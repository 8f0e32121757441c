// tests/browser/chromium.mjs - Debian's chromium, headless, through
// playwright-core (no browser download): a fresh profile each time, no
// network beyond loopback, nothing phoning home.
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";

export async function launch() {
	const profile = mkdtempSync(join(tmpdir(), "trawl-chromium-"));
	const ctx = await chromium.launchPersistentContext(profile, {
		executablePath: CHROMIUM,
		headless: true,
		bypassCSP: true,	// the page forbids eval; the test harness evaluates
		viewport: { width: 1400, height: 820 },
		args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--allow-file-access-from-files"],
	});
	const close = async () => {
		await ctx.close();
		rmSync(profile, { recursive: true, force: true });
	};
	return { ctx, close };
}

// A page that records its console errors and uncaught exceptions, and
// refuses every request that is not file:, data:, blob: or loopback.
export async function open(ctx, url) {
	const page = ctx.pages()[0] || (await ctx.newPage());
	const errors = [];
	page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
	page.on("pageerror", (e) => errors.push(String(e)));
	await page.route("**/*", (route) => {
		const u = route.request().url();
		if (/^(file:|data:|blob:|http:\/\/127\.0\.0\.1[:/])/.test(u)) return route.continue();
		errors.push("network request refused: " + u);
		return route.abort();
	});
	await page.goto(url);
	await page.waitForFunction(() => window.trawl && window.trawl.firstPaint !== null, null, { timeout: 60000 });
	return { page, errors };
}
