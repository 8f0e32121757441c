/* SPDX-License-Identifier: MIT */
/*
 * CTF 1.8 metadata: reading a `metadata` file (text or packetized) and
 * parsing its TSDL text into the trace model of <trawl/ctf.h>.
 *
 * The parser is written by hand: a lexer that makes tokens on demand (one
 * token of lookahead) and a recursive-descent parser following the CTF 1.8
 * specification (types §4, TSDL §7, grammar annex C). Types are built while
 * parsing; what cannot be known at that point is fixed up at the end:
 * `native` byte orders (the trace's byte_order may be declared later),
 * clock references (`map = clock.NAME.value`), stream ids and the links
 * from event classes to their stream class.
 *
 * Alignments (bits) follow the specification: integers and floats default
 * to 8 when their size is a multiple of 8, else 1; strings are 8; arrays
 * and sequences take their element's; a struct takes the largest of its
 * fields' and of its `align(N)` (N in bits); a variant is 1, because its
 * alignment is that of the option selected at decoding time (§4.2.2), so
 * a variant field does not raise the alignment of its struct.
 *
 * Hostile input: the text is at most META_MAX_SIZE bytes; block nesting,
 * type depth, array dimensions and lengths, and the expanded size of a
 * type are bounded; name lookups are hashed (no quadratic behaviour); any
 * error gives one message "line L: ..." and releases everything (all the
 * memory is in two arenas: the model's and a scratch one).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctf/ctf-internal.h"
#include "internal.h"

#define META_MAX_SIZE	((size_t)64 << 20)	/* bytes of TSDL text */
#define META_MAX_FILE	((size_t)128 << 20)	/* bytes of a metadata file */
#define META_MAX_DEPTH	64			/* nesting of blocks and types */
#define META_MAX_NODES	((uint64_t)1 << 28)	/* fields of a type, expanded */
#define META_MAX_DIMS	16			/* array dimensions of a name */
#define META_MAX_ALIGN	((uint64_t)1 << 24)	/* bits */
#define META_MAX_ARRAY	((uint64_t)UINT32_MAX)	/* elements of an array */
#define META_MAX_NAME	1024			/* bytes of a (dotted) name */

#define PKT_MAGIC	0x75D11D57u
#define PKT_HDR_LEN	37

#define BO_NATIVE	2	/* until the trace's byte order is known */

/* ============================================================== reading */

static uint32_t get32(const uint8_t *b, bool be)
{
	if (be)
		return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	return (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[1] << 8 | b[0];
}

static bool is_packetized(const uint8_t *buf, size_t size)
{
	return size >= 4 && (get32(buf, false) == PKT_MAGIC || get32(buf, true) == PKT_MAGIC);
}

/*
 * Packet header (37 bytes): u32 magic, u8 uuid[16], u32 checksum,
 * u32 content_size (bits), u32 packet_size (bits), u8 compression_scheme,
 * u8 encryption_scheme, u8 checksum_scheme, u8 major, u8 minor; the magic
 * gives the byte order. The text is the content after the header. The
 * padding of the last packet may be missing (nothing is lost); any other
 * short read is an error.
 */
char *tr_ctf_metadata_unpack(const uint8_t *buf, size_t size, const char *name,
			  size_t *len, char *err, size_t errlen)
{
	if (!name)
		name = "metadata";
	if (!is_packetized(buf, size)) {
		tr_seterr(err, errlen, EINVAL, "%s: not packetized metadata (no magic at byte 0)", name);
		return NULL;
	}
	bool be = get32(buf, false) != PKT_MAGIC;
	char *out = malloc(size + 1);
	if (!out) {
		tr_seterr(err, errlen, ENOMEM, "%s: out of memory", name);
		return NULL;
	}
	size_t olen = 0, off = 0;
	while (off < size) {
		const uint8_t *h = buf + off;
		size_t left = size - off;
		if (left < PKT_HDR_LEN) {
			tr_seterr(err, errlen, EINVAL,
			       "%s: truncated packet header at byte %zu (%zu of %d bytes)",
			       name, off, left, PKT_HDR_LEN);
			goto err;
		}
		uint32_t magic = get32(h, be);
		if (magic != PKT_MAGIC) {
			tr_seterr(err, errlen, EINVAL, "%s: bad packet magic 0x%08" PRIx32 " at byte %zu",
			       name, magic, off);
			goto err;
		}
		if (off && memcmp(h + 4, buf + 4, 16) != 0) {
			tr_seterr(err, errlen, EINVAL,
			       "%s: packet at byte %zu has another UUID than the first packet",
			       name, off);
			goto err;
		}
		uint32_t content = get32(h + 24, be), psize = get32(h + 28, be);
		if (h[32] || h[33]) {
			tr_seterr(err, errlen, ENOTSUP,
			       "%s: packet at byte %zu is compressed or encrypted (schemes %u, %u)",
			       name, off, h[32], h[33]);
			goto err;
		}
		if (h[35] != 1) {
			tr_seterr(err, errlen, ENOTSUP, "%s: packet at byte %zu: unsupported CTF version %u.%u",
			       name, off, h[35], h[36]);
			goto err;
		}
		if (content % 8 || psize % 8 || content / 8 < PKT_HDR_LEN || psize < content) {
			tr_seterr(err, errlen, EINVAL,
			       "%s: packet at byte %zu: bad sizes (content %" PRIu32 " bits, packet %"
			       PRIu32 " bits)", name, off, content, psize);
			goto err;
		}
		size_t clen = content / 8, plen = psize / 8;
		if (clen > left) {
			tr_seterr(err, errlen, EINVAL,
			       "%s: truncated packet at byte %zu: its content ends at byte %zu, the file at byte %zu",
			       name, off, off + clen, size);
			goto err;
		}
		memcpy(out + olen, h + PKT_HDR_LEN, clen - PKT_HDR_LEN);
		olen += clen - PKT_HDR_LEN;
		if (plen >= left)
			break;
		off += plen;
	}
	out[olen] = 0;
	*len = olen;
	return out;
err:;
	int e = errno;
	free(out);
	errno = e;
	return NULL;
}

char *trawl_ctf_metadata_read(const char *path, size_t *len, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		tr_seterr(err, errlen, e, "%s: %s", path, strerror(e));
		return NULL;
	}
	struct stat st;
	size_t cap = 65536, n = 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0 &&
	    (uint64_t)st.st_size < META_MAX_FILE)
		cap = (size_t)st.st_size + 1;
	uint8_t *buf = malloc(cap);
	if (!buf) {
		tr_seterr(err, errlen, ENOMEM, "%s: out of memory", path);
		goto err;
	}
	for (;;) {
		if (n == cap) {
			if (cap > META_MAX_FILE) {
				tr_seterr(err, errlen, EFBIG, "%s: larger than %zu bytes", path, META_MAX_FILE);
				goto err;
			}
			size_t ncap = cap * 2 > META_MAX_FILE + 1 ? META_MAX_FILE + 1 : cap * 2;
			uint8_t *nb = realloc(buf, ncap);
			if (!nb) {
				tr_seterr(err, errlen, ENOMEM, "%s: out of memory", path);
				goto err;
			}
			buf = nb;
			cap = ncap;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			tr_seterr(err, errlen, e, "%s: read error at byte %zu: %s", path, n, strerror(e));
			goto err;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	fd = -1;
	if (n == 0) {
		tr_seterr(err, errlen, EINVAL, "%s: empty metadata file", path);
		goto err;
	}
	if (is_packetized(buf, n)) {
		char *text = tr_ctf_metadata_unpack(buf, n, path, len, err, errlen);
		int e = errno;
		free(buf);
		errno = e;
		return text;
	}
	if (n < 10 || memcmp(buf, "/* CTF 1.8", 10) != 0) {
		tr_seterr(err, errlen, EINVAL,
		       "%s: not CTF 1.8 metadata (neither \"/* CTF 1.8\" at byte 0 nor a packet magic)",
		       path);
		goto err;
	}
	if (n == cap) {
		uint8_t *nb = realloc(buf, n + 1);
		if (!nb) {
			tr_seterr(err, errlen, ENOMEM, "%s: out of memory", path);
			goto err;
		}
		buf = nb;
	}
	buf[n] = 0;
	*len = n;
	return (char *)buf;
err:;
	int e = errno;
	if (fd >= 0)
		close(fd);
	free(buf);
	errno = e;
	return NULL;
}

/* ================================================================ lexer */

enum tok_kind { T_EOF, T_ID, T_INT, T_STR, T_PUNCT };
enum { P_TYPE_ASSIGN = 256, P_ELLIPSIS, P_ARROW };

struct tok {
	enum tok_kind kind;
	int punct;		/* T_PUNCT: a character or P_* */
	uint32_t line;
	const char *s;		/* T_ID: in the text, n bytes; T_STR: decoded, NUL-terminated */
	size_t n;
	uint64_t v;		/* T_INT */
	size_t pos;		/* its first byte in the text */
};

/* Declarations, all in one hash table keyed by (scope, namespace, name). */
enum { NS_TYPE, NS_STRUCT, NS_VARIANT, NS_ENUM, NS_FIELD, NS_CLOCK, NS_ENV };

struct decl {
	struct decl *next;
	const void *key;
	int ns;
	const char *name;
	struct trawl_ctf_type *type;
	size_t idx;
};

struct scope {
	struct scope *up;
};

/* Every type the parser makes carries its depth and expanded size. */
struct xtype {
	struct trawl_ctf_type t;	/* first: a type pointer is an xtype pointer */
	uint32_t depth;
	uint64_t nodes;
};

struct clock_ref {
	struct trawl_ctf_type *t;
	const char *name;
	uint32_t line;
};

struct pevent {
	struct trawl_ctf_event_class *ec;
	uint32_t line;
	bool has_stream_id;
};

struct pstream {
	bool has_id;
	uint32_t line;
};

struct parser {
	const char *text;
	size_t len, off;
	uint32_t line;
	struct tok tk[2];	/* current token and, when ntk == 2, the next */
	int ntk;

	struct trawl_ctf_arena *a;	/* the model */
	struct trawl_ctf_arena *tmp;	/* scratch, freed after parsing */
	struct trawl_ctf_trace *tr;
	char *err;
	size_t errlen;
	bool failed;
	int errnum;
	int depth;
	struct scope *scope;

	struct decl **buckets;
	size_t nbuckets, ndecls;

	bool have_trace, have_bo;
	uint32_t trace_line;
	size_t clocks_cap, env_cap, streams_cap;
	struct trawl_ctf_type **scalars;
	size_t nscalars, scalars_cap;
	struct clock_ref *maps;
	size_t nmaps, maps_cap;
	struct pevent *events;
	size_t nevents, events_cap;
	struct pstream *pstreams;
	size_t npstreams, pstreams_cap;
};

__attribute__((format(printf, 3, 4)))
static void fail(struct parser *p, uint32_t line, const char *fmt, ...)
{
	if (p->failed)
		return;
	p->failed = true;
	p->errnum = EINVAL;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	tr_seterr(p->err, p->errlen, EINVAL, "line %" PRIu32 ": %s", line, msg);
}

static void nomem(struct parser *p)
{
	if (p->failed)
		return;
	p->failed = true;
	p->errnum = ENOMEM;
	tr_seterr(p->err, p->errlen, ENOMEM, "line %" PRIu32 ": out of memory", p->line);
}

static bool is_idstart(int c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static bool is_idchar(int c)
{
	return is_idstart(c) || is_digit(c);
}

/*
 * Decodes the escape sequence after a backslash at text[*i]. Returns 0 for
 * a byte (*cp <= 0xff), 1 for a code point to encode in UTF-8, -1 if bad.
 */
static int lex_escape(struct parser *p, size_t *i, uint32_t *cp)
{
	const char *s = p->text;
	size_t n = p->len;
	if (*i >= n)
		return -1;
	char c = s[(*i)++];
	switch (c) {
	case 'n': *cp = '\n'; return 0;
	case 't': *cp = '\t'; return 0;
	case 'r': *cp = '\r'; return 0;
	case 'a': *cp = 7; return 0;
	case 'b': *cp = 8; return 0;
	case 'f': *cp = 12; return 0;
	case 'v': *cp = 11; return 0;
	case '\\': case '\'': case '"': case '?':
		*cp = (uint8_t)c;
		return 0;
	case 'x': {
		uint32_t v = 0;
		int nd = 0;
		while (*i < n && tr_hexval((unsigned char)s[*i]) >= 0) {
			v = v * 16 + (uint32_t)tr_hexval((unsigned char)s[(*i)++]);
			if (++nd > 2)
				return -1;
		}
		if (!nd)
			return -1;
		*cp = v;
		return 0;
	}
	case 'u': case 'U': {
		int nd = c == 'u' ? 4 : 8;
		uint32_t v = 0;
		for (int k = 0; k < nd; k++) {
			if (*i >= n || tr_hexval((unsigned char)s[*i]) < 0)
				return -1;
			v = v * 16 + (uint32_t)tr_hexval((unsigned char)s[(*i)++]);
		}
		if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF))
			return -1;
		*cp = v;
		return 1;
	}
	default:
		if (c >= '0' && c <= '7') {
			uint32_t v = (uint32_t)(c - '0');
			for (int k = 0; k < 2 && *i < n && s[*i] >= '0' && s[*i] <= '7'; k++)
				v = v * 8 + (uint32_t)(s[(*i)++] - '0');
			if (v > 0xff)
				return -1;
			*cp = v;
			return 0;
		}
		return -1;
	}
}

