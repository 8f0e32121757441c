// tests/browser/view-test.mjs - trawl view's page in headless chromium:
// what it shows, checked against the trace (trawl print) through the
// page's own model (window.trawl) and its pixels. TAP output.
//
//   node view-test.mjs TRAWL SESSION PAGE_URL SHOTS_DIR [served]
//
// SESSION is a `trawl simulate --sync` session with its sync.txt, PAGE_URL
// its page (file:// or the --serve URL); screenshots go to SHOTS_DIR.
import { execFileSync } from "node:child_process";
import { launch, open } from "./chromium.mjs";

const [trawl, session, url, shots, mode] = process.argv.slice(2);
let n = 0, failed = 0;
function ok(cond, what, extra) {
	n++;
	if (!cond) failed++;
	console.log((cond ? "ok " : "not ok ") + n + " - " + what + (cond || extra === undefined ? "" : "\n# " + JSON.stringify(extra)));
}
function json(args) {
	return execFileSync(trawl, ["print", "--no-sync", "-f", "json", ...args, session], { maxBuffer: 1 << 30 })
		.toString().trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));
}

const hosts = [...new Set(json(["-e", "sched_switch", "-n", "2000"]).map((e) => e.host))].sort();
const { ctx, close } = await launch();
try {
	const { page, errors } = await open(ctx, url);
	const T = (f, ...a) => page.evaluate(f, ...a);
	const idle = () => T(() => window.trawl.idle());
	await idle();
	await page.screenshot({ path: shots + "/whole-" + (mode || "file") + ".png" });

	// rows per host: one header per host of the trace, in name order
	const idx = await T(() => ({ hosts: trawl.hosts, base_s: trawl.index.base_s, base_ns: trawl.index.base_ns, sync: trawl.view.sync }));
	const headers = await T(() => trawl.rows.filter((r) => r.header).map((r) => r.name));
	ok(JSON.stringify(headers) === JSON.stringify(hosts.length ? [...idx.hosts].sort() : headers) && hosts.every((h) => headers.includes(h)),
		"a row per host: " + headers.join(" "), { headers, hosts });
	ok(idx.sync === true, "synchronized clocks by default when sync.txt exists");
	const rel = (ns) => Number(BigInt(ns) - (BigInt(idx.base_s) * 1000000000n + BigInt(idx.base_ns)));

	// no frame draws more than about 2 items a pixel, from the whole trace to 1 us
	await T(() => trawl.setSync(false));
	await T(() => trawl.setView(...trawl.fullRange()));
	let worst = 0, frames = 0, tooDense = null, overWork = null, rowsSeen = 0;
	for (let i = 0; i < 40; i++) {
		const f = await idle();
		frames++;
		// bounded work: a row looks at its items in view and at most one
		// more a tile (never whole tiles), and decoding is not the frame's
		for (const r of f.perRow) {
			rowsSeen++;
			if (!overWork && !(r.scanned <= r.inRange + r.tiles)) overWork = { nspp: f.nspp, row: r };
		}
		if (f.maxPerPixel > worst) worst = f.maxPerPixel;
		if (f.maxPerPixel > 3 && !tooDense) tooDense = { nspp: f.nspp, max: f.maxPerPixel };
		if (f.t1 - f.t0 < 1000) break;
		await T(() => trawl.zoom(0.7));
	}
	ok(worst <= 3, "levels of detail: at most ~2 items a pixel at every zoom (worst " + worst + ", " + frames + " frames)", tooDense);
	ok(rowsSeen > 0 && !overWork, "a frame's work is bounded: each row scans its items in view plus at most one a tile (" + rowsSeen + " rows in " + frames + " frames)", overWork);
	const P = await T(() => trawl.parse);
	ok(P.slices > 0 && P.maxJobs >= 1, "tiles are parsed in slices of their own (" + P.slices + " slices, at most " + P.maxJobs + " jobs)", P);

	// spans where the trace has them: a context switch's thread on its CPU
	await T(() => trawl.expandAll(true));
	const sw = json(["-H", hosts[1] || hosts[0], "-e", "sched_switch"]).filter((e) => e.fields.next_tid > 0);
	const ev = sw[Math.floor(sw.length / 2)];
	const next = sw.find((e) => e.cpu === ev.cpu && BigInt(e.ts) > BigInt(ev.ts));
	const t = rel(ev.ts), dur = next ? rel(next.ts) - t : 1000;
	await T(([a, b]) => trawl.setView(a, b), [t - dur, t + 2 * dur]);
	let f = await idle();
	// the screen y of the middle of a row (scrolled into view), or null
	const rowY = async (kind, host, id, depth) => {
		const i = await T(([k, h, id, d]) => trawl.rows.findIndex((r) => r.r.kind === k && trawl.hosts[r.r.host] === h &&
			r.r.id === id && (d === undefined || r.r.depth === d)), [kind, host, id, depth]);
		if (i < 0) return null;
		const y = await T((i) => trawl.reveal(i), i);
		await idle();
		return { y: y + (await T((i) => trawl.rows[i].h, i)) / 2, name: await T((i) => trawl.rows[i].name, i) };
	};
	const cpuRow = await rowY("cpu", ev.host, ev.cpu);
	ok(!!cpuRow, "a row for CPU " + ev.cpu + " of " + ev.host);
	if (cpuRow) {
		const lw = await T(() => trawl.labelWidth);
		const x = lw + (t + dur / 2 - f.t0) / f.nspp, y = cpuRow.y;
		const sel = await T(([x, y]) => trawl.select(x, y), [x, y]);
		ok(sel && sel.thread === ev.fields.next_comm + " " + ev.fields.next_tid,
			"CPU " + ev.cpu + " shows " + ev.fields.next_comm + " " + ev.fields.next_tid + " where the trace switched to it", sel);
		// its pixels are painted (not the background)
		const px = await T(([x, y]) => {
			const c = document.getElementById("canvas"), d = window.devicePixelRatio || 1;
			return Array.from(c.getContext("2d").getImageData(Math.round(x * d), Math.round(y * d), 1, 1).data);
		}, [x, y]);
		ok(px[3] === 255 && !(px[0] > 240 && px[1] > 240 && px[2] > 240), "the span is painted at that pixel", px);
		const tr = await rowY("thread", ev.host, ev.fields.next_tid);
		ok(tr && tr.name === ev.fields.next_comm + " " + ev.fields.next_tid, "a row for thread " + ev.fields.next_tid);
		if (tr) {
			const st = await T(([x, y]) => trawl.select(x, y), [x, tr.y]);
			ok(st && (st.name === "running" || st.name === "syscall"), "the thread runs (or is in a syscall) there", st);
		}
	}
	await page.screenshot({ path: shots + "/cpu-" + (mode || "file") + ".png" });

	// zoom and pan change the visible range: keys, then the wheel
	await page.focus("#canvas");
	let v0 = await T(() => ({ ...trawl.view }));
	await page.keyboard.press("w");
	let v1 = await T(() => ({ ...trawl.view }));
	ok(Math.abs((v1.t1 - v1.t0) / (v0.t1 - v0.t0) - 0.7) < 1e-6, "W zooms in", [v0, v1]);
	await page.keyboard.press("s");
	await page.keyboard.press("s");
	v0 = v1; v1 = await T(() => ({ ...trawl.view }));
	ok(v1.t1 - v1.t0 > v0.t1 - v0.t0, "S zooms out", [v0, v1]);
	v0 = v1;
	await page.keyboard.press("d");
	v1 = await T(() => ({ ...trawl.view }));
	ok(v1.t0 > v0.t0 && Math.abs((v1.t1 - v1.t0) - (v0.t1 - v0.t0)) < 1e-3 * (v0.t1 - v0.t0), "D pans right", [v0, v1]);
	await page.keyboard.press("a");
	await page.keyboard.press("a");
	v0 = v1; v1 = await T(() => ({ ...trawl.view }));
	ok(v1.t0 < v0.t0, "A pans left", [v0, v1]);
	const box = await page.locator("#canvas").boundingBox();
	await page.mouse.move(box.x + box.width * 0.6, box.y + 40);
	v0 = v1;
	await page.mouse.wheel(0, -400);
	await page.waitForFunction((w) => trawl.view.t1 - trawl.view.t0 < w, v0.t1 - v0.t0);
	v1 = await T(() => ({ ...trawl.view }));
	ok(v1.t1 - v1.t0 < v0.t1 - v0.t0, "the wheel zooms in", [v0, v1]);
	f = await idle();
	ok(f.t0 === v1.t0 && f.t1 === v1.t1, "the frame drawn shows that range");

	// arrows: raw clocks (offsets of seconds) have some pointing back in
	// time; synchronized, none does (at every zoom level looked at)
	await T(() => trawl.expandAll(false));
	const arrowsAt = async (sync) => {
		await T((s) => trawl.setSync(s), sync);
		await T(() => trawl.setView(...trawl.fullRange()));
		const seen = { n: 0, back: 0, firstBack: null };
		for (let i = 0; i < 30; i++) {
			const f = await idle();
			for (const a of f.arrows) {
				seen.n++;
				if (a.back) { seen.back++; if (!seen.firstBack) seen.firstBack = a; }
			}
			await T(() => trawl.zoom(0.6));
		}
		return seen;
	};
	const raw = await arrowsAt(false);
	ok(raw.n > 0 && raw.back > 0, "raw clocks: " + raw.back + " of " + raw.n + " arrows drawn point back in time", raw);
	await T(() => trawl.setSync(false));
	await T(() => trawl.setView(...trawl.fullRange()));
	await idle();
	await page.screenshot({ path: shots + "/raw-" + (mode || "file") + ".png" });
	const syn = await arrowsAt(true);
	ok(syn.n > 0 && syn.back === 0, "synchronized clocks: none of " + syn.n + " arrows drawn points back", syn);
	await T(() => trawl.setView(...trawl.fullRange()));
	await idle();
	await page.screenshot({ path: shots + "/sync-" + (mode || "file") + ".png" });

	// clicking a user-space event shows its fields, host, CPU and thread
	await T(() => trawl.setSync(false));
	await T(() => trawl.expandAll(true));
	const rq = json(["-H", hosts[0], "-e", "app:request_begin", "-n", "50"]).pop();
	const tb = rel(rq.ts);
	await T(([a, b]) => trawl.setView(a, b), [tb - 200, tb + 800]);
	f = await idle();
	const lw = await T(() => trawl.labelWidth);
	let got = null;
	for (let depth = 0; depth < 16 && !got; depth++) {
		const r = await rowY("slices", rq.host, rq.context.vtid, depth);
		if (!r) break;
		const s = await T(([x, y]) => trawl.select(x, y), [lw + (tb + 2 - f.t0) / f.nspp, r.y]);
		if (s && s.fields && s.fields.includes("id = " + rq.fields.id + ",")) { got = s; break; }
	}
	ok(got && got.name === "app:request" && got.host === rq.host && got.cpu === rq.cpu && got.thread.endsWith(" " + rq.context.vtid) &&
		got.fields.includes('path = "' + rq.fields.path + '"'),
		"clicking request " + rq.fields.id + " shows its fields, host, CPU and thread", got);
	const shown = await page.locator("#details").innerText();
	ok(shown.includes("id = " + rq.fields.id) && shown.includes(rq.host), "the side panel shows them");
	await page.screenshot({ path: shots + "/click-" + (mode || "file") + ".png" });

	// search by a field value
	const res = await T((q) => trawl.search(q).then((r) => r.map((m) => m.fields)), rq.fields.path);
	ok(res.length > 0 && res.every((x) => x.includes(rq.fields.path)), "search '" + rq.fields.path + "' finds " + res.length + " events, each with it");

	ok(errors.length === 0 && (await T(() => trawl.errors.length)) === 0, "no console errors, no network requests", errors);
} finally {
	await close();
}
console.log("1.." + n);
process.exit(failed ? 1 : 0);
