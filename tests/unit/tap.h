/* SPDX-License-Identifier: MIT */
/* A minimal TAP producer for the unit tests: ok(), is_int(), is_str(), done();
 * and helpers the tests share (tap_xorshift, slurp). */
#ifndef TRAWL_TAP_H
#define TRAWL_TAP_H
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_fail;

/* xorshift64: the tests' reproducible random numbers, from a state the
 * test seeds (not zero). */
static inline uint64_t tap_xorshift(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define is_int(got, want, ...) tap_is_int((long long)(got), (long long)(want), __FILE__, __LINE__, __VA_ARGS__)
#define is_str(got, want, ...) tap_is_str((got), (want), __FILE__, __LINE__, __VA_ARGS__)

static inline int tap_vok(int c, const char *file, int line, const char *fmt, va_list ap)
{
	tap_n++;
	printf("%sok %d - ", c ? "" : "not ", tap_n);
	vprintf(fmt, ap);
	printf("\n");
	if (!c) {
		tap_fail++;
		printf("#   failed at %s:%d\n", file, line);
	}
	fflush(stdout);
	return c;
}

#include <stdarg.h>
__attribute__((format(printf, 4, 5)))
static inline int tap_ok(int c, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = tap_vok(c, file, line, fmt, ap);
	va_end(ap);
	return r;
}

/* A check that cannot be made here, with the reason (TAP's SKIP). */
__attribute__((format(printf, 1, 2)))
static inline void skip(const char *fmt, ...)
{
	va_list ap;
	printf("ok %d # SKIP ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

__attribute__((format(printf, 5, 6)))
static inline int tap_is_int(long long got, long long want, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = tap_vok(got == want, file, line, fmt, ap);
	va_end(ap);
	if (!r)
		printf("#   got %lld, want %lld\n", got, want);
	return r;
}

__attribute__((format(printf, 5, 6)))
static inline int tap_is_str(const char *got, const char *want, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int c = got && want ? strcmp(got, want) == 0 : got == want;
	int r = tap_vok(c, file, line, fmt, ap);
	va_end(ap);
	if (!r)
		printf("#   got  \"%s\"\n#   want \"%s\"\n", got ? got : "(null)", want ? want : "(null)");
	return r;
}

/* The whole file at path, malloc'd with a NUL after its *len bytes (the
 * caller frees it); NULL (and *len 0) if it cannot be read. */
static inline uint8_t *slurp(const char *path, size_t *len)
{
	*len = 0;
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0, k;
	uint8_t *b = malloc(cap);
	while (b && (k = fread(b + n, 1, cap - 1 - n, f)) > 0) {
		n += k;
		if (n == cap - 1) {
			uint8_t *nb = realloc(b, cap *= 2);
			if (!nb)
				free(b);
			b = nb;
		}
	}
	fclose(f);
	if (!b)
		return NULL;
	b[n] = 0;
	*len = n;
	return b;
}

static inline int done_testing(void)
{
	printf("1..%d\n", tap_n);
	return tap_fail ? 1 : 0;
}

#include <stdarg.h>
#include <stdbool.h>

/* Whether files a and b exist and hold the same bytes (not empty); says
 * how they differ when they do not. */
static inline bool same_file(const char *a, const char *b)
{
	size_t la = 0, lb = 0;
	uint8_t *x = slurp(a, &la), *y = slurp(b, &lb);
	bool same = x && y && la == lb && la > 0 && memcmp(x, y, la) == 0;
	if (!same)
		printf("#   %s (%zu bytes) differs from %s (%zu bytes)\n", a, la, b, lb);
	free(x);
	free(y);
	return same;
}

/* base/FMT..., in one of four rotating buffers (valid for the next three
 * calls too). */
__attribute__((format(printf, 2, 3)))
static inline const char *tap_path(const char *base, const char *fmt, ...)
{
	static char p[4][512];
	static int i;
	char *q = p[i++ % 4];
	char tail[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(tail, sizeof(tail), fmt, ap);
	va_end(ap);
	snprintf(q, 512, "%s/%s", base, tail);
	return q;
}

#include <ftw.h>

static inline int tap_rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	remove(p);
	return 0;
}

/* Removes dir and everything under it (symbolic links not followed). */
static inline void tap_rm_tree(const char *dir)
{
	nftw(dir, tap_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