static size_t utf8_put(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xC0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xE0 | cp >> 12);
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		o[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (char)(0xF0 | cp >> 18);
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	o[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

/* A string literal at text[off] == '"'; its decoded text goes to scratch. */
static void lex_string(struct parser *p, struct tok *t)
{
	const char *s = p->text;
	size_t n = p->len, i = p->off + 1;
	/* First pass: find the end. Escapes never decode longer than written. */
	while (i < n && s[i] != '"') {
		if (s[i] == '\n') {
			fail(p, p->line, "newline in string literal");
			return;
		}
		i += s[i] == '\\' ? 2 : 1;
	}
	if (i >= n) {
		fail(p, p->line, "unterminated string literal");
		return;
	}
	size_t end = i;
	char *o = tr_arena_alloc(p->tmp, end - p->off);
	if (!o) {
		nomem(p);
		return;
	}
	size_t on = 0;
	for (i = p->off + 1; i < end;) {
		if (s[i] != '\\') {
			if (s[i] == 0) {
				fail(p, p->line, "NUL character in string literal");
				return;
			}
			o[on++] = s[i++];
			continue;
		}
		i++;
		uint32_t cp;
		int r = lex_escape(p, &i, &cp);
		if (r < 0 || i > end) {
			fail(p, p->line, "bad escape sequence in string literal");
			return;
		}
		if (cp == 0) {
			fail(p, p->line, "NUL character in string literal");
			return;
		}
		if (r == 1)
			on += utf8_put(o + on, cp);
		else
			o[on++] = (char)cp;
	}
	o[on] = 0;
	t->kind = T_STR;
	t->s = o;
	t->n = on;
	p->off = end + 1;
}

static void lex_number(struct parser *p, struct tok *t)
{
	const char *s = p->text;
	size_t n = p->len, i = p->off;
	unsigned base = 10;
	uint64_t v = 0;
	int nd = 0;
	if (s[i] == '0' && i + 1 < n && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
		base = 16;
		i += 2;
	} else if (s[i] == '0') {
		base = 8;
	}
	for (; i < n; i++) {
		int d = tr_hexval((unsigned char)s[i]);
		if (d < 0 || (base != 16 && !is_digit((unsigned char)s[i])))
			break;
		if ((unsigned)d >= base) {
			fail(p, p->line, "bad digit '%c' in integer constant", s[i]);
			return;
		}
		if (v > (UINT64_MAX - (unsigned)d) / base) {
			fail(p, p->line, "integer constant too large");
			return;
		}
		v = v * base + (unsigned)d;
		nd++;
	}
	if (!nd) {
		fail(p, p->line, "bad integer constant");
		return;
	}
	for (int k = 0; k < 3 && i < n && strchr("uUlL", s[i]) && s[i]; k++)
		i++;
	if (i < n && is_idchar((unsigned char)s[i])) {
		fail(p, p->line, "bad integer constant");
		return;
	}
	t->kind = T_INT;
	t->v = v;
	p->off = i;
}

/* A character constant 'c' is an integer. */
static void lex_char(struct parser *p, struct tok *t)
{
	const char *s = p->text;
	size_t n = p->len, i = p->off + 1;
	uint32_t cp;
	if (i >= n || s[i] == '\'' || s[i] == '\n') {
		fail(p, p->line, "bad character constant");
		return;
	}
	if (s[i] == '\\') {
		i++;
		if (lex_escape(p, &i, &cp) < 0) {
			fail(p, p->line, "bad escape sequence in character constant");
			return;
		}
	} else {
		cp = (unsigned char)s[i++];
	}
	if (i >= n || s[i] != '\'') {
		fail(p, p->line, "bad character constant");
		return;
	}
	t->kind = T_INT;
	t->v = cp;
	p->off = i + 1;
}

static void lex(struct parser *p, struct tok *t)
{
	const char *s = p->text;
	size_t n = p->len;
	memset(t, 0, sizeof(*t));
	t->kind = T_EOF;
	for (;;) {
		t->line = p->line;
		if (p->failed || p->off >= n)
			return;
		char c = s[p->off];
		if (c == '\n') {
			p->line++;
			p->off++;
		} else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
			p->off++;
		} else if (c == '/' && p->off + 1 < n && s[p->off + 1] == '*') {
			uint32_t start = p->line;
			size_t i = p->off + 2;
			while (i + 1 < n && !(s[i] == '*' && s[i + 1] == '/')) {
				if (s[i] == '\n')
					p->line++;
				i++;
			}
			if (i + 1 >= n) {
				fail(p, start, "unterminated comment");
				return;
			}
			p->off = i + 2;
		} else if (c == '/' && p->off + 1 < n && s[p->off + 1] == '/') {
			while (p->off < n && s[p->off] != '\n')
				p->off++;
		} else {
			break;
		}
	}
	unsigned char c = (unsigned char)s[p->off];
	t->pos = p->off;
	if (is_idstart(c)) {
		size_t i = p->off;
		while (i < n && is_idchar((unsigned char)s[i]))
			i++;
		t->kind = T_ID;
		t->s = s + p->off;
		t->n = i - p->off;
		p->off = i;
	} else if (is_digit(c)) {
		lex_number(p, t);
	} else if (c == '"') {
		lex_string(p, t);
	} else if (c == '\'') {
		lex_char(p, t);
	} else if (c == ':' && p->off + 1 < n && s[p->off + 1] == '=') {
		t->kind = T_PUNCT;
		t->punct = P_TYPE_ASSIGN;
		p->off += 2;
	} else if (c == '.' && p->off + 2 < n && s[p->off + 1] == '.' && s[p->off + 2] == '.') {
		t->kind = T_PUNCT;
		t->punct = P_ELLIPSIS;
		p->off += 3;
	} else if (c == '-' && p->off + 1 < n && s[p->off + 1] == '>') {
		t->kind = T_PUNCT;
		t->punct = P_ARROW;
		p->off += 2;
	} else if (c && strchr("[](){}.*+-<>:;=,", c)) {
		t->kind = T_PUNCT;
		t->punct = c;
		p->off++;
	} else if (c >= 0x21 && c < 0x7f) {
		fail(p, p->line, "unexpected character '%c'", c);
	} else {
		fail(p, p->line, "unexpected byte 0x%02x", c);
	}
	if (p->failed)
		t->kind = T_EOF;
}

static const struct tok *cur(struct parser *p)
{
	return &p->tk[0];
}

static const struct tok *peek(struct parser *p)
{
	if (p->ntk < 2) {
		lex(p, &p->tk[1]);
		p->ntk = 2;
	}
	return &p->tk[1];
}

static void adv(struct parser *p)
{
	if (p->ntk == 2) {
		p->tk[0] = p->tk[1];
		p->ntk = 1;
	} else {
		lex(p, &p->tk[0]);
	}
}

static bool is_punct(const struct tok *t, int c)
{
	return t->kind == T_PUNCT && t->punct == c;
}

static bool is_word(const struct tok *t, const char *w)
{
	size_t l = strlen(w);
	return t->kind == T_ID && t->n == l && memcmp(t->s, w, l) == 0;
}

static const char *describe(const struct tok *t, char *buf, size_t sz)
{
	switch (t->kind) {
	case T_EOF:
		return "end of text";
	case T_ID:
		snprintf(buf, sz, "'%.*s'", (int)(t->n > 40 ? 40 : t->n), t->s);
		break;
	case T_INT:
		snprintf(buf, sz, "integer %" PRIu64, t->v);
		break;
	case T_STR:
		snprintf(buf, sz, "string \"%.40s\"", t->s);
		break;
	case T_PUNCT:
		if (t->punct == P_TYPE_ASSIGN)
			return "':='";
		if (t->punct == P_ELLIPSIS)
			return "'...'";
		if (t->punct == P_ARROW)
			return "'->'";
		snprintf(buf, sz, "'%c'", t->punct);
		break;
	}
	return buf;
}

static void expected(struct parser *p, const char *what)
{
	char b[96];
	const struct tok *t = cur(p);
	fail(p, t->line, "expected %s, found %s", what, describe(t, b, sizeof(b)));
}

static int expect(struct parser *p, int c, const char *what)
{
	if (!is_punct(cur(p), c)) {
		expected(p, what);
		return -1;
	}
	adv(p);
	return 0;
}

/* ========================================================== declarations */

static uint64_t dhash(const void *key, int ns, const char *name)
{
	uint64_t h = 1469598103934665603ull ^ ((uint64_t)(uintptr_t)key * 0x9E3779B97F4A7C15ull);
	h = (h ^ (uint64_t)ns) * 1099511628211ull;
	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 1099511628211ull;
	return h ^ (h >> 29);
}

static struct decl *dfind(struct parser *p, const void *key, int ns, const char *name)
{
	if (!p->nbuckets)
		return NULL;
	struct decl *d = p->buckets[dhash(key, ns, name) & (p->nbuckets - 1)];
	for (; d; d = d->next)
		if (d->key == key && d->ns == ns && strcmp(d->name, name) == 0)
			return d;
	return NULL;
}

static struct decl *dadd(struct parser *p, const void *key, int ns, const char *name,
			 struct trawl_ctf_type *t, size_t idx)
{
	if (p->ndecls >= p->nbuckets) {
		size_t nb = p->nbuckets ? p->nbuckets * 2 : 256;
		struct decl **b = tr_arena_alloc(p->tmp, nb * sizeof(*b));
		if (!b) {
			nomem(p);
			return NULL;
		}
		for (size_t i = 0; i < p->nbuckets; i++) {
			for (struct decl *d = p->buckets[i], *nx; d; d = nx) {
				nx = d->next;
				size_t h = dhash(d->key, d->ns, d->name) & (nb - 1);
				d->next = b[h];
				b[h] = d;
			}
		}
		p->buckets = b;
		p->nbuckets = nb;
	}
	struct decl *d = tr_arena_alloc(p->tmp, sizeof(*d));
	if (!d) {
		nomem(p);
		return NULL;
	}
	d->key = key;
	d->ns = ns;
	d->name = name;
	d->type = t;
	d->idx = idx;
	size_t h = dhash(key, ns, name) & (p->nbuckets - 1);
	d->next = p->buckets[h];
	p->buckets[h] = d;
	p->ndecls++;
	return d;
}

static const char *const ns_names[] = { "type", "struct", "variant", "enum", "field", "clock", "env" };

static struct trawl_ctf_type *lookup(struct parser *p, int ns, const char *name)
{
	for (struct scope *s = p->scope; s; s = s->up) {
		struct decl *d = dfind(p, s, ns, name);
		if (d)
			return d->type;
	}
	return NULL;
}

/* lookup(), or NULL after saying that name is unknown. */
static struct trawl_ctf_type *lookup_known(struct parser *p, int ns, const char *name,
					   uint32_t line)
{
	struct trawl_ctf_type *t = lookup(p, ns, name);
	if (!t)
		fail(p, line, "unknown %s '%s'", ns_names[ns], name);
	return t;
}

static int declare(struct parser *p, int ns, const char *name, struct trawl_ctf_type *t,
		   uint32_t line)
{
	if (dfind(p, p->scope, ns, name)) {
		fail(p, line, "%s '%s' declared twice in the same scope", ns_names[ns], name);
		return -1;
	}
	return dadd(p, p->scope, ns, name, t, 0) ? 0 : -1;
}

static int scope_push(struct parser *p)
{
	struct scope *s = tr_arena_alloc(p->tmp, sizeof(*s));
	if (!s) {
		nomem(p);
		return -1;
	}
	s->up = p->scope;
	p->scope = s;
	return 0;
}

static void scope_pop(struct parser *p)
{
	p->scope = p->scope->up;
}

/* ================================================================ values */

static char *tok_dup(struct parser *p, struct trawl_ctf_arena *a, const struct tok *t)
{
	char *s = tr_arena_strndup(a, t->s, t->n);
	if (!s)
		nomem(p);
	return s;
}

/* ident ('.' ident)* -> "a.b.c" in arena a */
static char *parse_path(struct parser *p, struct trawl_ctf_arena *a, const char *what)
{
	char buf[META_MAX_NAME];
	size_t n = 0;
	for (;;) {
		const struct tok *t = cur(p);
		if (t->kind != T_ID) {
			expected(p, what);
			return NULL;
		}
		if (n + t->n + 2 > sizeof(buf)) {
			fail(p, t->line, "name too long");
			return NULL;
		}
		memcpy(buf + n, t->s, t->n);
		n += t->n;
		adv(p);
		if (!is_punct(cur(p), '.'))
			break;
		buf[n++] = '.';
		adv(p);
	}
	char *s = tr_arena_strndup(a, buf, n);
	if (!s)
		nomem(p);
	return s;
}

enum { V_INT, V_STR, V_ID };

struct val {
	int kind;
	bool neg;		/* V_INT: -mag */
	uint64_t mag;
	const char *s;		/* V_STR, V_ID (a dotted path); scratch */
	uint32_t line;
};

static int parse_value(struct parser *p, struct val *v)
{
	const struct tok *t = cur(p);
	memset(v, 0, sizeof(*v));
	v->line = t->line;
	if (is_punct(t, '-') || is_punct(t, '+')) {
		bool neg = t->punct == '-';
		adv(p);
		t = cur(p);
		if (t->kind != T_INT) {
			expected(p, "an integer after the sign");
			return -1;
		}
		v->kind = V_INT;
		v->neg = neg && t->v;
		v->mag = t->v;
		adv(p);
		return 0;
	}
	switch (t->kind) {
	case T_INT:
		v->kind = V_INT;
		v->mag = t->v;
		adv(p);
		return 0;
	case T_STR:
		v->kind = V_STR;
		v->s = t->s;
		adv(p);
		return 0;
	case T_ID:
		v->kind = V_ID;
		v->s = parse_path(p, p->tmp, "a name");
		return v->s ? 0 : -1;
	default:
		expected(p, "a value");
		return -1;
	}
}

static int val_uint(struct parser *p, const struct val *v, uint64_t max, const char *what,
		    uint64_t *out)
{
	if (v->kind != V_INT || v->neg || v->mag > max) {
		fail(p, v->line, "%s must be an integer in 0..%" PRIu64, what, max);
		return -1;
	}
	*out = v->mag;
	return 0;
}

static int val_int(struct parser *p, const struct val *v, const char *what, int64_t *out)
{
	if (v->kind != V_INT)
		goto bad;
	if (v->neg) {
		if (v->mag > (uint64_t)INT64_MAX + 1)
			goto bad;
		*out = v->mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v->mag;
	} else {
		if (v->mag > (uint64_t)INT64_MAX)
			goto bad;
		*out = (int64_t)v->mag;
	}
	return 0;
bad:
	fail(p, v->line, "%s must be a signed 64-bit integer", what);
	return -1;
}

static int val_bool(struct parser *p, const struct val *v, const char *what, bool *out)
{
	if (v->kind == V_INT && !v->neg && v->mag <= 1) {
		*out = v->mag;
		return 0;
	}
	if (v->kind == V_ID) {
		if (!strcmp(v->s, "true") || !strcmp(v->s, "TRUE")) {
			*out = true;
			return 0;
		}
		if (!strcmp(v->s, "false") || !strcmp(v->s, "FALSE")) {
			*out = false;
			return 0;
		}
	}
	fail(p, v->line, "%s must be true or false", what);
	return -1;
}

static const char *val_str(struct parser *p, const struct val *v, const char *what, bool ids)
{
	if (v->kind == V_STR || (ids && v->kind == V_ID)) {
		char *s = tr_arena_strdup(p->a, v->s);
		if (!s)
			nomem(p);
		return s;
	}
	fail(p, v->line, "%s must be a string", what);
	return NULL;
}

static int val_byte_order(struct parser *p, const struct val *v, bool native, int *out)
{
	if (v->kind == V_ID) {
		const char *s = v->s;
		if (native && !strcmp(s, "native")) {
			*out = BO_NATIVE;
			return 0;
		}
		if (!strcmp(s, "be") || !strcmp(s, "network") || !strcmp(s, "big_endian")) {
			*out = TRAWL_CTF_BE;
			return 0;
		}
		if (!strcmp(s, "le") || !strcmp(s, "little_endian")) {
			*out = TRAWL_CTF_LE;
			return 0;
		}
	}
	fail(p, v->line, native ? "byte_order must be native, network, be or le"
			        : "the trace's byte_order must be be or le");
	return -1;
}

static int val_align(struct parser *p, const struct val *v, uint64_t *out)
{
	if (val_uint(p, v, META_MAX_ALIGN, "align", out))
		return -1;
	if (!*out || (*out & (*out - 1))) {
		fail(p, v->line, "align must be a power of two, not %" PRIu64, *out);
		return -1;
	}
	return 0;
}

static int val_base(struct parser *p, const struct val *v, uint64_t *out)
{
	static const struct { const char *s; unsigned b; } names[] = {
		{ "decimal", 10 }, { "dec", 10 }, { "d", 10 }, { "i", 10 }, { "u", 10 },
		{ "hexadecimal", 16 }, { "hex", 16 }, { "x", 16 }, { "X", 16 }, { "p", 16 },
		{ "octal", 8 }, { "oct", 8 }, { "o", 8 }, { "binary", 2 }, { "b", 2 },
	};
	if (v->kind == V_INT && !v->neg &&
	    (v->mag == 2 || v->mag == 8 || v->mag == 10 || v->mag == 16)) {
		*out = v->mag;
		return 0;
	}
	if (v->kind == V_ID) {
		for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
			if (!strcmp(v->s, names[i].s)) {
				*out = names[i].b;
				return 0;
			}
		}
	}
	fail(p, v->line, "base must be 2, 8, 10, 16 or a base name");
	return -1;
}

