// tests/browser/view-shot.mjs - a screenshot of a `trawl view` page at one
// moment, raw and synchronized clocks side by side (make demo):
//
//   node view-shot.mjs PAGE_URL OUT.png RAW_BEGIN RAW_END SYNC_BEGIN SYNC_END [TITLE]
//
// The times are ns since the epoch: the raw range on the nodes' own clocks,
// the synchronized one on the reference's.
import { launch, open } from "./chromium.mjs";

const [url, out, rb, re, sb, se, title] = process.argv.slice(2);
const { ctx, close } = await launch();
try {
	const { page, errors } = await open(ctx, url);
	const shot = async (sync, b, e) => {
		await page.evaluate(([sync, b, e]) => {
			const ix = trawl.index, base = BigInt(ix.base_s) * 1000000000n + BigInt(ix.base_ns);
			const t0 = Number(BigInt(b) - base), t1 = Number(BigInt(e) - base), pad = (t1 - t0) * 0.15 + 1000;
			trawl.setSync(sync);
			trawl.setView(t0 - pad, t1 + pad);
		}, [sync, b, e]);
		await page.evaluate(() => trawl.idle());
		// select the first message sent in the range: the side panel shows it
		await page.evaluate(([b, e]) => {
			const ix = trawl.index, base = BigInt(ix.base_s) * 1000000000n + BigInt(ix.base_ns);
			const t0 = Number(BigInt(b) - base), t1 = Number(BigInt(e) - base);
			const a = trawl.lastFrame.arrows.filter((a) => a.send >= t0 - 1 && a.send <= t1 + 1).sort((x, y) => x.send - y.send)[0];
			if (a) trawl.select(a.x0 + (a.x1 - a.x0) * 0.5, a.y0 + (a.y1 - a.y0) * 0.5);
		}, [b, e]);
		await page.evaluate(() => trawl.idle());
		return (await page.screenshot()).toString("base64");
	};
	const raw = await shot(false, rb, re), syn = await shot(true, sb, se);
	const both = await ctx.newPage();
	await both.setViewportSize({ width: 2820, height: 900 });
	await both.setContent(`<body style="margin:0;font:16px sans-serif;background:#20283a;color:#fff">
		<div style="padding:6px 10px">${title || "trawl view"}: raw clocks (left), synchronized (right)</div>
		<img src="data:image/png;base64,${raw}" style="width:1400px;margin:0 5px">
		<img src="data:image/png;base64,${syn}" style="width:1400px"></body>`);
	await both.screenshot({ path: out, fullPage: true });
	if (errors.length) { console.error("view-shot: page errors:", errors); process.exitCode = 1; }
} finally {
	await close();
}
