/* SPDX-License-Identifier: MIT */
/*
 * The per-thread ring buffer in shared memory: creation, and the packet
 * switch (finalize the open packet, open the next one). The per-event fast
 * path is in lib/ust/record.c; the layout and the protocol are described in
 * ring.h.
 */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ring/ring.h"
#include "ust/ust-internal.h"

#include <fcntl.h>
#include <sys/stat.h>

#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC 1U
#endif
#ifndef MFD_ALLOW_SEALING
#define MFD_ALLOW_SEALING 2U
#endif
#ifndef F_ADD_SEALS
#define F_ADD_SEALS 1033
#define F_GET_SEALS 1034
#define F_SEAL_SEAL 0x0001
#define F_SEAL_SHRINK 0x0002
#define F_SEAL_GROW 0x0004
#endif

static size_t page_round(size_t n)
{
	return (n + 4095) & ~(size_t)4095;
}

int tr_ust_ring_create(struct ust_ring *r, const struct ust_ring_opts *o)
{
	size_t hdr = page_round(sizeof(struct ust_shm) + o->nsubbuf * sizeof(struct ust_sb));
	size_t len = hdr + (size_t)o->subbuf_size * o->nsubbuf;
	memset(r, 0, sizeof(*r));
	r->fd = memfd_create("trawl-ust", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (r->fd < 0)
		return -errno;
	/* the size never changes: an agent that maps the buffer can trust it
	 * (no SIGBUS from a shrunk file) */
	if (ftruncate(r->fd, (off_t)len) < 0 ||
	    fcntl(r->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		int e = -errno;
		close(r->fd);
		return e;
	}
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (m == MAP_FAILED) {
		int e = -errno;
		close(r->fd);
		return e;
	}
	r->shm = m;
	r->map_len = len;
	r->data = (uint8_t *)m + hdr;
	r->S = o->subbuf_size;
	r->N = o->nsubbuf;
	struct ust_shm *h = r->shm;
	h->magic = UST_SHM_MAGIC;
	h->version = UST_SHM_VERSION;
	h->subbuf_size = o->subbuf_size;
	h->nsubbuf = o->nsubbuf;
	h->mode = o->mode;
	h->header = o->header;
	h->data_off = (uint32_t)hdr;
	h->stream_id = o->stream_id;
	h->instance_id = o->instance_id;
	memcpy(h->uuid, o->uuid, 16);
	h->pid = o->pid;
	h->tid = o->tid;
	return 0;
}

int tr_ust_ring_map(struct ust_ring *r, int fd)
{
	struct stat st;
	memset(r, 0, sizeof(*r));
	r->fd = -1;
	int seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK) || fstat(fd, &st) < 0 || st.st_size < 4096)
		return -EINVAL;
	struct ust_shm *h = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED)
		return -errno;
	uint32_t S = h->subbuf_size, N = h->nsubbuf, off = h->data_off;
	bool good = h->magic == UST_SHM_MAGIC && h->version == UST_SHM_VERSION &&
		    S >= 4096 && S <= (1u << 30) && !(S & (S - 1)) &&
		    N >= 2 && N <= 65536 && !(N & (N - 1)) &&
		    off == page_round(sizeof(struct ust_shm) + N * sizeof(struct ust_sb)) &&
		    (uint64_t)st.st_size == off + (uint64_t)S * N &&
		    (h->mode == TRAWL_UST_DISCARD || h->mode == TRAWL_UST_OVERWRITE);
	munmap(h, 4096);
	if (!good)
		return -EINVAL;
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	r->shm = m;
	r->map_len = (size_t)st.st_size;
	r->data = (uint8_t *)m + off;
	r->S = S;
	r->N = N;
	r->fd = fd;
	return 0;
}

void tr_ust_ring_destroy(struct ust_ring *r)
{
	if (r->shm)
		munmap(r->shm, r->map_len);
	if (r->fd >= 0)
		close(r->fd);
	r->shm = NULL;
	r->fd = -1;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

uint64_t tr_ust_reclaim_ns = 100000000;

void tr_ust_ring_reclaim(struct ust_ring *r, uint64_t k)
{
	/* best effort: where it fails, the pages just stay */
	madvise(ust_ring_subbuf(r, k), r->S, MADV_REMOVE);
}

void tr_ust_ring_finalize(struct ust_ring *r, uint64_t ts_end)
{
	struct ust_shm *h = r->shm;
	uint64_t k = h->produced;
	uint8_t *b = ust_ring_subbuf(r, k);
	struct ust_sb *sb = &h->sb[k & (r->N - 1)];
	size_t pos = (size_t)h->pos;

	put64(b + PK_TS_END, ts_end);
	put64(b + PK_CONTENT_SIZE, (uint64_t)pos * 8);
	put64(b + PK_PACKET_SIZE, (uint64_t)r->S * 8);
	put64(b + PK_DISCARDED, h->discarded);
	memset(b + pos, 0, r->S - pos);
	sb->nev = h->nev;
	/* the next packet begins at or after it; partner: tr_ust_cons_live */
	__atomic_store_n(&h->last_ts, ts_end, __ATOMIC_RELEASE);
	h->open = 0;
	if (h->mode == TRAWL_UST_OVERWRITE)
		/* partner: the snapshot's acquire load of gen before its copy */
		__atomic_store_n(&sb->gen, 2 * k + 2, __ATOMIC_RELEASE);
	/* partner: the consumer's acquire load of produced (lib/ust/output.c, drain) */
	__atomic_store_n(&h->produced, k + 1, __ATOMIC_RELEASE);
}

bool tr_ust_ring_open(struct ust_ring *r, uint64_t ts)
{
	struct ust_shm *h = r->shm;
	uint64_t k = h->produced;
	struct ust_sb *sb = &h->sb[k & (r->N - 1)];

	if (h->mode == TRAWL_UST_DISCARD) {
		/* partner: the consumer's release store of consumed, after it
		 * wrote the packet out: the sub-buffer is ours again */
		uint64_t c = __atomic_load_n(&h->consumed, __ATOMIC_ACQUIRE);
		if (k - c >= r->N)
			return false;
	} else {
		if (k >= r->N)
			UST_ADD(h->overwritten, sb->nev);
		__atomic_store_n(&sb->gen, 2 * k + 1, __ATOMIC_RELAXED);
		/* the odd gen is visible before any byte of the new packet:
		 * partner of the snapshot's acquire fence before its re-check */
		UST_FENCE(__ATOMIC_RELEASE);
	}
	uint8_t *b = ust_ring_subbuf(r, k);
	put32(b + PK_MAGIC, CTF_MAGIC);
	memcpy(b + PK_UUID, h->uuid, 16);
	put32(b + PK_STREAM_ID, h->stream_id);
	put64(b + PK_INSTANCE_ID, h->instance_id);
	put64(b + PK_TS_BEGIN, ts);
	put64(b + PK_SEQ_NUM, k);
	int cpu = sched_getcpu();
	put32(b + PK_CPU_ID, cpu < 0 ? 0 : (uint32_t)cpu);
	sb->nev = 0;
	sb->ev_before = h->recorded;
	/* partner of the three: tr_ust_cons_live's acquire loads */
	__atomic_store_n(&h->pos, PK_HDR_END, __ATOMIC_RELEASE);
	h->nev = 0;
	__atomic_store_n(&h->last_ts, ts, __ATOMIC_RELEASE);
	h->open = 1;
	__atomic_store_n(&h->opened, k + 1, __ATOMIC_RELEASE);
	return true;
}