static int val_encoding(struct parser *p, const struct val *v, int *out)
{
	if (v->kind == V_ID || v->kind == V_STR) {
		if (!strcasecmp(v->s, "none")) {
			*out = TRAWL_CTF_ENC_NONE;
			return 0;
		}
		if (!strcasecmp(v->s, "UTF8")) {
			*out = TRAWL_CTF_ENC_UTF8;
			return 0;
		}
		if (!strcasecmp(v->s, "ASCII")) {
			*out = TRAWL_CTF_ENC_ASCII;
			return 0;
		}
	}
	fail(p, v->line, "encoding must be none, UTF8 or ASCII");
	return -1;
}

/* Skips to the ';' ending a statement (brackets balanced), consuming it. */
static int skip_statement(struct parser *p)
{
	size_t depth = 0;
	for (;;) {
		const struct tok *t = cur(p);
		if (t->kind == T_EOF) {
			expected(p, "';'");
			return -1;
		}
		if (t->kind == T_PUNCT) {
			int c = t->punct;
			if (c == '{' || c == '(' || c == '[') {
				depth++;
			} else if (c == '}' || c == ')' || c == ']') {
				if (!depth) {
					expected(p, "';'");
					return -1;
				}
				depth--;
			} else if (c == ';' && !depth) {
				adv(p);
				return 0;
			}
		}
		adv(p);
	}
}

