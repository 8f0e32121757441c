/* SPDX-License-Identifier: MIT */
/* Small helpers: error messages, UUIDs, globs (clocks: clock.c). */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "trawl/ctf.h"
#include "internal.h"

int tr_seterr(char *err, size_t errlen, int errnum, const char *fmt, ...)
{
	if (err && errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	errno = errnum;
	return -errnum;
}

int tr_write_all(int fd, const void *p, size_t n)
{
	const uint8_t *b = p;
	while (n) {
		ssize_t r = write(fd, b, n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

int tr_mkdir_p(const char *path)
{
	char *p = strdup(path);
	if (!p)
		return -ENOMEM;
	int ret = 0;
	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s)
			continue;
		char c = *s;
		*s = 0;
		if (mkdir(p, 0777) < 0 && errno != EEXIST) {
			ret = -errno;
			break;
		}
		if (!c)
			break;
		*s = c;
	}
	free(p);
	return ret;
}

int tr_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int tr_uuid_parse(const char *s, uint8_t out[16])
{
	int n = 0;
	for (int i = 0; s[i] && n < 32; i++) {
		if (s[i] == '-') {
			if (i != 8 && i != 13 && i != 18 && i != 23)
				return -EINVAL;
			continue;
		}
		int v = tr_hexval((unsigned char)s[i]);
		if (v < 0)
			return -EINVAL;
		if (n & 1)
			out[n / 2] |= (uint8_t)v;
		else
			out[n / 2] = (uint8_t)(v << 4);
		n++;
	}
	return n == 32 && strlen(s) == 36 ? 0 : -EINVAL;
}

void tr_uuid_format(const uint8_t u[16], char out[37])
{
	static const char hx[] = "0123456789abcdef";
	int o = 0;
	for (int i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hx[u[i] >> 4];
		out[o++] = hx[u[i] & 15];
	}
	out[o] = 0;
}

void tr_uuid_random(uint8_t out[16])
{
	size_t got = 0;
	while (got < 16) {
		ssize_t r = getrandom(out + got, 16 - got, 0);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	for (; got < 16; got++)
		out[got] = (uint8_t)rand();
	out[6] = (uint8_t)((out[6] & 0x0f) | 0x40);	/* version 4 */
	out[8] = (uint8_t)((out[8] & 0x3f) | 0x80);	/* variant 1 */
}

void tr_uuid_boot_id(uint8_t out[16])
{
	char buf[64] = { 0 };
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n >= 36) {
			buf[36] = 0;
			if (tr_uuid_parse(buf, out) == 0)
				return;
		}
	}
	tr_uuid_random(out);
}

int tr_grow(void *pp, size_t *cap, size_t n, size_t sz)
{
	void **p = pp;
	size_t nc = *cap ? *cap : 16;

	if (n < *cap)
		return 0;
	while (nc <= n) {	/* doubled as often as it takes to hold element n */
		if (nc > SIZE_MAX / 2)
			return -ENOMEM;
		nc *= 2;
	}
	if (sz && nc > SIZE_MAX / sz)
		return -ENOMEM;
	void *m = realloc(*p, nc * sz);
	if (!m)
		return -ENOMEM;
	*p = m;
	*cap = nc;
	return 0;
}

int tr_glob_match(const char *pat, const char *name)
{
	return fnmatch(pat, name, 0) == 0;
}

size_t tr_edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), prev[64], cur[64];

	if (la >= 63 || lb >= 63)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			size_t del = prev[j] + 1, ins = cur[j - 1] + 1;

			cur[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
		}
		memcpy(prev, cur, (lb + 1) * sizeof(prev[0]));
	}
	return prev[lb];
}

const char *tr_closest(const char *name, const char *const *cand, size_t n, size_t max)
{
	const char *best = NULL;
	size_t len = strlen(name);
	if (max == TR_NEAR)
		max = len / 3 > 2 ? len / 3 : 2;
	size_t bestd = max + 1;

	for (size_t i = 0; i < n; i++) {
		size_t d = tr_edit_distance(name, cand[i]);

		if (len && !strncmp(name, cand[i], len) && d > 1)
			d = 1;	/* a prefix */
		if (d < bestd) {
			bestd = d;
			best = cand[i];
		}
	}
	return best;
}

void trawl_ctf_buf_str(struct trawl_ctf_buf *b, const char *s)
{
	trawl_ctf_buf_put(b, s, strlen(s) + 1);
}
