// tests/browser/view-bench.mjs - a `trawl view` page in headless chromium,
// timed (bench/view.sh): time to first paint, then the frame times of a
// scripted zoom from the whole trace to 1 us and of pans, every host
// expanded. Prints one JSON object.
//
//   node view-bench.mjs PAGE_URL [CHROME_JSON]
//
// With CHROME_JSON (a chrome://tracing JSON file of the same session), also
// whether chromium reads and parses it (the first step of chrome://tracing's
// importer: the page itself is disabled in Debian's chromium).
import { launch } from "./chromium.mjs";

const [url, chromeJson] = process.argv.slice(2);
const { ctx, close } = await launch();
const out = {};
try {
	const page = ctx.pages()[0] || (await ctx.newPage());
	const errors = [];
	page.on("pageerror", (e) => errors.push(String(e)));
	page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
	const t0 = Date.now();
	await page.goto(url, { timeout: 120000 });
	await page.waitForFunction(() => window.trawl && window.trawl.firstPaint !== null, null, { timeout: 120000, polling: 20 });
	out.first_paint_ms = Date.now() - t0;
	out.first_paint_page_ms = await page.evaluate(() => trawl.firstPaint);	// from navigation start
	out.script_start_ms = await page.evaluate(() => trawl.started);	// the page parsed
	const frames = async (fn) => {
		await page.evaluate(() => { trawl.frames.length = 0; trawl.worstFrame = null; });
		const steps = await page.evaluate(fn);
		const f = await page.evaluate(() => trawl.frames.slice());
		f.sort((a, b) => a - b);
		return { frames: f.length, steps, median_ms: f[f.length >> 1], worst_ms: f[f.length - 1],
			worst_frame: await page.evaluate(() => trawl.worstFrame), parse: await page.evaluate(() => trawl.parse) };
	};
	await page.evaluate(() => { trawl.expandAll(true); trawl.setView(...trawl.fullRange()); return trawl.idle(); });
	// zoom: whole trace -> 1 us around the middle, 0.8x a step, each step drawn
	// and its tiles loaded before the next (every frame drawn is counted)
	out.zoom = await frames(async () => {
		let n = 0, worstStep = 0, worst = null;
		for (;;) {
			const t = performance.now();
			trawl.zoom(0.8);
			const f = await trawl.idle();
			worstStep = Math.max(worstStep, performance.now() - t);
			if (!worst || f.ms > worst.ms) worst = { ms: f.ms, rows_ms: f.rowsMs, arrows_ms: f.arrowsMs, items: f.items, scanned: f.scanned, arrows: f.arrows.length, ns_per_px: f.nspp };
			n++;
			if (f.t1 - f.t0 <= 1000) break;
		}
		return { n, worst_step_with_tiles_ms: worstStep, worst_last_frame: worst };
	});
	// pans: 30 steps of 15% at 1 us, then at 1 ms, then over the whole trace
	out.pan = await frames(async () => {
		let n = 0, worstStep = 0;
		for (const w of [1000, 1e6, 0]) {
			const [a, b] = trawl.fullRange(), m = (a + b) / 2;
			if (w) trawl.setView(m - w / 2, m + w / 2); else trawl.setView(a, b);
			await trawl.idle();
			for (let i = 0; i < 30; i++) {
				const t = performance.now();
				trawl.pan(i < 15 ? 0.15 : -0.15);
				await trawl.idle();
				worstStep = Math.max(worstStep, performance.now() - t);
				n++;
			}
		}
		return { n, worst_step_with_tiles_ms: worstStep };
	});
	out.max_items_per_pixel = await page.evaluate(() => trawl.lastFrame.maxPerPixel);
	out.errors = errors;
	if (chromeJson) {
		const p2 = await ctx.newPage();
		await p2.goto("file://" + chromeJson.replace(/[^/]*$/, ""));
		out.chrome_json = await p2.evaluate((u) => new Promise((ok) => {
			const t = performance.now(), x = new XMLHttpRequest();
			x.open("GET", u);
			x.onload = () => {
				try {
					const j = JSON.parse(x.responseText);
					ok({ loaded: true, events: j.traceEvents.length, ms: Math.round(performance.now() - t) });
				} catch (e) { ok({ loaded: false, why: String(e).slice(0, 200) }); }
			};
			x.onerror = () => ok({ loaded: false, why: "the file could not be read (" + x.status + ")" });
			x.send();
		}), "file://" + chromeJson).catch((e) => ({ loaded: false, why: String(e).slice(0, 200) }));
	}
} finally {
	await close();
}
console.log(JSON.stringify(out));