/* At '{': skips to the matching '}', consuming it. */
static int skip_block(struct parser *p)
{
	size_t depth = 0;
	do {
		const struct tok *t = cur(p);
		if (t->kind == T_EOF) {
			expected(p, "'}'");
			return -1;
		}
		if (is_punct(t, '{'))
			depth++;
		else if (is_punct(t, '}'))
			depth--;
		adv(p);
	} while (depth);
	return 0;
}

/* ================================================================= types */

static struct xtype *xt(const struct trawl_ctf_type *t)
{
	return (struct xtype *)t;
}

static struct trawl_ctf_type *new_type(struct parser *p, enum trawl_ctf_kind k)
{
	struct xtype *x = tr_arena_alloc(p->a, sizeof(*x));
	if (!x) {
		nomem(p);
		return NULL;
	}
	x->t.kind = k;
	x->t.align = 1;
	x->depth = 1;
	x->nodes = 1;
	if (k == TRAWL_CTF_INT || k == TRAWL_CTF_FLOAT) {
		struct trawl_ctf_type **e = tr_arena_push(p->tmp, &p->scalars, &p->nscalars,
						       &p->scalars_cap, sizeof(*e));
		if (!e) {
			nomem(p);
			return NULL;
		}
		*e = &x->t;
	}
	return &x->t;
}

/* A shallow copy (structs and variants given another alignment or tag). */
static struct trawl_ctf_type *copy_type(struct parser *p, const struct trawl_ctf_type *t)
{
	struct xtype *x = tr_arena_alloc(p->a, sizeof(*x));
	if (!x) {
		nomem(p);
		return NULL;
	}
	*x = *xt(t);
	return &x->t;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b > META_MAX_NODES ? META_MAX_NODES + 1 : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
	if (a && b > (META_MAX_NODES + 1) / a)
		return META_MAX_NODES + 1;
	return a * b > META_MAX_NODES ? META_MAX_NODES + 1 : a * b;
}

/* Computes a compound type's depth and expanded size and checks both. */
static int finish_type(struct parser *p, struct trawl_ctf_type *t, uint32_t line)
{
	uint32_t d = 0;
	uint64_t nodes = 1, m = 0;
	switch (t->kind) {
	case TRAWL_CTF_STRUCT:
		for (size_t i = 0; i < t->u.s.n; i++) {
			struct xtype *f = xt(t->u.s.fields[i].type);
			d = f->depth > d ? f->depth : d;
			nodes = sat_add(nodes, f->nodes);
		}
		break;
	case TRAWL_CTF_VARIANT:
		for (size_t i = 0; i < t->u.v.n; i++) {
			struct xtype *f = xt(t->u.v.options[i].type);
			d = f->depth > d ? f->depth : d;
			m = f->nodes > m ? f->nodes : m;
		}
		nodes = sat_add(1, m);
		break;
	case TRAWL_CTF_ARRAY:
		d = xt(t->u.a.elem)->depth;
		nodes = sat_add(1, sat_mul(t->u.a.length, xt(t->u.a.elem)->nodes));
		break;
	case TRAWL_CTF_SEQUENCE:
		d = xt(t->u.q.elem)->depth;
		nodes = sat_add(1, xt(t->u.q.elem)->nodes);
		break;
	default:
		break;
	}
	xt(t)->depth = d + 1;
	xt(t)->nodes = nodes;
	if (d + 1 > META_MAX_DEPTH) {
		fail(p, line, "types nested deeper than %d levels", META_MAX_DEPTH);
		return -1;
	}
	if (nodes > META_MAX_NODES) {
		fail(p, line, "type too large (more than %" PRIu64 " fields once expanded)",
		     META_MAX_NODES);
		return -1;
	}
	return 0;
}

struct dim {
	uint64_t len;
	const char *path;	/* a sequence's length field, or NULL */
};

static int parse_dims(struct parser *p, struct dim *dims, int *nd)
{
	*nd = 0;
	while (is_punct(cur(p), '[')) {
		uint32_t line = cur(p)->line;
		adv(p);
		if (*nd == META_MAX_DIMS) {
			fail(p, line, "more than %d array dimensions", META_MAX_DIMS);
			return -1;
		}
		struct dim *d = &dims[(*nd)++];
		d->len = 0;
		d->path = NULL;
		const struct tok *t = cur(p);
		if (t->kind == T_INT) {
			if (t->v > META_MAX_ARRAY) {
				fail(p, line, "array length %" PRIu64 " too large", t->v);
				return -1;
			}
			d->len = t->v;
			adv(p);
		} else if (t->kind == T_ID) {
			d->path = parse_path(p, p->a, "a length field");
			if (!d->path)
				return -1;
		} else {
			expected(p, "an array length or a length field");
			return -1;
		}
		if (expect(p, ']', "']'"))
			return -1;
	}
	return 0;
}

/* name[a][b] is an array of a arrays of b elements: the last is innermost. */
static struct trawl_ctf_type *apply_dims(struct parser *p, struct trawl_ctf_type *t,
					 const struct dim *dims, int nd, uint32_t line)
{
	for (int i = nd - 1; i >= 0 && t; i--) {
		struct trawl_ctf_type *a;
		a = new_type(p, dims[i].path ? TRAWL_CTF_SEQUENCE : TRAWL_CTF_ARRAY);
		if (!a)
			return NULL;
		if (dims[i].path) {
			a->u.q.elem = t;
			a->u.q.length = dims[i].path;
		} else {
			a->u.a.elem = t;
			a->u.a.length = dims[i].len;
		}
		a->align = t->align;
		if (finish_type(p, a, line))
			return NULL;
		t = a;
	}
	return t;
}

static struct trawl_ctf_type *parse_type(struct parser *p);
static int parse_typealias(struct parser *p);
static int parse_typedef(struct parser *p);

/* A typealias or typedef where a scope's fields or keys may also stand:
 * 1 when one was parsed, 0 when the next token starts something else, -1 on
 * error. */
static int parse_scoped_decl(struct parser *p)
{
	const struct tok *k = cur(p);
	if (is_word(k, "typealias"))
		return parse_typealias(p) ? -1 : 1;
	if (is_word(k, "typedef"))
		return parse_typedef(p) ? -1 : 1;
	return 0;
}

static int attr_index(const struct tok *t, const char *const *names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (is_word(t, names[i]))
			return (int)i;
	return -1;
}

/*
 * `{ key = value; ... }` of integer, floating_point and string: calls fn
 * for each known key; unknown keys are errors (they may change the layout).
 */
static int parse_type_attrs(struct parser *p, const char *what, const char *const *names,
			    size_t n, int (*fn)(struct parser *, void *, int, const struct val *),
			    void *ctx)
{
	if (expect(p, '{', "'{'"))
		return -1;
	while (!is_punct(cur(p), '}')) {
		const struct tok *k = cur(p);
		if (k->kind != T_ID) {
			expected(p, "an attribute name or '}'");
			return -1;
		}
		int idx = attr_index(k, names, n);
		if (idx < 0) {
			fail(p, k->line, "unknown %s attribute '%.*s'", what,
			     (int)(k->n > 40 ? 40 : k->n), k->s);
			return -1;
		}
		adv(p);
		struct val v;
		if (expect(p, '=', "'='") || parse_value(p, &v) || expect(p, ';', "';'"))
			return -1;
		if (fn(p, ctx, idx, &v))
			return -1;
	}
	adv(p);
	return 0;
}

struct int_attrs {
	uint64_t size, align, base;
	bool has_size, sign;
	int bo, enc;
	const char *clock;
	uint32_t map_line;
};

static const char *const int_names[] = {
	"size", "align", "signed", "byte_order", "base", "encoding", "map",
};

static int int_attr(struct parser *p, void *ctx, int idx, const struct val *v)
{
	struct int_attrs *ia = ctx;
	switch (idx) {
	case 0:
		if (v->kind != V_INT || v->neg || v->mag < 1 || v->mag > 64) {
			fail(p, v->line, "integer size must be 1..64");
			return -1;
		}
		ia->size = v->mag;
		ia->has_size = true;
		return 0;
	case 1:
		return val_align(p, v, &ia->align);
	case 2:
		return val_bool(p, v, "signed", &ia->sign);
	case 3:
		return val_byte_order(p, v, true, &ia->bo);
	case 4:
		return val_base(p, v, &ia->base);
	case 5:
		return val_encoding(p, v, &ia->enc);
	default: {
		/* map = clock.NAME.value */
		size_t l = v->kind == V_ID ? strlen(v->s) : 0;
		if (l <= 12 || strncmp(v->s, "clock.", 6) != 0 || strcmp(v->s + l - 6, ".value") != 0) {
			fail(p, v->line, "map must be clock.NAME.value");
			return -1;
		}
		char *name = tr_arena_strndup(p->tmp, v->s + 6, l - 12);
		if (!name) {
			nomem(p);
			return -1;
		}
		ia->clock = name;
		ia->map_line = v->line;
		return 0;
	}
	}
}

static struct trawl_ctf_type *parse_integer(struct parser *p)
{
	uint32_t line = cur(p)->line;
	struct int_attrs ia = { .base = 10, .bo = BO_NATIVE, .enc = TRAWL_CTF_ENC_NONE };
	adv(p);
	if (parse_type_attrs(p, "integer", int_names, ARRAY_SIZE(int_names), int_attr, &ia))
		return NULL;
	if (!ia.has_size) {
		fail(p, line, "integer without a size");
		return NULL;
	}
	struct trawl_ctf_type *t = new_type(p, TRAWL_CTF_INT);
	if (!t)
		return NULL;
	t->u.i.size = (uint32_t)ia.size;
	t->u.i.sign = ia.sign;
	t->u.i.byte_order = (uint8_t)ia.bo;
	t->u.i.base = (uint8_t)ia.base;
	t->u.i.encoding = (uint8_t)ia.enc;
	t->u.i.clock = -1;
	t->align = (uint32_t)(ia.align ? ia.align : ia.size % 8 ? 1 : 8);
	if (ia.clock) {
		struct clock_ref *r = tr_arena_push(p->tmp, &p->maps, &p->nmaps, &p->maps_cap,
						 sizeof(*r));
		if (!r) {
			nomem(p);
			return NULL;
		}
		r->t = t;
		r->name = ia.clock;
		r->line = ia.map_line;
	}
	return t;
}

struct float_attrs {
	uint64_t exp, mant, align;
	int bo;
};

static const char *const float_names[] = { "exp_dig", "mant_dig", "byte_order", "align" };

