/* SPDX-License-Identifier: MIT */
/*
 * lib/ust/context.c - the event context of a thread (vpid, vtid, procname,
 * cgroup id, as the session's contexts select), serialized once when the
 * thread attaches to a session; every event of the thread copies it.
 * Async-signal-safe: a thread may attach in a signal handler.
 */
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "ust-private.h"

/* Appends s to the buffer (dst, cap), NUL-terminated; async-signal-safe. */
static size_t cat(char *dst, size_t len, size_t cap, const char *src, size_t n)
{
	if (len + n >= cap)
		n = len < cap ? cap - 1 - len : 0;
	memcpy(dst + len, src, n);
	dst[len + n] = 0;
	return len + n;
}

/* The cgroup v2 id of the calling thread (0 if none): the file handle of
 * its cgroup directory. Uses only system calls (async-signal-safe). */
static uint64_t cgroup_id(void)
{
	char buf[4096], path[4200];
	uint64_t id = 0;
	int fd = open("/proc/thread-self/cgroup", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *l = buf;
	while (l && strncmp(l, "0::", 3) != 0) {
		l = strchr(l, '\n');
		if (l)
			l++;
	}
	if (!l)
		return 0;
	l += 3;
	size_t ll = strcspn(l, "\n");
	const char *roots[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	for (size_t i = 0; i < ARRAY_SIZE(roots) && !id; i++) {
		union {
			struct file_handle fh;
			char mem[sizeof(struct file_handle) + 8];
		} hd;
		int mnt;
		size_t len = cat(path, 0, sizeof(path), roots[i], strlen(roots[i]));
		cat(path, len, sizeof(path), l, ll);
		hd.fh.handle_bytes = 8;
		if (name_to_handle_at(AT_FDCWD, path, &hd.fh, &mnt, 0) == 0 && hd.fh.handle_bytes == 8)
			memcpy(&id, hd.fh.f_handle, 8);
	}
	return id;
}

void tr_ust_ctx_fill(const struct trawl_ust_session *s, struct ust_thread *t)
{
	uint8_t *p = t->ctx;
	if (s->contexts & TRAWL_UST_CTX_VPID) {
		int32_t v = (int32_t)getpid();
		memcpy(p, &v, 4);
		p += 4;
	}
	if (s->contexts & TRAWL_UST_CTX_VTID) {
		int32_t v = (int32_t)t->tid;
		memcpy(p, &v, 4);
		p += 4;
	}
	if (s->contexts & TRAWL_UST_CTX_PROCNAME) {
		char name[17] = "";
		prctl(PR_GET_NAME, name, 0, 0, 0);
		name[16] = 0;
		memcpy(p, name, 17);
		p += 17;
	}
	if (s->contexts & TRAWL_UST_CTX_CGROUP_ID) {
		uint64_t id = cgroup_id();
		memcpy(p, &id, 8);
		p += 8;
	}
	t->ctxlen = (uint8_t)(p - t->ctx);
}
