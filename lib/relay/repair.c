/* SPDX-License-Identifier: MIT */
/*
 * lib/relay/repair.c - torn tails, repaired when a relay starts.
 *
 * The relay writes each packet to its stream file, then the packet's entry
 * to the stream's index (relay.c, on_packet). A relay killed there (kill
 * -9, a crash, the power) leaves a stream file that ends in part of a
 * packet, or one longer than its index says, or an index whose last entry
 * is partial or names bytes the stream file does not have; babeltrace2
 * rejects such a trace whole. At its start (trawl_relay_new) the relay
 * cuts every trace under its output directory (SESSION/HOST/TRACE/ with an
 * index/ directory) back to its last complete packet listed in its index:
 * the index to its whole entries whose packets the stream file holds, the
 * stream file to the end of the last of them. A packet that was not
 * indexed is lost (its events cannot be told from a torn write); nothing
 * indexed and whole is. A trace of an empty metadata file and no stream
 * (left by writers before issue 20) loses its files: readers refused the
 * whole session for it. Every cut is logged. Files it does not recognize
 * (no index, another magic number, symbolic links) are left alone.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "relay/relay-internal.h"
#include "ctf/packet.h"

/* Where entry k of an index (entry length e) says its packet ends, in
 * bytes; 0 when it cannot be read. */
static uint64_t entry_end(int ifd, uint64_t k, uint32_t e)
{
	uint8_t b[16];
	if (pread(ifd, b, sizeof(b), (off_t)(CTF_IDX_HEADER_LEN + k * e)) != (ssize_t)sizeof(b))
		return 0;
	uint64_t off = get_be64(b), bits = get_be64(b + 8);
	if (bits % 8 || off > UINT64_MAX - bits / 8)
		return 0;
	return off + bits / 8;
}

/* One stream of the trace open at tfd (path dir, for the log). */
static void repair_stream(struct trawl_relay *r, int tfd, const char *dir, const char *name)
{
	char ipath[300];
	if ((size_t)snprintf(ipath, sizeof(ipath), "index/%s.idx", name) >= sizeof(ipath))
		return;
	int sfd = openat(tfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	int ifd = sfd < 0 ? -1 : openat(tfd, ipath, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat ss, is;
	uint8_t h[CTF_IDX_HEADER_LEN];
	if (ifd < 0 || fstat(sfd, &ss) < 0 || fstat(ifd, &is) < 0 || !S_ISREG(ss.st_mode) ||
	    !S_ISREG(is.st_mode) || pread(ifd, h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    get_be32(h) != CTF_IDX_MAGIC || get_be32(h + 12) < 16)
		goto out;
	uint32_t e = get_be32(h + 12);
	uint64_t size = (uint64_t)ss.st_size, n = ((uint64_t)is.st_size - sizeof(h)) / e, k = n;
	uint64_t end = 0;
	/* the last entry whose packet the stream file holds whole (packets
	 * are written in order: the entries before it are whole too) */
	while (k > 0 && ((end = entry_end(ifd, k - 1, e)) == 0 || end > size))
		k--;
	if (k == 0)
		end = 0;
	uint64_t ilen = sizeof(h) + k * e;
	if (ilen == (uint64_t)is.st_size && end == size)
		goto out;	/* whole */
	if (ftruncate(sfd, (off_t)end) < 0 || ftruncate(ifd, (off_t)ilen) < 0) {
		tr_relay_log(r, LOG_ERR, "%s/%s: torn tail, not repaired: %s", dir, name,
			     strerror(errno));
		goto out;
	}
	tr_relay_log(r, LOG_WARNING,
		     "%s/%s: torn tail repaired: stream cut from %llu to %llu bytes, index from "
		     "%llu to %llu bytes (%llu of %llu packets kept)", dir, name,
		     (unsigned long long)size, (unsigned long long)end,
		     (unsigned long long)is.st_size, (unsigned long long)ilen,
		     (unsigned long long)k, (unsigned long long)n);
out:
	if (ifd >= 0)
		close(ifd);
	if (sfd >= 0)
		close(sfd);
}

/* The directory dfd as a DIR of its own (dfd stays open); NULL when it
 * cannot be. */
static DIR *opendir_at(int dfd)
{
	int fd = dup(dfd);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d && fd >= 0)
		close(fd);
	return d;
}

/* Every stream of the trace at dir (has an index/). true when the trace
 * was emptied (its directory can go). */
static bool repair_trace(struct trawl_relay *r, int tfd, const char *dir)
{
	struct stat st;
	if (fstatat(tfd, "index", &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
		return false;
	DIR *d = opendir_at(tfd);
	if (!d)
		return false;
	struct dirent *de;
	int nstreams = 0;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.' && strcmp(de->d_name, "metadata") != 0 &&
		    strcmp(de->d_name, "index") != 0) {
			repair_stream(r, tfd, dir, de->d_name);
			nstreams++;
		}
	closedir(d);
	/* an empty metadata file and nothing else (a producer without event
	 * classes, before the writers sent their metadata anyway): readers
	 * would refuse the whole session for it */
	if (!nstreams && fstatat(tfd, "metadata", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    S_ISREG(st.st_mode) && st.st_size == 0 && unlinkat(tfd, "metadata", 0) == 0) {
		unlinkat(tfd, "index", AT_REMOVEDIR);
		tr_relay_log(r, LOG_WARNING, "%s: an empty metadata file and no stream: removed",
			     dir);
		return true;
	}
	return false;
}

/* The directories at depth levels below dfd (path dir): 0 is a trace.
 * true when dir was a trace, emptied. */
static bool walk(struct trawl_relay *r, int dfd, const char *dir, int depth)
{
	if (depth == 0)
		return repair_trace(r, dfd, dir);
	DIR *d = opendir_at(dfd);
	if (!d)
		return false;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		int sub = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		char path[4096];
		bool gone = (size_t)snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) <
				    sizeof(path) && walk(r, sub, path, depth - 1);
		close(sub);
		if (gone)
			unlinkat(dfd, de->d_name, AT_REMOVEDIR);
	}
	closedir(d);
	return false;
}

void tr_relay_repair(struct trawl_relay *r)
{
	int fd = open(r->output, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	walk(r, fd, r->output, 3);	/* SESSION/HOST/TRACE */
	close(fd);
}