static int float_attr(struct parser *p, void *ctx, int idx, const struct val *v)
{
	struct float_attrs *fa = ctx;
	switch (idx) {
	case 0:
		return val_uint(p, v, 63, "exp_dig", &fa->exp);
	case 1:
		return val_uint(p, v, 63, "mant_dig", &fa->mant);
	case 2:
		return val_byte_order(p, v, true, &fa->bo);
	default:
		return val_align(p, v, &fa->align);
	}
}

static struct trawl_ctf_type *parse_float(struct parser *p)
{
	uint32_t line = cur(p)->line;
	struct float_attrs fa = { .bo = BO_NATIVE };
	adv(p);
	if (parse_type_attrs(p, "floating_point", float_names, ARRAY_SIZE(float_names),
			     float_attr, &fa))
		return NULL;
	if (!fa.exp || !fa.mant || fa.exp + fa.mant > 64) {
		fail(p, line, "floating_point needs exp_dig >= 1 and mant_dig >= 1, 64 bits at most");
		return NULL;
	}
	struct trawl_ctf_type *t = new_type(p, TRAWL_CTF_FLOAT);
	if (!t)
		return NULL;
	t->u.f.exp_dig = (uint32_t)fa.exp;
	t->u.f.mant_dig = (uint32_t)fa.mant;
	t->u.f.byte_order = (uint8_t)fa.bo;
	t->align = (uint32_t)(fa.align ? fa.align : (fa.exp + fa.mant) % 8 ? 1 : 8);
	return t;
}

static const char *const string_names[] = { "encoding" };

static int string_attr(struct parser *p, void *ctx, int idx, const struct val *v)
{
	(void)idx;
	return val_encoding(p, v, ctx);
}

static struct trawl_ctf_type *parse_string(struct parser *p)
{
	int enc = TRAWL_CTF_ENC_UTF8;	/* the default, spec §4.2.5 */
	adv(p);
	if (is_punct(cur(p), '{') &&
	    parse_type_attrs(p, "string", string_names, 1, string_attr, &enc))
		return NULL;
	struct trawl_ctf_type *t = new_type(p, TRAWL_CTF_STRING);
	if (!t)
		return NULL;
	t->u.str.encoding = (uint8_t)enc;
	t->align = 8;
	return t;
}

/* An enumerator value in the container's representation, range-checked. */
static int enum_value(struct parser *p, const struct val *v, const struct trawl_ctf_type *c,
		      uint64_t *out)
{
	unsigned size = c->u.i.size;
	if (v->kind != V_INT) {
		fail(p, v->line, "enumerator value must be an integer");
		return -1;
	}
	if (c->u.i.sign) {
		int64_t x, lo = size == 64 ? INT64_MIN : -((int64_t)1 << (size - 1));
		int64_t hi = size == 64 ? INT64_MAX : ((int64_t)1 << (size - 1)) - 1;
		if (val_int(p, v, "enumerator value", &x))
			return -1;
		if (x < lo || x > hi) {
			fail(p, v->line, "enumerator value %" PRId64 " does not fit a signed %u-bit integer",
			     x, size);
			return -1;
		}
		*out = (uint64_t)x;
	} else {
		uint64_t max = size == 64 ? UINT64_MAX : ((uint64_t)1 << size) - 1;
		if (v->neg || v->mag > max) {
			fail(p, v->line, "enumerator value %s%" PRIu64
			     " does not fit an unsigned %u-bit integer", v->neg ? "-" : "", v->mag, size);
			return -1;
		}
		*out = v->mag;
	}
	return 0;
}

static bool enum_le(const struct trawl_ctf_type *c, uint64_t a, uint64_t b)
{
	return c->u.i.sign ? (int64_t)a <= (int64_t)b : a <= b;
}

static int parse_enumerators(struct parser *p, struct trawl_ctf_type *t, uint32_t line)
{
	const struct trawl_ctf_type *c = t->u.e.container;
	unsigned size = c->u.i.size;
	uint64_t max = c->u.i.sign ? (size == 64 ? (uint64_t)INT64_MAX : ((uint64_t)1 << (size - 1)) - 1)
				   : (size == 64 ? UINT64_MAX : ((uint64_t)1 << size) - 1);
	struct trawl_ctf_enum_range *r = NULL;
	size_t n = 0, cap = 0;
	uint64_t next = 0;
	bool overflow = false;
	adv(p);		/* { */
	while (!is_punct(cur(p), '}')) {
		const struct tok *lt = cur(p);
		const char *label;
		uint32_t ll = lt->line;
		if (lt->kind == T_ID)
			label = tok_dup(p, p->a, lt);
		else if (lt->kind == T_STR)
			label = tr_arena_strdup(p->a, lt->s);
		else {
			expected(p, "an enumerator label or '}'");
			return -1;
		}
		if (!label) {
			nomem(p);
			return -1;
		}
		adv(p);
		uint64_t lo = next, hi = next;
		if (is_punct(cur(p), '=')) {
			struct val v;
			adv(p);
			if (parse_value(p, &v) || enum_value(p, &v, c, &lo))
				return -1;
			hi = lo;
			if (is_punct(cur(p), P_ELLIPSIS)) {
				adv(p);
				if (parse_value(p, &v) || enum_value(p, &v, c, &hi))
					return -1;
				if (!enum_le(c, lo, hi)) {
					fail(p, ll, "enumerator '%s': range end below its start", label);
					return -1;
				}
			}
		} else if (overflow) {
			fail(p, ll, "enumerator '%s': value out of the container's range", label);
			return -1;
		}
		struct trawl_ctf_enum_range *e = tr_arena_push(p->tmp, &r, &n, &cap, sizeof(*r));
		if (!e) {
			nomem(p);
			return -1;
		}
		e->label = label;
		e->lo = lo;
		e->hi = hi;
		overflow = hi == max;
		next = hi + 1;	/* two's complement: right for signed values too */
		if (!is_punct(cur(p), ','))
			break;
		adv(p);
	}
	if (expect(p, '}', "',' or '}'"))
		return -1;
	if (!n) {
		fail(p, line, "enum without enumerators");
		return -1;
	}
	t->u.e.ranges = tr_arena_alloc(p->a, n * sizeof(*r));
	if (!t->u.e.ranges) {
		nomem(p);
		return -1;
	}
	memcpy(t->u.e.ranges, r, n * sizeof(*r));
	t->u.e.n = n;
	return 0;
}

/* After the keyword `enum`, `struct` or `variant`: the name that may
 * follow, into *name (NULL: none; `align` after a struct is no name).
 * Returns 0, or -1 (out of memory). */
static int parse_opt_name(struct parser *p, const char **name)
{
	*name = NULL;
	if (cur(p)->kind != T_ID || is_word(cur(p), "align"))
		return 0;
	if (!(*name = tok_dup(p, p->tmp, cur(p))))
		return -1;
	adv(p);
	return 0;
}

static struct trawl_ctf_type *parse_enum(struct parser *p)
{
	uint32_t line = cur(p)->line;
	const char *name;
	struct trawl_ctf_type *c = NULL;
	adv(p);
	if (parse_opt_name(p, &name))
		return NULL;
	if (is_punct(cur(p), ':')) {
		adv(p);
		uint32_t cl = cur(p)->line;
		if (!(c = parse_type(p)))
			return NULL;
		if (c->kind != TRAWL_CTF_INT) {
			fail(p, cl, "an enum's container must be an integer");
			return NULL;
		}
	}
	if (!is_punct(cur(p), '{')) {
		if (!name || c) {
			expected(p, "'{'");
			return NULL;
		}
		return lookup_known(p, NS_ENUM, name, line);
	}
	if (!c) {
		c = lookup(p, NS_TYPE, "int");
		if (!c || c->kind != TRAWL_CTF_INT) {
			fail(p, line, "enum without a container type, and no integer type 'int' declared");
			return NULL;
		}
	}
	struct trawl_ctf_type *t = new_type(p, TRAWL_CTF_ENUM);
	if (!t)
		return NULL;
	t->u.e.container = c;
	t->align = c->align;
	if (parse_enumerators(p, t, line))
		return NULL;
	if (name && declare(p, NS_ENUM, name, t, line))
		return NULL;
	return t;
}

/* The innermost element of arrays/sequences must not be a tagless variant. */
static int check_field(struct parser *p, const struct trawl_ctf_type *t, const char *name,
		       uint32_t line)
{
	while (t->kind == TRAWL_CTF_ARRAY || t->kind == TRAWL_CTF_SEQUENCE)
		t = trawl_ctf_type_elem(t);
	if (t->kind == TRAWL_CTF_VARIANT && !t->u.v.tag) {
		fail(p, line, "variant '%s' has no tag", name);
		return -1;
	}
	return 0;
}

/* After '{': a struct's fields or a variant's options, through the '}'. */
static int parse_fields(struct parser *p, struct trawl_ctf_type *t, uint32_t line)
{
	bool variant = t->kind == TRAWL_CTF_VARIANT;
	struct trawl_ctf_field *f = NULL;
	size_t n = 0, cap = 0;
	int ret = -1;
	if (scope_push(p))
		return -1;
	while (!is_punct(cur(p), '}')) {
		int d = parse_scoped_decl(p);
		if (d < 0)
			goto out;
		if (d)
			continue;
		struct trawl_ctf_type *base = parse_type(p);
		if (!base)
			goto out;
		if (is_punct(cur(p), ';')) {	/* a type declaration alone */
			adv(p);
			continue;
		}
		for (;;) {
			const struct tok *nt = cur(p);
			if (nt->kind != T_ID) {
				expected(p, variant ? "an option name" : "a field name");
				goto out;
			}
			uint32_t fl = nt->line;
			char *fname = tok_dup(p, p->a, nt);
			if (!fname)
				goto out;
			adv(p);
			struct dim dims[META_MAX_DIMS];
			int nd;
			if (parse_dims(p, dims, &nd))
				goto out;
			if (is_punct(cur(p), ':')) {
				fail(p, fl, "bit-field '%s': not supported", fname);
				goto out;
			}
			struct trawl_ctf_type *ft = apply_dims(p, base, dims, nd, fl);
			if (!ft || check_field(p, ft, fname, fl) ||
			    declare(p, NS_FIELD, fname, NULL, fl))
				goto out;
			struct trawl_ctf_field *e = tr_arena_push(p->tmp, &f, &n, &cap, sizeof(*f));
			if (!e) {
				nomem(p);
				goto out;
			}
			e->name = fname;
			e->type = ft;
			if (!is_punct(cur(p), ','))
				break;
			adv(p);
		}
		if (expect(p, ';', "';' or ',' after a field"))
			goto out;
	}
	adv(p);		/* } */
	struct trawl_ctf_field *ff = NULL;
	if (n) {
		if (!(ff = tr_arena_alloc(p->a, n * sizeof(*ff)))) {
			nomem(p);
			goto out;
		}
		memcpy(ff, f, n * sizeof(*ff));
	}
	if (variant) {
		if (!n) {
			fail(p, line, "variant without options");
			goto out;
		}
		t->u.v.options = ff;
		t->u.v.n = n;
		t->align = 1;
	} else {
		t->u.s.fields = ff;
		t->u.s.n = n;
		for (size_t i = 0; i < n; i++)
			if (ff[i].type->align > t->align)
				t->align = ff[i].type->align;
	}
	ret = finish_type(p, t, line);
out:
	scope_pop(p);
	return ret;
}

