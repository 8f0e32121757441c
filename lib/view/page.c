/* SPDX-License-Identifier: MIT */
/*
 * lib/view/page.c - the HTML page: the assets (lib/view/page/, embedded at
 * build time), the index, and the tiles' bytes as characters (in elements
 * of TR_VIEW_CHUNK characters, a tile's characters at the offset the index
 * gives, decoded and inflated by the page when it first needs the tile). A served page has no tiles in it:
 * it fetches tile/ID from the server.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "view-internal.h"

struct out {
	int fd;			/* -1: to buf, or only counted */
	struct tr_vbuf *buf;
	uint64_t size;
	int err;
};

static void put(struct out *o, const void *p, size_t n)
{
	if (o->err)
		return;
	o->size += n;
	if (o->fd >= 0)
		o->err = tr_write_all(o->fd, p, n);
	else if (o->buf)
		o->err = tr_vbuf_put(o->buf, p, n);
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

/* JSON inside a <script> element: "</" would end it; "<\/" is the same JSON. */
static void put_script_json(struct out *o, const char *s, size_t n)
{
	size_t a = 0;

	for (size_t i = 0; i + 1 < n; i++)
		if (s[i] == '<' && s[i + 1] == '/') {
			put(o, s + a, i + 1 - a);
			put(o, "\\", 1);
			a = i + 1;
		}
	put(o, s + a, n - a);
}

/*
 * Bytes as characters of a page read as windows-1252 (one character per
 * byte, every byte its own character: the page maps them back), inside a <script>
 * element: the four bytes the HTML parser would change or act on are
 * escaped as 0x01 followed by '0' + which (NUL becomes U+FFFD, CR becomes
 * LF, '<' may end the element, and 0x01 itself). About 1.6% larger where
 * base64 is 33%.
 */
struct blob {
	uint64_t at;		/* characters written so far */
};

/*
 * The tiles' characters are cut into elements of TR_VIEW_CHUNK characters
 * (trawl-t0, trawl-t1, ...: the page reads a tile's characters from the
 * one or two elements holding them, never one string of the whole blob).
 * A cut may fall between 0x01 and its digit: the page joins the pieces
 * before decoding.
 */
static void blob_char(struct out *o, struct blob *bl, char *buf, size_t *l, char c)
{
	if (bl->at && bl->at % TR_VIEW_CHUNK == 0) {
		char tag[64];

		put(o, buf, *l);
		*l = 0;
		snprintf(tag, sizeof(tag), "</script>\n<script type=\"text/plain\" id=\"trawl-t%llu\">",
			 (unsigned long long)(bl->at / TR_VIEW_CHUNK));
		puts_(o, tag);
	}
	buf[(*l)++] = c;
	bl->at++;
}

static void put_blob(struct out *o, struct blob *bl, const uint8_t *p, size_t n)
{
	char buf[8192];
	size_t l = 0;

	for (size_t i = 0; i < n; i++) {
		uint8_t c = p[i];

		if (c == 0 || c == 1 || c == '\r' || c == '<') {
			blob_char(o, bl, buf, &l, 1);
			blob_char(o, bl, buf, &l, (char)('0' + (c == 0 ? 0 : c == 1 ? 1 : c == '\r' ? 2 : 3)));
		} else {
			blob_char(o, bl, buf, &l, (char)c);
		}
		if (l + 2 > sizeof(buf)) {
			put(o, buf, l);
			l = 0;
		}
	}
	put(o, buf, l);
}

/* Length of p[0 .. n) once escaped as put_blob() does. */
size_t tr_view_blob_len(const uint8_t *p, size_t n)
{
	size_t l = n;

	for (size_t i = 0; i < n; i++)
		l += p[i] == 0 || p[i] == 1 || p[i] == '\r' || p[i] == '<';
	return l;
}

static int page(const struct trawl_view *v, bool served, struct out *o)
{
	struct trawl_view_stats st;
	struct blob bl = { 0 };
	char *index;
	size_t len;
	int rc;

	if ((rc = tr_view_index(v, served, &index, &len)))
		return rc;
	puts_(o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"windows-1252\">\n"
		 "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		 "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; "
		 "connect-src 'self' data:\">\n<link rel=\"icon\" href=\"data:,\">\n"
		 "<title>trawl view</title>\n<style>\n");
	put(o, tr_view_asset_css, tr_view_asset_css_len);
	puts_(o, "</style></head><body>\n");
	put(o, tr_view_asset_html, tr_view_asset_html_len);
	puts_(o, "<script type=\"application/json\" id=\"trawl-index\">");
	put_script_json(o, index, len);
	free(index);
	/* the code before the tiles: it draws once the first elements (the
	 * coarsest levels) are parsed, while the parser reads on */
	puts_(o, "</script>\n<script>\n");
	put(o, tr_view_asset_js, tr_view_asset_js_len);
	puts_(o, "</script>\n<script type=\"text/plain\" id=\"trawl-t0\">");
	trawl_view_stats(v, &st);
	if (!served)
		for (uint64_t k = 0; k < st.tiles; k++) {
			const uint8_t *p;
			size_t n;

			if (!tr_view_tile(v, tr_view_blob_id(v, k), &p, &n))
				put_blob(o, &bl, p, n);
		}
	puts_(o, "</script></body></html>\n");
	return o->err;
}

int tr_view_page(const struct trawl_view *v, bool served, struct tr_vbuf *buf)
{
	struct out o = { .fd = -1, .buf = buf };

	return page(v, served, &o);
}

uint64_t trawl_view_html_size(const struct trawl_view *v)
{
	struct out o = { .fd = -1 };

	return page(v, false, &o) ? 0 : o.size;
}

int trawl_view_write_html(struct trawl_view *v, int fd, char *err, size_t errlen)
{
	struct out o = { .fd = fd };
	int rc;

	if ((rc = trawl_view_build(v, err, errlen)))
		return rc;
	if ((rc = page(v, false, &o)))
		return tr_seterr(err, errlen, -rc, "writing the page: %s", strerror(-rc));
	return 0;
}
