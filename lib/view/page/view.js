"use strict";
/*
 * trawl view: the page's code (lib/view/page/view.js, embedded by the
 * build). It reads the index (hosts, strings, rows, their levels of detail
 * and tiles), draws the rows on a canvas, and loads a tile (deflated, in
 * the page's blob or from the server) the first time a frame needs it.
 * docs/view.md describes the data; window.trawl is the page's model, read
 * by the browser tests.
 */
(function () {
	const started = performance.now();	/* the page parsed, its code runs */
	const LOD_W1 = 64, ROW_H = 18, HOST_H = 26, LABEL_W = 210;
	const $ = (id) => document.getElementById(id);

	/* The page is read as windows-1252, one character per byte; the
	 * characters of bytes 0x80-0x9f are these (the Encoding Standard's
	 * index), the others are U+00xx. */
	const CP = [0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160,
		0x2039, 0x152, 0x8d, 0x17d, 0x8f, 0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013,
		0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178];
	const BYTE = new Map(CP.map((c, i) => [c, 0x80 + i]));
	function bytesOf(str, from, len) {
		const out = new Uint8Array(len);
		let n = 0;
		for (let i = from, end = from + len; i < end; i++) {
			let c = str.charCodeAt(i);
			if (c === 1) {
				c = str.charCodeAt(++i) - 48;
				c = c === 0 ? 0 : c === 1 ? 1 : c === 2 ? 13 : 60;
			} else if (c > 0xff) {
				c = BYTE.get(c);
			}
			out[n++] = c;
		}
		return out.subarray(0, n);
	}
	const utf8 = new TextDecoder("utf-8");
	function textOf(el) {
		const s = el.textContent;
		return utf8.decode(bytesOf(s, 0, s.length));
	}

	const IX = JSON.parse(textOf($("trawl-index")));
	/* The tiles' characters, cut into elements trawl-t0, trawl-t1, ... of
	 * IX.chunk characters: a tile is read from the one or two elements
	 * holding it, their text nodes' data taken as they are (no copy of the
	 * whole blob into one string, which at 20 M events is 100 MB). */
	const chunks = new Map();
	function chunkText(k) {
		let s = chunks.get(k);
		if (s === undefined) {
			const el = $("trawl-t" + k);
			s = "";
			if (el) for (let n = el.firstChild; n; n = n.nextSibling) s += n.data;
			chunks.set(k, s);
		}
		return s;
	}
	/* The code runs before the tiles' elements are parsed: element k is
	 * whole once element k + 1 exists or the document is parsed. */
	function blobReady(off, len) {
		return document.readyState !== "loading" || !!$("trawl-t" + (Math.floor((off + len - 1) / IX.chunk) + 1));
	}
	let later = [], retrying = false;
	function whenParsed(fn) {
		later.push(fn);
		if (retrying) return;
		retrying = true;
		setTimeout(() => {
			retrying = false;
			const l = later;
			later = [];
			l.forEach(job);
		}, 20);
	}
	function blobText(off, len) {
		const C = IX.chunk, end = off + len;
		let out = "";
		for (let k = Math.floor(off / C); k * C < end; k++)
			out += chunkText(k).substring(Math.max(off, k * C) - k * C, Math.min(end, (k + 1) * C) - k * C);
		return out;
	}
	const S = IX.strings;
	const hosts = IX.hosts;
	const errors = [];
	const model = {
		index: IX, hosts: hosts.map((h) => h.name), rows: [], errors,
		view: { t0: 0, t1: 1, sync: false }, frames: [], lastFrame: null,
		firstPaint: null, tilesLoaded: 0, tilesPending: 0, selected: null,
		/* work done off the frames (tiles read and parsed): jobs and
		 * time of the longest slice */
		parse: { slices: 0, maxJobs: 0, maxMs: 0 },
		started,
	};
	window.trawl = model;

	/* ------------------------------------------------------------ clocks */
	const hasSync = hosts.some((h) => h.sync);
	function xf(h) {	/* display = a * raw + b */
		const s = hosts[h].sync;
		if (!model.view.sync || !s) return [1, 0];
		return [s.slope, s.y0 - s.slope * s.t0];
	}

	/* ------------------------------------------------------------ rows */
	const rowsByHost = hosts.map(() => ({ header: null, cpus: [], threads: new Map(), other: [] }));
	const arrowRows = [];
	IX.rows.forEach((r, i) => {
		r.index = i;
		r.levels.forEach((l) => {	/* prefix max of the tiles' ends */
			let m = -Infinity;
			l.maxE = l[1].map((t) => (m = Math.max(m, t[1])));
		});
		const g = rowsByHost[r.host];
		if (r.kind === "host") g.header = r;
		else if (r.kind === "cpu") g.cpus.push(r);
		else if (r.kind === "arrows") arrowRows.push(r);
		else {
			if (!g.threads.has(r.id)) g.threads.set(r.id, []);
			g.threads.get(r.id).push(r);
		}
	});
	function threadName(h, tid) {
		const rs = rowsByHost[h].threads.get(tid) || [];
		const t = rs.find((r) => r.kind === "thread" && r.label);
		return t ? S[t.label] : "";
	}
	function rowName(r) {
		switch (r.kind) {
		case "host": return hosts[r.host].name;
		case "cpu": return "CPU " + r.id;
		case "thread": return (S[r.label] || "?") + " " + r.id;
		case "marks": return r.id < 0 ? "events" : (threadName(r.host, r.id) || "tid") + " " + r.id + " events";
		case "slices": return (threadName(r.host, r.id) || "tid") + " " + r.id + " slices" + (r.depth ? " " + r.depth : "");
		}
		return r.kind;
	}
	/* per host: 0 collapsed, 1 its CPUs, 2 everything */
	const expanded = hosts.map((h, i) => {
		const g = rowsByHost[i];
		let n = g.cpus.length;
		g.threads.forEach((rs) => (n += rs.length));
		return n <= 24 ? 2 : g.cpus.length && g.cpus.length <= 16 ? 1 : 0;
	});
	const hostOrder = hosts.map((h, i) => i).sort((a, b) => (hosts[a].name < hosts[b].name ? -1 : hosts[a].name > hosts[b].name ? 1 : 0));
	function layout() {
		const out = [];
		let y = 0;
		hostOrder.forEach((i) => {
			const h = hosts[i];
			const g = rowsByHost[i];
			const hdr = g.header || { kind: "host", host: i, id: 0, levels: [], n: 0 };
			out.push({ r: hdr, y, h: HOST_H, name: rowName(hdr), host: i, header: true });
			y += HOST_H;
			if (!expanded[i]) return;
			g.cpus.slice().sort((a, b) => a.id - b.id).forEach((r) => {
				out.push({ r, y, h: ROW_H, name: rowName(r), host: i });
				y += ROW_H;
			});
			if (expanded[i] < 2) return;
			[...g.threads.keys()].sort((a, b) => a - b).forEach((tid) => {
				const order = { thread: 0, slices: 1, marks: 2 };
				g.threads.get(tid).filter((r) => r.n > 0)
					.sort((a, b) => order[a.kind] - order[b.kind] || a.depth - b.depth)
					.forEach((r) => {
						out.push({ r, y, h: ROW_H, name: rowName(r), host: i });
						y += ROW_H;
					});
			});
		});
		model.rows = out;
		model.height = y;
		scrollY = Math.max(0, Math.min(scrollY, y - (H || 400) / 2));
		return out;
	}

	/* ------------------------------------------------------------ tiles */
	const tiles = new Map();	/* id -> { state, data } */
	function readUV(b, p) {
		let v = 0, mul = 1, c;
		do {
			c = b[p.i++];
			v += (c & 0x7f) * mul;
			mul *= 128;
		} while (c & 0x80 && p.i < b.length);
		return v;
	}
	const unzz = (v) => (v % 2 ? -(v + 1) / 2 : v / 2);
	function parseTile(b, t, r, width) {
		const n = t[2], p = { i: 0 };
		const s = new Float64Array(n), e = new Float64Array(n), v = new Uint32Array(n), c = new Uint32Array(n);
		const g = new Float64Array(n);
		for (let k = 0; k < n; k++) g[k] = unzz(readUV(b, p));
		for (let k = 0; k < n; k++) e[k] = unzz(readUV(b, p));
		/* gaps from the previous item's end (its start for arrows) */
		for (let k = 0, prev = t[0]; k < n; k++) {
			s[k] = prev + g[k];
			e[k] += s[k];
			prev = r.kind === "arrows" ? s[k] : e[k];
		}
		for (let k = 0; k < n; k++) v[k] = readUV(b, p);
		for (let k = 0; k < n; k++) c[k] = readUV(b, p) + 1;
		let det = null;
		if (width === 0 && (r.kind === "marks" || r.kind === "slices")) {
			const len = new Uint32Array(n);
			for (let k = 0; k < n; k++) len[k] = readUV(b, p);
			det = new Uint32Array(n + 1);
			det[0] = p.i;
			for (let k = 0; k < n; k++) det[k + 1] = det[k] + len[k];
		}
		let maxRate = 0;	/* host rows: the most events a ns (bar heights) */
		if (r.kind === "host") for (let k = 0; k < n; k++) maxRate = Math.max(maxRate, c[k] / Math.max(1, e[k] - s[k]));
		return { n, s, e, v, c, det, bytes: det ? b : null, maxRate };
	}
	async function inflate(bytes) {
		const ds = new DecompressionStream("deflate");
		const out = new Response(new Blob([bytes]).stream().pipeThrough(ds));
		return new Uint8Array(await out.arrayBuffer());
	}
	/* A frame only asks for a tile: reading its characters, inflating and
	 * parsing it are jobs run in slices (tasks of their own, never inside a
	 * frame), each slice at most SLICE_MS of jobs (at least one), then the
	 * next frame draws what is there. */
	function tile(r, li, ti) {
		const lv = r.levels[li], t = lv[1][ti], id = t[3];
		let e = tiles.get(id);
		if (e) return e.data;
		e = { data: null };
		tiles.set(id, e);
		model.tilesPending++;
		const done = (err) => {
			if (err) {
				errors.push(String(err));
				console.error("trawl view:", err);
			}
			model.tilesPending--;
			model.tilesLoaded++;
			redraw();
		};
		const parse = (b) => job(() => {
			try { e.data = parseTile(b, t, r, lv[0]); } catch (err) { return done(err); }
			done();
		});
		if (IX.served) {
			fetch("tile/" + id).then((res) => {
				if (!res.ok) throw new Error("tile " + id + ": " + res.status);
				return res.arrayBuffer();
			}).then((ab) => inflate(new Uint8Array(ab))).then(parse, done);
		} else {
			job(function read() {
				if (!blobReady(t[4], t[5])) return whenParsed(read);
				let raw;
				try {
					const str = blobText(t[4], t[5]);
					raw = bytesOf(str, 0, str.length);
				} catch (err) { return done(err); }
				inflate(raw).then(parse, done);
			});
		}
		return null;
	}
	const SLICE_MS = 8, jobs = [];
	let pumping = false;
	const chan = new MessageChannel();
	chan.port1.onmessage = () => {
		const t0 = performance.now();
		let n = 0;
		while (jobs.length && (n === 0 || performance.now() - t0 < SLICE_MS)) {
			jobs.shift()();
			n++;
		}
		const P = model.parse, ms = performance.now() - t0;
		P.slices++; P.maxJobs = Math.max(P.maxJobs, n); P.maxMs = Math.max(P.maxMs, ms);
		pumping = false;
		if (jobs.length) pump();
	};
	function pump() {
		if (!pumping) { pumping = true; chan.port2.postMessage(0); }
	}
	function job(fn) {
		jobs.push(fn);
		pump();
	}
	/* The level for ns-per-pixel nspp: at most about 2 items a pixel. */
	function levelFor(r, nspp) {
		const target = nspp / 2;
		let L = LOD_W1;
		while (L < target) L *= 4;
		let best = 0;
		r.levels.forEach((l, i) => { if (l[0] <= L) best = i; });
		return best;
	}
	/* Tiles of level li overlapping raw [a, b]. */
	function tilesIn(r, li, a, b) {
		const l = r.levels[li], ts = l[1], me = l.maxE;
		let lo = 0, hi = ts.length;
		while (lo < hi) { const m = (lo + hi) >> 1; if (me[m] < a) lo = m + 1; else hi = m; }
		const out = [];
		for (let i = lo; i < ts.length && ts[i][0] <= b; i++) if (ts[i][1] >= a) out.push(i);
		return out;
	}

	/* ------------------------------------------------------------ drawing */
	const canvas = $("canvas"), ruler = $("ruler");
	const ctx = canvas.getContext("2d"), rctx = ruler.getContext("2d");
	let W = 0, H = 0, dpr = 1, scrollY = 0, dirty = false, hits = [];
	const hues = new Map();
	function hue(k) {
		let c = hues.get(k);
		if (!c) {
			/* hsl -> "#rrggbb" once: a canvas parses hex faster than hsl() */
			const h = (k * 2654435761) >>> 0, H = h % 360, S = 0.55, L = (40 + (h >> 9) % 16) / 100;
			const f = (n) => {
				const q = (n + H / 30) % 12, a = S * Math.min(L, 1 - L);
				return Math.round(255 * (L - a * Math.max(-1, Math.min(q - 3, 9 - q, 1)))).toString(16).padStart(2, "0");
			};
			hues.set(k, (c = "#" + f(0) + f(8) + f(4)));
		}
		return c;
	}
	const STATE = { 1: ["running", "#2e9e44"], 2: ["runnable", "#f0a030"], 3: ["blocked", "#c4cad6"], 4: ["syscall", "#8e44ad"] };
	function resize() {
		dpr = window.devicePixelRatio || 1;
		W = canvas.clientWidth; H = canvas.clientHeight;
		canvas.width = Math.max(1, W * dpr); canvas.height = Math.max(1, H * dpr);
		ruler.width = Math.max(1, ruler.clientWidth * dpr); ruler.height = Math.max(1, ruler.clientHeight * dpr);
		redraw();
	}
	function redraw() {
		if (!dirty) { dirty = true; requestAnimationFrame(frame); }
	}
	const plotW = () => Math.max(1, W - LABEL_W);

	function frame() {
		dirty = false;
		const t0 = performance.now();
		const v = model.view, pw = plotW(), nspp = (v.t1 - v.t0) / pw;
		const rows = model.rows;
		let items = 0, pending = 0, work = 0;
		const perRow = [], arrows = [];
		let worstPx = 0;
		hits = [];
		ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
		ctx.clearRect(0, 0, W, H);
		ctx.font = "11px system-ui, sans-serif";
		ctx.textBaseline = "middle";
		for (const L of rows) {
			const y = L.y - scrollY;
			if (y + L.h < 0 || y > H) continue;
			if (L.header) { ctx.fillStyle = "#eef1f6"; ctx.fillRect(0, y, W, L.h); }
			const [a, b] = xf(L.host);
			const ra = (v.t0 - b) / a, rb = (v.t1 - b) / a;	/* the host's raw range */
			const r = L.r, hit = { L, x: [], ref: [] };
			let n = 0, lastPx = -Infinity, curPx = -Infinity, inPx = 0, scanned = 0, inRange = 0, ntiles = 0;
			if (r.levels.length) {
				const li = levelFor(r, nspp / a);
				const width = r.levels[li][0];
				let maxc = 1;
				const tis = tilesIn(r, li, ra, rb);
				for (const ti of tis) {
					const d = tile(r, li, ti);
					ntiles++;
					if (!d) { pending++; continue; }
					if (d.maxRate > maxc) maxc = d.maxRate;
					/* a row's items do not overlap and are in start
					 * order: the first in view by binary search, the
					 * scan stops at the first past it (the work of a
					 * row is the items in view, plus one a tile) */
					let lo = 0, hi = d.n;
					while (lo < hi) { const m = (lo + hi) >> 1; if (d.e[m] < ra) lo = m + 1; else hi = m; }
					for (let k = lo; k < d.n; k++) {
						scanned++;
						if (d.s[k] > rb) break;
						if (d.e[k] < ra) continue;
						inRange++;
						let x0 = LABEL_W + (a * d.s[k] + b - v.t0) / nspp;
						let x1 = LABEL_W + (a * d.e[k] + b - v.t0) / nspp;
						x0 = Math.max(LABEL_W - 2, x0); x1 = Math.min(W + 2, x1);
						/* a sliver in the pixel the last item drawn ends in:
						 * left out (two items a pixel at most) */
						if (x1 - x0 < 1 && Math.floor(x0) <= lastPx) continue;
						lastPx = Math.floor(Math.max(x1, x0 + 1));
						n++;
						const pk = Math.floor(x0);
						if (pk === curPx) { if (++inPx > worstPx) worstPx = inPx; } else { curPx = pk; inPx = 1; if (!worstPx) worstPx = 1; }
						drawItem(r, d, k, x0, x1, y, L.h, maxc, width);
						hit.x.push(x0, Math.max(x1, x0 + 1)); hit.ref.push(li, ti, k);
					}
				}
			}
			items += n;
			work += scanned;
			perRow.push({ name: L.name, kind: r.kind, host: L.host, items: n, scanned, inRange, tiles: ntiles });
			hits.push(hit);
			ctx.strokeStyle = "#e4e7ee"; ctx.beginPath(); ctx.moveTo(0, y + L.h - 0.5); ctx.lineTo(W, y + L.h - 0.5); ctx.stroke();
		}
		const tRows = performance.now();
		pending += drawArrows(arrows, nspp);
		const tArrows = performance.now();
		drawLabels(rows);
		drawRuler(nspp);
		const ms = performance.now() - t0;
		model.lastFrame = { ms, rowsMs: tRows - t0, arrowsMs: tArrows - tRows, items, scanned: work, perRow, arrows, pending, nspp, maxPerPixel: worstPx, t0: v.t0, t1: v.t1, sync: v.sync };
		model.frames.push(ms);
		const lf = model.lastFrame;
		if (!model.worstFrame || ms > model.worstFrame.ms)
			model.worstFrame = { ms, rowsMs: lf.rowsMs, arrowsMs: lf.arrowsMs, restMs: ms - (tArrows - t0), items, scanned: work, arrows: arrows.length, pending, nspp };
		if (model.frames.length > 1000) model.frames.shift();
		if (!pending && model.firstPaint === null) {
			model.firstPaint = performance.now();
			document.documentElement.dataset.ready = "1";
		}
		$("range").textContent = fmtDur(v.t1 - v.t0) + " shown";
	}

	function drawItem(r, d, k, x0, x1, y, h, maxc, width) {
		const w = Math.max(1, x1 - x0);
		switch (r.kind) {
		case "host": {
			const f = Math.log1p(d.c[k] / Math.max(1, d.e[k] - d.s[k]) * 1e4) / Math.log1p(maxc * 1e4);
			const bh = Math.max(2, (h - 6) * f);
			ctx.fillStyle = "#7d8fb3";
			ctx.fillRect(x0, y + h - 3 - bh, w, bh);
			break;
		}
		case "cpu":
			ctx.fillStyle = hue(d.v[k]);
			ctx.fillRect(x0, y + 2, w, h - 4);
			if (w > 50) { ctx.fillStyle = "#fff"; clipText(S[d.v[k]], x0 + 3, y + h / 2, w - 6); }
			break;
		case "thread": {
			const st = d.v[k] & 7, col = (STATE[st] || ["", "#999"])[1];
			ctx.fillStyle = col;
			if (st === 3) ctx.fillRect(x0, y + h / 2 - 2, w, 4);
			else ctx.fillRect(x0, y + 3, w, h - 6);
			if (st === 4 && w > 50) { ctx.fillStyle = "#fff"; clipText(S[d.v[k] >>> 3], x0 + 3, y + h / 2, w - 6); }
			break;
		}
		case "marks":
			ctx.fillStyle = hue(d.v[k]);
			if (d.c[k] > 1 && x1 - x0 >= 2) ctx.fillRect(x0, y + 4, w, h - 8);
			else { ctx.beginPath(); ctx.moveTo(x0, y + 3); ctx.lineTo(x0 + 4, y + h - 3); ctx.lineTo(x0 - 4, y + h - 3); ctx.fill(); }
			break;
		case "slices":
			ctx.fillStyle = hue(d.v[k]);
			ctx.fillRect(x0, y + 2, w, h - 4);
			if (w > 40) { ctx.fillStyle = "#fff"; clipText(S[d.v[k]], x0 + 3, y + h / 2, w - 6); }
			break;
		}
	}
	/* text cut to fit w pixels (widths measured once per string) */
	const widths = new Map();
	function fit(s, w) {
		const key = ctx.font + "\u0000" + s;
		let m = widths.get(key);
		if (m === undefined) { m = ctx.measureText(s).width; if (widths.size < 50000) widths.set(key, m); }
		if (m <= w) return s;
		const n = Math.floor(s.length * w / m) - 1;
		return n > 1 ? s.slice(0, n) + "\u2026" : "";
	}
	function clipText(s, x, y, w) {
		if (s) ctx.fillText(fit(s, w), x, y);
	}
	function drawLabels(rows) {
		ctx.fillStyle = "#f6f7fa"; ctx.fillRect(0, 0, LABEL_W, H);
		ctx.strokeStyle = "#c6ccd8"; ctx.beginPath(); ctx.moveTo(LABEL_W - 0.5, 0); ctx.lineTo(LABEL_W - 0.5, H); ctx.stroke();
		for (const L of rows) {
			const y = L.y - scrollY;
			if (y + L.h < 0 || y > H) continue;
			ctx.fillStyle = L.header ? "#1d2330" : "#3c465a";
			ctx.font = L.header ? "600 12px system-ui, sans-serif" : "11px system-ui, sans-serif";
			const t = L.header ? ["\u25b8 ", "\u25bf ", "\u25be "][expanded[L.host]] + L.name : "   " + L.name;
			ctx.fillText(fit(t, LABEL_W - 10), 6, y + L.h / 2);
		}
	}
	function hostY(h) {
		const L = model.rows.find((R) => R.header && R.host === h);
		return L ? L.y - scrollY + L.h / 2 : null;
	}
	function drawArrows(out, nspp) {
		const v = model.view, groups = [[], [], [], [], [], [], [], []];
		let pending = 0;
		ctx.save(); ctx.beginPath(); ctx.rect(LABEL_W, 0, W - LABEL_W, H); ctx.clip();
		for (const r of arrowRows) {
			const ya = hostY(r.host), yb = hostY(r.id);
			if (ya === null || yb === null || !r.levels.length) continue;
			const [a, b] = xf(r.host), [a2, b2] = xf(r.id);
			const ra = (v.t0 - b) / a, rb = (v.t1 - b) / a;
			/* arrows of a pair: one per 8 pixels at most (each level's
			 * arrow stands for its bucket's messages, drawn thicker) */
			const li = levelFor(r, 16 * nspp / a);
			/* sent in view, or received in view: sent dmin..dmax before */
			const ts = new Set(tilesIn(r, li, ra, rb));
			tilesIn(r, li, (v.t0 - b2) / a2 - r.dmax, (v.t1 - b2) / a2 - r.dmin).forEach((t) => ts.add(t));
			for (const ti of [...ts].sort((x, y) => x - y)) {
				const d = tile(r, li, ti);
				if (!d) { pending++; continue; }
				for (let k = 0; k < d.n; k++) {
					const ds = a * d.s[k] + b, de = a2 * d.e[k] + b2;
					if ((ds < v.t0 && de < v.t0) || (ds > v.t1 && de > v.t1)) continue;
					const x0 = LABEL_W + (ds - v.t0) / nspp, x1 = LABEL_W + (de - v.t0) / nspp;
					const back = de < ds;
					const o = { from: r.host, to: r.id, x0, x1, y0: ya, y1: yb, back, dt: de - ds, count: d.c[k], send: ds, recv: de };
					out.push(o);
					groups[(back ? 4 : 0) + Math.min(4, Math.floor(1 + Math.log2(d.c[k]))) - 1].push(o);
				}
			}
		}
		/* one path per colour and width: lines, then heads */
		for (const back of [false, true])
			for (let lw = 1; lw <= 4; lw++) {
				const sel = groups[(back ? 4 : 0) + lw - 1];
				if (!sel.length) continue;
				ctx.strokeStyle = ctx.fillStyle = back ? "rgba(214,40,40,.85)" : "rgba(30,90,200,.75)";
				ctx.lineWidth = lw;
				ctx.beginPath();
				for (const o of sel) { ctx.moveTo(o.x0, o.y0); ctx.lineTo(o.x1, o.y1); }
				ctx.stroke();
				ctx.beginPath();
				for (const o of sel) {
					const ang = Math.atan2(o.y1 - o.y0, o.x1 - o.x0);
					ctx.moveTo(o.x1, o.y1);
					ctx.lineTo(o.x1 - 7 * Math.cos(ang - 0.4), o.y1 - 7 * Math.sin(ang - 0.4));
					ctx.lineTo(o.x1 - 7 * Math.cos(ang + 0.4), o.y1 - 7 * Math.sin(ang + 0.4));
					ctx.closePath();
				}
				ctx.fill();
			}
		ctx.restore();
		ctx.lineWidth = 1;
		return pending;
	}

	/* ------------------------------------------------------------ time */
	function fmtDur(ns) {
		const a = Math.abs(ns);
		if (a >= 1e9) return (ns / 1e9).toFixed(a >= 1e10 ? 2 : 3) + " s";
		if (a >= 1e6) return (ns / 1e6).toFixed(3) + " ms";
		if (a >= 1e3) return (ns / 1e3).toFixed(3) + " \u00b5s";
		return ns.toFixed(0) + " ns";
	}
	/* a tick: seconds with as many decimals as the step needs */
	function fmtTick(t, step) {
		const d = Math.max(0, Math.min(9, Math.ceil(-Math.log10(step / 1e9) - 1e-9)));
		return "+" + (t / 1e9).toFixed(d) + " s";
	}
	function fmtAbs(t) {	/* display time (ns from base) -> UTC */
		const tot = IX.base_ns + Math.round(t);
		const sec = IX.base_s + Math.floor(tot / 1e9), ns = ((tot % 1e9) + 1e9) % 1e9;
		const d = new Date(sec * 1000);
		return d.toISOString().slice(0, 19).replace("T", " ") + "." + String(ns).padStart(9, "0") + " UTC";
	}
	function drawRuler(nspp) {
		const v = model.view, rw = ruler.clientWidth;
		rctx.setTransform(dpr, 0, 0, dpr, 0, 0);
		rctx.clearRect(0, 0, rw, 40);
		rctx.fillStyle = "#f6f7fa"; rctx.fillRect(0, 0, rw, 40);
		rctx.font = "11px ui-monospace, monospace"; rctx.fillStyle = "#1d2330"; rctx.textBaseline = "top";
		rctx.fillText(fmtAbs(v.t0), 6, 4);
		rctx.fillText((v.sync ? "synchronized" : "raw") + " clocks", 6, 22);
		let step = 1;
		while (step / nspp < 90) step *= step.toString()[0] === "2" ? 2.5 : 2;
		const first = Math.ceil(v.t0 / step) * step;
		rctx.strokeStyle = "#8a94a8";
		for (let t = first; t <= v.t1; t += step) {
			const x = LABEL_W + (t - v.t0) / nspp;
			rctx.beginPath(); rctx.moveTo(x + 0.5, 28); rctx.lineTo(x + 0.5, 40); rctx.stroke();
			rctx.fillText(fmtTick(t - span0, step), x + 3, 24);
		}
	}

	/* ------------------------------------------------------------ view */
	let span0 = 0, span1 = 1;
	function fullRange() {
		let lo = Infinity, hi = -Infinity;
		hosts.forEach((h, i) => {
			const [a, b] = xf(i);
			if (h.last > h.first || h.first) {
				lo = Math.min(lo, a * h.first + b); hi = Math.max(hi, a * h.last + b);
			}
		});
		if (!(hi > lo)) { lo = 0; hi = 1e6; }
		span0 = lo; span1 = hi;
		return [lo, hi];
	}
	function setView(t0, t1) {
		if (!(t1 - t0 >= 10)) { const m = (t0 + t1) / 2; t0 = m - 5; t1 = m + 5; }
		const pad = (span1 - span0) * 0.5;
		const w = t1 - t0;
		if (t0 < span0 - pad) { t0 = span0 - pad; t1 = t0 + w; }
		if (t1 > span1 + pad) { t1 = span1 + pad; t0 = t1 - w; }
		model.view.t0 = t0; model.view.t1 = t1;
		redraw();
	}
	function zoom(f, x) {	/* f < 1: in, around plot x (px) */
		const v = model.view, pw = plotW();
		const fx = x === undefined ? 0.5 : Math.min(1, Math.max(0, (x - LABEL_W) / pw));
		const c = v.t0 + (v.t1 - v.t0) * fx, w = (v.t1 - v.t0) * f;
		setView(c - w * fx, c - w * fx + w);
	}
	function pan(frac) {
		const v = model.view, d = (v.t1 - v.t0) * frac;
		setView(v.t0 + d, v.t1 + d);
	}
	function setSync(on) {
		if (on && !hasSync) return;
		const v = model.view, [c0, c1] = [v.t0, v.t1];
		/* keep the reference host's range: the same events stay in view */
		v.sync = !!on;
		fullRange();
		model.view.t0 = c0; model.view.t1 = c1;
		const btn = $("sync");
		btn.textContent = "clocks: " + (v.sync ? "synchronized" : "raw");
		btn.classList.toggle("on", v.sync);
		redraw();
	}

	/* ------------------------------------------------------------ details */
	function esc(s) { return String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]); }
	function describe(L, li, ti, k) {
		const r = L.r, d = tiles.get(r.levels[li][1][ti][3]).data, [a, b] = xf(L.host);
		const out = { host: hosts[L.host].name, row: L.name, kind: r.kind, start: a * d.s[k] + b, end: a * d.e[k] + b, count: d.c[k] };
		if (r.kind === "cpu") { out.cpu = r.id; out.thread = S[d.v[k]]; out.name = "running"; }
		if (r.kind === "thread") {
			out.thread = rowName(r); out.name = (STATE[d.v[k] & 7] || ["?"])[0];
			if ((d.v[k] & 7) === 4) out.syscall = S[d.v[k] >>> 3];
		}
		if (r.kind === "marks" || r.kind === "slices") { out.name = S[d.v[k]]; out.thread = r.id >= 0 ? (threadName(L.host, r.id) + " " + r.id) : ""; }
		if (r.kind === "host") out.name = d.c[k] + " events";
		if (d.det) {
			out.fields = utf8.decode(d.bytes.subarray(d.det[k], d.det[k + 1]));
			const m = /cpu_id = (\d+)/.exec(out.fields);
			if (m) out.cpu = +m[1];
		}
		return out;
	}
	function showDetails(o) {
		model.selected = o;
		if (!o) { $("details").textContent = "Nothing there."; return; }
		let h = "<table>";
		const row = (k, v) => { if (v !== undefined && v !== "") h += "<tr><th>" + k + "</th><td>" + esc(v) + "</td></tr>"; };
		row("event", o.name); row("host", o.host); row("cpu", o.cpu); row("thread", o.thread); row("syscall", o.syscall);
		row("row", o.row);
		row("start", fmtAbs(o.start)); row("relative", "+" + fmtDur(o.start - span0));
		if (o.end !== o.start) row("duration", fmtDur(o.end - o.start));
		if (o.count > 1) row("stands for", o.count + " items (zoom in for each)");
		if (o.from !== undefined) { row("from", o.from); row("to", o.to); row("delay", fmtDur(o.dt)); }
		h += "</table>";
		if (o.fields) h += "<pre>" + esc(o.fields) + "</pre>";
		$("details").innerHTML = h;
	}
	function select(x, y) {
		const L = model.rows.find((R) => y + scrollY >= R.y && y + scrollY < R.y + R.h);
		if (!L) return showDetails(null), null;
		if (x < LABEL_W) {
			if (L.header) {	/* collapsed -> CPUs -> everything -> collapsed */
				const e = expanded[L.host], cpus = rowsByHost[L.host].cpus.length;
				expanded[L.host] = e === 0 ? (cpus ? 1 : 2) : e === 1 ? 2 : 0;
				layout(); redraw();
			}
			return null;
		}
		/* on a span or mark itself, that; else an arrow near the point;
		 * else the nearest item within 4 px */
		const hit = hits.find((h) => h.L === L);
		let best = -1, bd = 4;
		if (hit) for (let i = 0; i < hit.ref.length / 3; i++) {
			const x0 = hit.x[2 * i], x1 = hit.x[2 * i + 1];
			const dd = x < x0 ? x0 - x : x > x1 ? x - x1 : 0;
			if (dd < bd) { bd = dd; best = i; }
		}
		const f = model.lastFrame;
		if (f && !(best >= 0 && bd === 0 && !L.header)) for (const ar of f.arrows) {
			const dx = ar.x1 - ar.x0, dy = ar.y1 - ar.y0, len2 = dx * dx + dy * dy || 1;
			const u = Math.max(0, Math.min(1, ((x - ar.x0) * dx + (y - ar.y0) * dy) / len2));
			const px = ar.x0 + u * dx - x, py = ar.y0 + u * dy - y;
			if (px * px + py * py < 9) {
				const o = { name: "message", host: hosts[ar.from].name, from: hosts[ar.from].name, to: hosts[ar.to].name, start: ar.send, end: ar.recv, dt: ar.dt, count: ar.count, kind: "arrow" };
				showDetails(o);
				return o;
			}
		}
		if (best < 0) return showDetails(null), null;
		const [li, ti, k] = hit.ref.slice(3 * best, 3 * best + 3);
		const o = describe(L, li, ti, k);
		showDetails(o);
		return o;
	}

	/* ------------------------------------------------------------ search */
	async function search(q) {
		q = q.trim().toLowerCase();
		const res = [], box = $("results");
		box.textContent = q ? "searching..." : "";
		if (!q) return res;
		for (const r of IX.rows) {
			if (r.kind !== "marks" && r.kind !== "slices" || !r.levels.length) continue;
			const lv = r.levels[0];
			for (let ti = 0; ti < lv[1].length && res.length < 200; ti++) {
				let d = tile(r, 0, ti);
				while (!d) { await new Promise((ok) => setTimeout(ok, 5)); d = tiles.get(lv[1][ti][3]).data; }
				for (let k = 0; k < d.n && res.length < 200; k++) {
					const name = S[d.v[k]] || "";
					const f = d.det ? utf8.decode(d.bytes.subarray(d.det[k], d.det[k + 1])) : "";
					if (name.toLowerCase().includes(q) || f.toLowerCase().includes(q))
						res.push({ host: r.host, row: r.index, raw: d.s[k], name, fields: f });
				}
			}
		}
		box.innerHTML = "";
		const hdr = document.createElement("p");
		hdr.textContent = res.length + (res.length >= 200 ? "+" : "") + " events match";
		box.appendChild(hdr);
		res.slice(0, 200).forEach((m) => {
			const div = document.createElement("div");
			const [a, b] = xf(m.host);
			div.textContent = hosts[m.host].name + " +" + fmtDur(a * m.raw + b) + " " + m.name;
			div.onclick = () => {
				const [a2, b2] = xf(m.host), t = a2 * m.raw + b2, w = Math.min(model.view.t1 - model.view.t0, 1e6);
				expanded[m.host] = 2; layout();
				setView(t - w / 2, t + w / 2);
			};
			box.appendChild(div);
		});
		model.lastSearch = res;
		return res;
	}

	/* ------------------------------------------------------------ input */
	canvas.addEventListener("keydown", key);
	document.addEventListener("keydown", (e) => { if (e.target === document.body) key(e); });
	function key(e) {
		if (e.ctrlKey || e.metaKey || e.altKey) return;
		switch (e.key.toLowerCase()) {
		case "w": zoom(0.7); break;
		case "s": zoom(1 / 0.7); break;
		case "a": pan(-0.15); break;
		case "d": pan(0.15); break;
		case "c": setSync(!model.view.sync); break;
		case "e": $("expand").click(); break;
		case "0": setView(...fullRange()); break;
		default: return;
		}
		e.preventDefault();
	}
	canvas.addEventListener("wheel", (e) => {
		e.preventDefault();
		if (e.shiftKey || Math.abs(e.deltaX) > Math.abs(e.deltaY)) pan((e.deltaX || e.deltaY) / 800);
		else if (e.altKey) { scrollY = Math.max(0, Math.min(model.height - H / 2, scrollY + e.deltaY)); redraw(); }
		else zoom(Math.pow(1.0015, e.deltaY), e.offsetX);
	}, { passive: false });
	let drag = null;
	canvas.addEventListener("mousedown", (e) => { drag = { x: e.offsetX, y: e.offsetY, t0: model.view.t0, t1: model.view.t1, sy: scrollY, moved: false }; canvas.focus(); });
	window.addEventListener("mousemove", (e) => {
		if (!drag) return;
		const dx = e.offsetX - drag.x, dy = e.offsetY - drag.y;
		if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
		if (!drag.moved) return;
		const d = -dx * (drag.t1 - drag.t0) / plotW();
		scrollY = Math.max(0, Math.min(Math.max(0, model.height - H / 2), drag.sy - dy));
		setView(drag.t0 + d, drag.t1 + d);
	});
	window.addEventListener("mouseup", (e) => {
		if (drag && !drag.moved && e.target === canvas) select(e.offsetX, e.offsetY);
		drag = null;
	});
	$("sync").addEventListener("click", () => setSync(!model.view.sync));
	$("expand").addEventListener("click", () => {
		const all = !expanded.every((x) => x === 2);
		expanded.fill(all ? 2 : 0);
		$("expand").textContent = all ? "collapse all" : "expand all";
		layout(); redraw();
	});
	$("search").addEventListener("keydown", (e) => { if (e.key === "Enter") search(e.target.value); e.stopPropagation(); });
	window.addEventListener("resize", resize);

	/* ------------------------------------------------------------ panels */
	function factors() {
		if (!hasSync) { $("factors").textContent = "No sync result (run trawl sync): raw clocks only."; $("sync").disabled = true; return; }
		let h = "<table><tr><th>host</th><th>offset</th><th>drift</th><th>bound</th></tr>";
		hosts.forEach((x) => {
			const s = x.sync;
			if (!s) { h += "<tr><td>" + esc(x.name) + "</td><td colspan=3>none</td></tr>"; return; }
			h += "<tr><td>" + esc(x.name) + (s.is_ref ? " (ref)" : "") + "</td><td class=num>" + fmtDur(s.offset) +
				"</td><td class=num>" + s.drift_ppm + " ppm</td><td class=num>" + (s.bound > 9e18 ? "none" : "\u00b1" + fmtDur(s.bound)) + "</td></tr>";
		});
		$("factors").innerHTML = h + "</table><p>offset: the host's clock minus the reference's, at the host's first event; drift: the host clock's rate against the reference's (as trawl sync prints them).</p><p>" + esc(hosts.filter((x) => x.sync).map((x) => x.name + ": " + x.sync.quality).join(", ")) + "</p>";
	}
	function legend() {
		let h = "";
		Object.values(STATE).forEach(([n, c]) => (h += "<span class=sw style='background:" + c + "'></span>" + n + " "));
		h += "<br><span class=sw style='background:rgba(30,90,200,.75)'></span>message <span class=sw style='background:rgba(214,40,40,.85)'></span>received before sent";
		$("legend").innerHTML = h;
	}

	document.title = IX.title;
	$("title").textContent = IX.title;
	Object.assign(model, {
		setView, zoom, pan, setSync, select, search, layout, fullRange,
		expandAll: (on) => { expanded.fill(on === false ? 0 : 2); layout(); redraw(); },
		expand: (host, on) => { expanded[hosts.findIndex((h) => h.name === host)] = on === false ? 0 : on === 1 ? 1 : 2; layout(); redraw(); },
		/* scrolls row i of trawl.rows into view; returns its top on screen */
		reveal: (i) => {
			const L = model.rows[i];
			scrollY = Math.max(0, L.y - H / 3);
			redraw();
			return L.y - scrollY;
		},
		labelWidth: LABEL_W,
		idle: () => new Promise((ok) => {
			const check = () => (!dirty && model.tilesPending === 0 && model.lastFrame && !model.lastFrame.pending ? ok(model.lastFrame) : setTimeout(check, 10));
			check();
		}),
	});
	factors(); legend();
	setSync(hasSync);
	layout();
	setView(...fullRange());
	resize();
	canvas.focus();
})();