static struct trawl_ctf_type *parse_struct(struct parser *p)
{
	uint32_t line = cur(p)->line;
	const char *name;
	struct trawl_ctf_type *t;
	bool fresh = false;
	adv(p);
	if (parse_opt_name(p, &name))
		return NULL;
	if (is_punct(cur(p), '{')) {
		adv(p);
		if (!(t = new_type(p, TRAWL_CTF_STRUCT)) || parse_fields(p, t, line))
			return NULL;
		fresh = true;
	} else {
		if (!name) {
			expected(p, "'{' or a struct name");
			return NULL;
		}
		if (!(t = lookup_known(p, NS_STRUCT, name, line)))
			return NULL;
	}
	if (is_word(cur(p), "align")) {
		struct val v;
		uint64_t al;
		adv(p);
		if (expect(p, '(', "'(' after align") || parse_value(p, &v) ||
		    val_align(p, &v, &al) || expect(p, ')', "')'"))
			return NULL;
		if (al > t->align) {
			if (!fresh && !(t = copy_type(p, t)))
				return NULL;
			t->align = (uint32_t)al;
		}
	}
	if (fresh && name && declare(p, NS_STRUCT, name, t, line))
		return NULL;
	return t;
}

static struct trawl_ctf_type *parse_variant(struct parser *p)
{
	uint32_t line = cur(p)->line;
	const char *name, *tag = NULL;
	struct trawl_ctf_type *t;
	adv(p);
	if (parse_opt_name(p, &name))
		return NULL;
	if (is_punct(cur(p), '<')) {
		adv(p);
		if (!(tag = parse_path(p, p->a, "a tag field")) || expect(p, '>', "'>'"))
			return NULL;
	}
	if (is_punct(cur(p), '{')) {
		adv(p);
		if (!(t = new_type(p, TRAWL_CTF_VARIANT)))
			return NULL;
		t->u.v.tag = tag;
		if (parse_fields(p, t, line))
			return NULL;
		if (name && declare(p, NS_VARIANT, name, t, line))
			return NULL;
		return t;
	}
	if (!name) {
		expected(p, "'{' or a variant name");
		return NULL;
	}
	if (!(t = lookup_known(p, NS_VARIANT, name, line)))
		return NULL;
	if (tag) {
		if (!(t = copy_type(p, t)))
			return NULL;
		t->u.v.tag = tag;
	}
	return t;
}

static bool is_ctype_word(const struct tok *t)
{
	static const char *const w[] = {
		"const", "char", "short", "int", "long", "signed", "unsigned", "float",
		"double", "void", "_Bool", "_Complex", "_Imaginary",
	};
	return t->kind == T_ID && attr_index(t, w, ARRAY_SIZE(w)) >= 0;
}

static bool is_reserved(const struct tok *t)
{
	static const char *const w[] = {
		"struct", "variant", "enum", "integer", "floating_point", "string", "typealias",
		"typedef", "trace", "stream", "event", "env", "clock", "callsite", "align",
	};
	return t->kind == T_ID && attr_index(t, w, ARRAY_SIZE(w)) >= 0;
}

static int append_word(struct parser *p, char *buf, size_t *n, const char *w, size_t wl,
		       bool space)
{
	if (*n + wl + 2 > META_MAX_NAME) {
		fail(p, cur(p)->line, "type name too long");
		return -1;
	}
	if (space && *n)
		buf[(*n)++] = ' ';
	memcpy(buf + *n, w, wl);
	*n += wl;
	buf[*n] = 0;
	return 0;
}

/* A type named by C keywords ("unsigned long") or by one identifier. */
static struct trawl_ctf_type *parse_named_type(struct parser *p)
{
	char buf[META_MAX_NAME];
	size_t n = 0;
	uint32_t line = cur(p)->line;
	buf[0] = 0;
	while (is_ctype_word(cur(p))) {
		const struct tok *t = cur(p);
		if (!is_word(t, "const") && append_word(p, buf, &n, t->s, t->n, true))
			return NULL;
		adv(p);
	}
	if (!n) {
		const struct tok *t = cur(p);
		if (t->kind != T_ID || is_reserved(t)) {
			expected(p, "a type");
			return NULL;
		}
		if (append_word(p, buf, &n, t->s, t->n, false))
			return NULL;
		adv(p);
		while (is_word(cur(p), "const"))
			adv(p);
	}
	return lookup_known(p, NS_TYPE, buf, line);
}

static struct trawl_ctf_type *parse_type(struct parser *p)
{
	const struct tok *t = cur(p);
	struct trawl_ctf_type *r = NULL;
	if (p->depth >= META_MAX_DEPTH) {
		fail(p, t->line, "nesting deeper than %d levels", META_MAX_DEPTH);
		return NULL;
	}
	p->depth++;
	if (t->kind != T_ID)
		expected(p, "a type");
	else if (is_word(t, "integer"))
		r = parse_integer(p);
	else if (is_word(t, "floating_point"))
		r = parse_float(p);
	else if (is_word(t, "string"))
		r = parse_string(p);
	else if (is_word(t, "enum"))
		r = parse_enum(p);
	else if (is_word(t, "struct"))
		r = parse_struct(p);
	else if (is_word(t, "variant"))
		r = parse_variant(p);
	else
		r = parse_named_type(p);
	p->depth--;
	return p->failed ? NULL : r;
}

static int parse_typedef(struct parser *p)
{
	adv(p);
	struct trawl_ctf_type *base = parse_type(p);
	if (!base)
		return -1;
	for (;;) {
		const struct tok *nt = cur(p);
		if (nt->kind != T_ID) {
			expected(p, "a type name");
			return -1;
		}
		uint32_t line = nt->line;
		char *name = tok_dup(p, p->tmp, nt);
		if (!name)
			return -1;
		adv(p);
		struct dim dims[META_MAX_DIMS];
		int nd;
		struct trawl_ctf_type *t;
		if (parse_dims(p, dims, &nd) || !(t = apply_dims(p, base, dims, nd, line)) ||
		    declare(p, NS_TYPE, name, t, line))
			return -1;
		if (!is_punct(cur(p), ','))
			break;
		adv(p);
	}
	return expect(p, ';', "';' after typedef");
}

/* typealias TYPE [dims] := NAME WORDS [dims]; */
static int parse_typealias(struct parser *p)
{
	uint32_t line = cur(p)->line;
	struct dim dims[META_MAX_DIMS];
	int nd;
	adv(p);
	struct trawl_ctf_type *t = parse_type(p);
	if (!t)
		return -1;
	while (is_punct(cur(p), '*'))
		adv(p);
	if (parse_dims(p, dims, &nd) || !(t = apply_dims(p, t, dims, nd, line)))
		return -1;
	if (expect(p, P_TYPE_ASSIGN, "':=' in typealias"))
		return -1;
	char buf[META_MAX_NAME];
	size_t n = 0;
	buf[0] = 0;
	for (;;) {
		const struct tok *w = cur(p);
		if (w->kind == T_ID) {
			if (!is_word(w, "const") && append_word(p, buf, &n, w->s, w->n, true))
				return -1;
		} else if (is_punct(w, '*')) {
			if (append_word(p, buf, &n, "*", 1, true))
				return -1;
		} else {
			break;
		}
		adv(p);
	}
	if (!n) {
		expected(p, "a type name after ':='");
		return -1;
	}
	if (parse_dims(p, dims, &nd) || !(t = apply_dims(p, t, dims, nd, line)))
		return -1;
	if (expect(p, ';', "';' after typealias"))
		return -1;
	char *name = tr_arena_strndup(p->tmp, buf, n);
	if (!name) {
		nomem(p);
		return -1;
	}
	return declare(p, NS_TYPE, name, t, line);
}

/* A scope's struct: trace.packet.header, stream.event.header, ... */
static struct trawl_ctf_type *parse_scope_struct(struct parser *p, const char *what)
{
	uint32_t line = cur(p)->line;
	struct trawl_ctf_type *t = parse_type(p);
	if (t && t->kind != TRAWL_CTF_STRUCT) {
		fail(p, line, "%s must be a struct", what);
		return NULL;
	}
	return t;
}

/* ================================================================ blocks */

/*
 * A block of `key = value;` / `key := type;` (and typealias/typedef) after
 * its keyword. fn handles a key, consuming its value (not the ';') and
 * returning 1, or returns 0 for an unknown key, which is skipped.
 */
typedef int (*attr_fn)(struct parser *p, void *ctx, const char *key, uint32_t line,
		       bool type_assign);

static int parse_block(struct parser *p, const char *what, attr_fn fn, void *ctx)
{
	int ret = -1;
	adv(p);		/* keyword */
	if (expect(p, '{', "'{'"))
		return -1;
	if (p->depth >= META_MAX_DEPTH) {
		fail(p, cur(p)->line, "nesting deeper than %d levels", META_MAX_DEPTH);
		return -1;
	}
	if (scope_push(p))
		return -1;
	while (!is_punct(cur(p), '}')) {
		const struct tok *k = cur(p);
		int d = parse_scoped_decl(p);
		if (d < 0)
			goto out;
		if (d)
			continue;
		uint32_t line = k->line;
		char *key = parse_path(p, p->tmp, what);
		if (!key)
			goto out;
		bool ta = is_punct(cur(p), P_TYPE_ASSIGN);
		if (!ta && !is_punct(cur(p), '=')) {
			expected(p, "'=' or ':='");
			goto out;
		}
		adv(p);
		int r = fn(p, ctx, key, line, ta);
		if (r < 0)
			goto out;
		if (r == 0 ? skip_statement(p) : expect(p, ';', "';'"))
			goto out;
	}
	adv(p);		/* } */
	ret = 0;
out:
	scope_pop(p);
	return ret;
}

/* A known key given with the wrong operator. */
static int check_op(struct parser *p, const char *key, uint32_t line, bool ta, bool want_ta)
{
	if (ta != want_ta) {
		fail(p, line, "'%s' takes %s", key, want_ta ? "':= type'" : "'= value'");
		return -1;
	}
	return 0;
}

static int trace_attr(struct parser *p, void *ctx, const char *key, uint32_t line, bool ta)
{
	struct trawl_ctf_trace *tr = p->tr;
	struct val v;
	uint64_t u;
	(void)ctx;
	if (!strcmp(key, "packet.header")) {
		if (check_op(p, key, line, ta, true))
			return -1;
		tr->packet_header = parse_scope_struct(p, "trace.packet.header");
		return tr->packet_header ? 1 : -1;
	}
	int k = !strcmp(key, "major") ? 0 : !strcmp(key, "minor") ? 1 : !strcmp(key, "uuid") ? 2
		: !strcmp(key, "byte_order") ? 3 : -1;
	if (k < 0)
		return 0;
	if (check_op(p, key, line, ta, false) || parse_value(p, &v))
		return -1;
	switch (k) {
	case 0:
		if (val_uint(p, &v, UINT32_MAX, "major", &u))
			return -1;
		if (u != 1) {
			fail(p, line, "unsupported CTF major version %" PRIu64, u);
			return -1;
		}
		tr->major = (uint32_t)u;
		return 1;
	case 1:
		if (val_uint(p, &v, UINT32_MAX, "minor", &u))
			return -1;
		tr->minor = (uint32_t)u;
		return 1;
	case 2:
		if (v.kind != V_STR || tr_uuid_parse(v.s, tr->uuid)) {
			fail(p, line, "trace uuid must be a string like \"xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx\"");
			return -1;
		}
		tr->has_uuid = true;
		return 1;
	default: {
		int bo;
		if (val_byte_order(p, &v, false, &bo))
			return -1;
		tr->byte_order = (uint8_t)bo;
		p->have_bo = true;
		return 1;
	}
	}
}

static int parse_trace(struct parser *p)
{
	uint32_t line = cur(p)->line;
	if (p->have_trace) {
		fail(p, line, "a second trace block");
		return -1;
	}
	p->have_trace = true;
	p->trace_line = line;
	return parse_block(p, "a trace attribute", trace_attr, NULL);
}

static int env_attr(struct parser *p, void *ctx, const char *key, uint32_t line, bool ta)
{
	struct trawl_ctf_trace *tr = p->tr;
	struct val v;
	(void)ctx;
	if (ta)
		return 0;
	if (parse_value(p, &v))
		return -1;
	struct trawl_ctf_env e = { 0 };
	if (v.kind == V_INT) {
		e.is_int = true;
		if (val_int(p, &v, "env value", &e.ival))
			return -1;
	} else if (!(e.sval = val_str(p, &v, "env value", true))) {
		return -1;
	}
	struct decl *d = dfind(p, p, NS_ENV, key);
	if (d) {		/* a later value wins */
		e.key = tr->env[d->idx].key;
		tr->env[d->idx] = e;
		return 1;
	}
	if (!(e.key = tr_arena_strdup(p->a, key))) {
		nomem(p);
		return -1;
	}
	struct trawl_ctf_env *slot = tr_arena_push(p->a, &tr->env, &tr->nenv, &p->env_cap,
						sizeof(*slot));
	if (!slot || !dadd(p, p, NS_ENV, e.key, NULL, tr->nenv - 1)) {
		nomem(p);
		return -1;
	}
	*slot = e;
	(void)line;
	return 1;
}

struct pclock {
	struct trawl_ctf_clock c;
	bool has_name;
};

static int clock_attr(struct parser *p, void *ctx, const char *key, uint32_t line, bool ta)
{
	static const char *const names[] = {
		"name", "uuid", "description", "freq", "precision", "offset_s", "offset", "absolute",
	};
	struct pclock *pc = ctx;
	struct val v;
	int k = -1;
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(key, names[i]))
			k = (int)i;
	if (k < 0)
		return 0;
	if (check_op(p, key, line, ta, false) || parse_value(p, &v))
		return -1;
	switch (k) {
	case 0:
		if (!(pc->c.name = val_str(p, &v, "clock name", true)))
			return -1;
		pc->has_name = true;
		return 1;
	case 1:
		if (v.kind != V_STR || tr_uuid_parse(v.s, pc->c.uuid)) {
			fail(p, line, "clock uuid must be a string like \"xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx\"");
			return -1;
		}
		pc->c.has_uuid = true;
		return 1;
	case 2:
		return (pc->c.description = val_str(p, &v, "description", false)) ? 1 : -1;
	case 3:
		if (val_uint(p, &v, UINT64_MAX, "freq", &pc->c.freq))
			return -1;
		if (!pc->c.freq) {
			fail(p, line, "freq must not be 0");
			return -1;
		}
		return 1;
	case 4:
		return val_uint(p, &v, UINT64_MAX, "precision", &pc->c.precision) ? -1 : 1;
	case 5:
		return val_int(p, &v, "offset_s", &pc->c.offset_s) ? -1 : 1;
	case 6:
		return val_int(p, &v, "offset", &pc->c.offset) ? -1 : 1;
	default:
		return val_bool(p, &v, "absolute", &pc->c.absolute) ? -1 : 1;
	}
}

static int parse_clock(struct parser *p)
{
	uint32_t line = cur(p)->line;
	struct pclock pc = { .c = { .freq = 1000000000 } };
	if (parse_block(p, "a clock attribute", clock_attr, &pc))
		return -1;
	if (!pc.has_name) {
		fail(p, line, "clock without a name");
		return -1;
	}
	if (dfind(p, p, NS_CLOCK, pc.c.name)) {
		fail(p, line, "clock '%s' declared twice", pc.c.name);
		return -1;
	}
	struct trawl_ctf_trace *tr = p->tr;
	struct trawl_ctf_clock *c = tr_arena_push(p->a, &tr->clocks, &tr->nclocks, &p->clocks_cap,
					       sizeof(*c));
	if (!c || !dadd(p, p, NS_CLOCK, pc.c.name, NULL, tr->nclocks - 1)) {
		nomem(p);
		return -1;
	}
	*c = pc.c;
	return 0;
}

static int stream_attr(struct parser *p, void *ctx, const char *key, uint32_t line, bool ta)
{
	struct trawl_ctf_stream_class *sc = ctx;
	struct trawl_ctf_type **slot = NULL;
	const char *what = NULL;
	if (!strcmp(key, "id")) {
		struct val v;
		if (check_op(p, key, line, ta, false) || parse_value(p, &v) ||
		    val_uint(p, &v, UINT64_MAX, "stream id", &sc->id))
			return -1;
		p->pstreams[p->npstreams - 1].has_id = true;
		return 1;
	}
	if (!strcmp(key, "event.header")) {
		slot = &sc->event_header;
		what = "stream.event.header";
	} else if (!strcmp(key, "packet.context")) {
		slot = &sc->packet_context;
		what = "stream.packet.context";
	} else if (!strcmp(key, "event.context")) {
		slot = &sc->event_context;
		what = "stream.event.context";
	} else {
		return 0;
	}
	if (check_op(p, key, line, ta, true))
		return -1;
	*slot = parse_scope_struct(p, what);
	return *slot ? 1 : -1;
}

static int parse_stream(struct parser *p)
{
	uint32_t line = cur(p)->line;
	struct trawl_ctf_trace *tr = p->tr;
	struct trawl_ctf_stream_class *sc = tr_arena_alloc(p->a, sizeof(*sc));
	struct pstream *ps = tr_arena_push(p->tmp, &p->pstreams, &p->npstreams, &p->pstreams_cap,
					sizeof(*ps));
	if (!sc || !ps) {
		nomem(p);
		return -1;
	}
	ps->line = line;
	if (parse_block(p, "a stream attribute", stream_attr, sc))
		return -1;
	size_t cap = p->streams_cap;
	struct trawl_ctf_stream_class **slot = tr_arena_push(p->a, &tr->streams, &tr->nstreams,
							  &cap, sizeof(*slot));
	p->streams_cap = cap;
	if (!slot) {
		nomem(p);
		return -1;
	}
	*slot = sc;
	return 0;
}

static int event_attr(struct parser *p, void *ctx, const char *key, uint32_t line, bool ta)
{
	struct trawl_ctf_event_class *ec = ctx;
	struct val v;
	if (!strcmp(key, "context") || !strcmp(key, "fields")) {
		bool fields = key[0] == 'f';
		if (check_op(p, key, line, ta, true))
			return -1;
		struct trawl_ctf_type *t = parse_scope_struct(p, fields ? "event.fields"
									 : "event.context");
		if (!t)
			return -1;
		*(fields ? &ec->fields : &ec->context) = t;
		return 1;
	}
	int k = !strcmp(key, "name") ? 0 : !strcmp(key, "id") ? 1 : !strcmp(key, "stream_id") ? 2
		: !strcmp(key, "loglevel") ? 3 : !strcmp(key, "model.emf.uri") ? 4 : -1;
	if (k < 0)
		return 0;
	if (check_op(p, key, line, ta, false) || parse_value(p, &v))
		return -1;
	switch (k) {
	case 0:
		return (ec->name = val_str(p, &v, "event name", true)) ? 1 : -1;
	case 1:
		return val_uint(p, &v, UINT64_MAX, "event id", &ec->id) ? -1 : 1;
	case 2:
		if (val_uint(p, &v, UINT64_MAX, "stream_id", &ec->stream_id))
			return -1;
		p->events[p->nevents - 1].has_stream_id = true;
		return 1;
	case 3:
		return val_int(p, &v, "loglevel", &ec->loglevel) ? -1 : 1;
	default:
		return (ec->model_emf_uri = val_str(p, &v, "model.emf.uri", false)) ? 1 : -1;
	}
}

static int parse_event(struct parser *p)
{
	uint32_t line = cur(p)->line;
	struct trawl_ctf_event_class *ec = tr_arena_alloc(p->a, sizeof(*ec));
	if (!ec) {
		nomem(p);
		return -1;
	}
	ec->loglevel = INT64_MIN;
	struct pevent *e = tr_arena_push(p->tmp, &p->events, &p->nevents, &p->events_cap, sizeof(*e));
	if (!e) {
		nomem(p);
		return -1;
	}
	e->ec = ec;
	e->line = line;
	if (parse_block(p, "an event attribute", event_attr, ec))
		return -1;
	if (!ec->name) {
		fail(p, line, "event without a name");
		return -1;
	}
	return 0;
}

static int parse_top(struct parser *p)
{
	while (!p->failed && cur(p)->kind != T_EOF) {
		const struct tok *t = cur(p);
		int r;
		if (is_punct(t, ';')) {
			adv(p);
			continue;
		}
		if (t->kind != T_ID) {
			expected(p, "a declaration");
			return -1;
		}
		if (is_word(t, "trace")) {
			r = parse_trace(p);
		} else if (is_word(t, "env")) {
			r = parse_block(p, "an env key", env_attr, NULL);
		} else if (is_word(t, "clock")) {
			r = parse_clock(p);
		} else if (is_word(t, "stream")) {
			r = parse_stream(p);
		} else if (is_word(t, "event")) {
			r = parse_event(p);
		} else if (is_word(t, "typealias")) {
			r = parse_typealias(p);
		} else if (is_word(t, "typedef")) {
			r = parse_typedef(p);
		} else if (is_word(t, "struct") || is_word(t, "variant") || is_word(t, "enum") ||
			   is_word(t, "integer") || is_word(t, "floating_point") ||
			   is_word(t, "string")) {
			/* a type declaration, e.g. struct name { ... }; */
			r = parse_type(p) ? expect(p, ';', "';' after a type declaration") : -1;
		} else if (is_punct(peek(p), '{')) {
			/* callsite { ... } and other blocks we do not use */
			adv(p);
			r = skip_block(p);
		} else {
			expected(p, "a declaration");
			r = -1;
		}
		if (r)
			return -1;
	}
	return p->failed ? -1 : 0;
}

/* ============================================================ finishing */

struct idkey {
	uint64_t a, b;
	size_t idx;
};

static int cmp_idkey(const void *x, const void *y)
{
	const struct idkey *l = x, *r = y;
	if (l->a != r->a)
		return l->a < r->a ? -1 : 1;
	if (l->b != r->b)
		return l->b < r->b ? -1 : 1;
	return l->idx < r->idx ? -1 : l->idx > r->idx;
}

static int finalize(struct parser *p)
{
	struct trawl_ctf_trace *tr = p->tr;
	if (!p->have_trace) {
		fail(p, p->line, "no trace block");
		return -1;
	}
	if (!p->have_bo) {
		fail(p, p->trace_line, "the trace block has no byte_order");
		return -1;
	}
	for (size_t i = 0; i < p->nscalars; i++) {
		struct trawl_ctf_type *t = p->scalars[i];
		uint8_t *bo = t->kind == TRAWL_CTF_INT ? &t->u.i.byte_order : &t->u.f.byte_order;
		if (*bo == BO_NATIVE)
			*bo = tr->byte_order;
	}
	for (size_t i = 0; i < p->nmaps; i++) {
		struct decl *d = dfind(p, p, NS_CLOCK, p->maps[i].name);
		if (!d) {
			fail(p, p->maps[i].line, "unknown clock '%s'", p->maps[i].name);
			return -1;
		}
		p->maps[i].t->u.i.clock = (int32_t)d->idx;
	}

	/* Stream classes: ids (one stream may omit it), sorted for lookups. */
	if (!tr->nstreams && p->nevents) {
		struct trawl_ctf_stream_class *sc = tr_arena_alloc(p->a, sizeof(*sc));
		tr->streams = tr_arena_alloc(p->a, sizeof(*tr->streams));
		if (!sc || !tr->streams) {
			nomem(p);
			return -1;
		}
		tr->streams[0] = sc;
		tr->nstreams = 1;
	}
	size_t ns = tr->nstreams;
	struct idkey *sk = tr_arena_alloc(p->tmp, (ns + 1) * sizeof(*sk));
	if (!sk) {
		nomem(p);
		return -1;
	}
	for (size_t i = 0; i < ns; i++) {
		if (i < p->npstreams && !p->pstreams[i].has_id && ns > 1) {
			fail(p, p->pstreams[i].line, "stream without an id (there are %zu streams)", ns);
			return -1;
		}
		sk[i] = (struct idkey){ tr->streams[i]->id, 0, i };
	}
	qsort(sk, ns, sizeof(*sk), cmp_idkey);
	for (size_t i = 1; i < ns; i++) {
		if (sk[i].a == sk[i - 1].a) {
			fail(p, p->pstreams[sk[i].idx].line, "stream id %" PRIu64 " declared twice",
			     sk[i].a);
			return -1;
		}
	}

	/* Event classes: into their stream class, in declaration order. */
	size_t ne = p->nevents;
	size_t *count = tr_arena_alloc(p->tmp, (ns + 1) * sizeof(*count));
	size_t *sidx = tr_arena_alloc(p->tmp, (ne + 1) * sizeof(*sidx));
	struct idkey *ek = tr_arena_alloc(p->tmp, (ne + 1) * sizeof(*ek));
	if (!count || !sidx || !ek) {
		nomem(p);
		return -1;
	}
	for (size_t i = 0; i < ne; i++) {
		struct trawl_ctf_event_class *ec = p->events[i].ec;
		if (ns == 1 && !p->events[i].has_stream_id)	/* the only stream */
			ec->stream_id = tr->streams[0]->id;
		size_t lo = 0, hi = ns;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (sk[mid].a < ec->stream_id)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == ns || sk[lo].a != ec->stream_id) {
			fail(p, p->events[i].line, "event '%s': no stream with id %" PRIu64,
			     ec->name, ec->stream_id);
			return -1;
		}
		sidx[i] = sk[lo].idx;
		count[sidx[i]]++;
		ek[i] = (struct idkey){ sidx[i], ec->id, i };
	}
	qsort(ek, ne, sizeof(*ek), cmp_idkey);
	for (size_t i = 1; i < ne; i++) {
		if (ek[i].a == ek[i - 1].a && ek[i].b == ek[i - 1].b) {
			const struct pevent *e = &p->events[ek[i].idx];
			fail(p, e->line, "event '%s': id %" PRIu64 " already used in stream %" PRIu64,
			     e->ec->name, e->ec->id, e->ec->stream_id);
			return -1;
		}
	}
	for (size_t i = 0; i < ns; i++) {
		if (!count[i])
			continue;
		tr->streams[i]->events = tr_arena_alloc(p->a, count[i] * sizeof(void *));
		if (!tr->streams[i]->events) {
			nomem(p);
			return -1;
		}
	}
	for (size_t i = 0; i < ne; i++) {
		struct trawl_ctf_stream_class *sc = tr->streams[sidx[i]];
		sc->events[sc->nevents++] = p->events[i].ec;
	}
	return 0;
}

struct trawl_ctf_trace *trawl_ctf_metadata_parse(const char *text, size_t len,
						 char *err, size_t errlen)
{
	if (!text && len) {
		tr_seterr(err, errlen, EINVAL, "no metadata text");
		return NULL;
	}
	if (len > META_MAX_SIZE) {
		tr_seterr(err, errlen, E2BIG, "metadata too large (%zu bytes, at most %zu)", len,
		       META_MAX_SIZE);
		return NULL;
	}
	struct parser p = {
		.text = text ? text : "",
		.len = len,
		.line = 1,
		.err = err,
		.errlen = errlen,
		.ntk = 1,
	};
	p.a = tr_arena_new();
	p.tmp = tr_arena_new();
	if (!p.a || !p.tmp || !(p.tr = tr_arena_alloc(p.a, sizeof(*p.tr)))) {
		tr_arena_free(p.a);
		tr_arena_free(p.tmp);
		tr_seterr(err, errlen, ENOMEM, "out of memory");
		return NULL;
	}
	p.tr->arena = p.a;
	p.tr->major = 1;
	p.tr->minor = 8;
	if (scope_push(&p) == 0) {
		lex(&p, &p.tk[0]);
		if (parse_top(&p) == 0)
			finalize(&p);
	}
	tr_arena_free(p.tmp);
	if (p.failed) {
		tr_arena_free(p.a);
		errno = p.errnum;
		return NULL;
	}
	return p.tr;
}

/* ------------------------------------------------------- clock rewrite */

struct obuf {
	char *b;
	size_t len, cap;
	bool nomem;
};

static void oput(struct obuf *o, const char *s, size_t n)
{
	if (o->nomem)
		return;
	if (o->len + n + 1 > o->cap) {
		size_t cap = (o->len + n + 1) * 2;
		char *nb = realloc(o->b, cap);
		if (!nb) {
			o->nomem = true;
			return;
		}
		o->b = nb;
		o->cap = cap;
	}
	memcpy(o->b + o->len, s, n);
	o->len += n;
	o->b[o->len] = 0;
}

char *trawl_ctf_metadata_set_clocks(const char *text, size_t len,
				    const struct trawl_ctf_clock_values *vals, size_t n,
				    const char *note, char *err, size_t errlen)
{
	struct parser p = { .text = text, .len = len, .line = 1, .err = err, .errlen = errlen };
	struct obuf o = { 0 };
	struct tok t, prev = { .kind = T_EOF };
	size_t from = 0, k = 0, stmt = 0;
	int depth = 0, clock_depth = -1;
	bool in_stmt = false, drop = false, want_open = false;

	if (!text || len > META_MAX_SIZE) {
		tr_seterr(err, errlen, EINVAL, "no metadata text, or too large");
		return NULL;
	}
	if (!(p.tmp = tr_arena_new())) {
		tr_seterr(err, errlen, ENOMEM, "out of memory");
		return NULL;
	}
	for (;;) {
		lex(&p, &t);
		if (p.failed || t.kind == T_EOF)
			break;
		if (want_open) {
			want_open = false;
			if (is_punct(&t, '{') && k < n)
				clock_depth = depth + 1;
		}
		if (depth == 0 && is_word(&t, "clock"))
			want_open = true;
		if (clock_depth == depth && depth > 0) {
			/* a statement of the clock block: freq, offset_s, offset dropped */
			if (!in_stmt && t.kind == T_ID) {
				in_stmt = true;
				stmt = t.pos;
				drop = is_word(&t, "freq") || is_word(&t, "offset_s") || is_word(&t, "offset");
			} else if (in_stmt && is_punct(&t, ';')) {
				in_stmt = false;
				if (drop) {
					/* the line, when the statement was all of it */
					size_t a = stmt, b = t.pos + 1;
					while (a > from && (text[a - 1] == ' ' || text[a - 1] == '\t'))
						a--;
					size_t e = b;
					while (e < len && (text[e] == ' ' || text[e] == '\t'))
						e++;
					if ((a == 0 || text[a - 1] == '\n') && e < len && text[e] == '\n')
						b = e + 1;
					else
						a = stmt;
					oput(&o, text + from, a - from);
					from = b;
				}
			}
		}
		if (is_punct(&t, '{')) {
			depth++;
		} else if (is_punct(&t, '}')) {
			if (clock_depth == depth && depth > 0) {
				char line[256];
				int m;
				oput(&o, text + from, t.pos - from);
				from = t.pos;
				if (note) {
					oput(&o, "\t/* ", 4);
					oput(&o, note, strlen(note));
					oput(&o, " */\n", 4);
				}
				m = snprintf(line, sizeof(line), "\tfreq = %" PRIu64 ";\n\toffset_s = %" PRId64
					     ";\n\toffset = %" PRId64 ";\n", vals[k].freq, vals[k].offset_s,
					     vals[k].offset);
				oput(&o, line, (size_t)m);
				k++;
				clock_depth = -1;
				in_stmt = false;
			}
			if (depth > 0)
				depth--;
		}
		prev = t;
	}
	(void)prev;
	tr_arena_free(p.tmp);
	if (p.failed) {
		free(o.b);
		errno = p.errnum;
		return NULL;
	}
	oput(&o, text + from, len - from);
	if (o.nomem || !o.b) {
		free(o.b);
		tr_seterr(err, errlen, ENOMEM, "out of memory");
		return NULL;
	}
	return o.b;
}
