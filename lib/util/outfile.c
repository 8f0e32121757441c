/* SPDX-License-Identifier: MIT */
/* Output files written without destroying what was there (outfile.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/outfile.h"

#define TMP_TRIES 64
#define TMP_BASE_MAX 200	/* of the target's name kept in the temporary's */

const char *tr_file_kind(mode_t m)
{
	switch (m & S_IFMT) {
	case S_IFREG:
		return "a regular file";
	case S_IFDIR:
		return "a directory";
	case S_IFLNK:
		return "a symbolic link";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFIFO:
		return "a FIFO";
	case S_IFSOCK:
		return "a socket";
	}
	return "a file of an unknown kind";
}

static bool is_stream(mode_t m)
{
	return S_ISCHR(m) || S_ISBLK(m) || S_ISFIFO(m) || S_ISSOCK(m);
}

/* A new temporary beside o->path, created with O_EXCL under a random name:
 * its descriptor, or -errno. */
static int tmp_create(struct tr_outfile *o, mode_t mode)
{
	const char *slash = strrchr(o->path, '/');
	size_t dlen = slash ? (size_t)(slash - o->path) + 1 : 0;
	const char *base = o->path + dlen;
	size_t blen = strlen(base);
	int fd = -EEXIST;

	if (blen > TMP_BASE_MAX)
		blen = TMP_BASE_MAX;
	free(o->tmp);
	if (!(o->tmp = malloc(dlen + 1 + blen + 1 + 16 + 5)))
		return -ENOMEM;
	for (int i = 0; i < TMP_TRIES && fd == -EEXIST; i++) {
		uint8_t r[8];
		uint64_t v = 0;

		if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
			return -errno;
		memcpy(&v, r, sizeof(v));
		sprintf(o->tmp, "%.*s.%.*s.%016llx.tmp", (int)dlen, o->path, (int)blen, base,
			(unsigned long long)v);
		fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd < 0)
			fd = -errno;
	}
	if (fd < 0) {
		free(o->tmp);
		o->tmp = NULL;
	}
	return fd;
}

int tr_outfile_open(struct tr_outfile *o, const char *path, unsigned flags, mode_t mode,
		    char *err, size_t errlen)
{
	struct stat st;
	int fd, rc;

	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if (!path || !*path)
		return tr_seterr(err, errlen, EINVAL, "no output file");
	if (!(o->path = strdup(path)))
		return tr_seterr(err, errlen, ENOMEM, "out of memory");
	if ((flags & TR_OUTFILE_DASH) && !strcmp(path, "-")) {
		if ((o->fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3)) < 0) {
			rc = -errno;
			goto err_errno;
		}
		o->stream = o->is_stdout = true;
		return 0;
	}
	if (lstat(path, &st) == 0) {
		if (S_ISLNK(st.st_mode)) {
			rc = tr_seterr(err, errlen, ELOOP,
				       "%s: is a symbolic link (not followed: give the file it "
				       "points to, if that is meant)", path);
			goto err;
		}
		if (S_ISDIR(st.st_mode)) {
			rc = tr_seterr(err, errlen, EISDIR, "%s: is a directory", path);
			goto err;
		}
		if (is_stream(st.st_mode)) {
			/* in place: no O_CREAT (nothing is made), no O_TRUNC */
			fd = open(path, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
			if (fd < 0) {
				rc = -errno;
				goto err_errno;
			}
			if (fstat(fd, &st) == 0 && is_stream(st.st_mode)) {
				o->fd = fd;
				o->stream = true;
				return 0;
			}
			close(fd);	/* replaced meanwhile: as what it is now */
			if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
				rc = tr_seterr(err, errlen, EAGAIN,
					       "%s: changed while opened; not written", path);
				goto err;
			}
		}
		if (!S_ISREG(st.st_mode)) {
			rc = tr_seterr(err, errlen, EINVAL, "%s: is %s; not written", path,
				       tr_file_kind(st.st_mode));
			goto err;
		}
		o->existed = true;
		mode = st.st_mode & 07777;
	} else if (errno != ENOENT) {
		rc = -errno;
		goto err_errno;
	}
	if ((fd = tmp_create(o, mode)) < 0) {
		rc = fd;
		if (rc == -ENOMEM)
			goto err_errno;
		tr_seterr(err, errlen, -rc, "%s: cannot create a temporary beside it: %s", path,
			  strerror(-rc));
		goto err;
	}
	if (o->existed)
		(void)fchmod(fd, mode);	/* as the file replaced (the umask narrowed it) */
	o->fd = fd;
	return 0;
err_errno:
	tr_seterr(err, errlen, -rc, "%s: %s", path, strerror(-rc));
err:
	tr_outfile_release(o);
	errno = -rc;
	return rc;
}

static ssize_t cookie_write(void *c, const char *buf, size_t n)
{
	struct tr_outfile *o = c;
	int rc = tr_write_all(o->fd, buf, n);

	if (rc) {
		if (!o->werr)
			o->werr = rc;
		errno = -rc;
		return 0;	/* fopencookie: 0 is the error */
	}
	o->bytes += n;
	return (ssize_t)n;
}

FILE *tr_outfile_stdio(struct tr_outfile *o)
{
	cookie_io_functions_t io = { .write = cookie_write };

	if (!o->f)
		o->f = fopencookie(o, "w", io);
	return o->f;
}

int tr_outfile_why(const struct tr_outfile *o, int ret)
{
	return ret == -EIO && o->werr ? o->werr : ret;
}

int tr_outfile_commit(struct tr_outfile *o, char *err, size_t errlen)
{
	struct stat st;
	int rc = 0;

	if (o->f) {
		if (fflush(o->f) || ferror(o->f))
			rc = o->werr ? o->werr : -EIO;
		fclose(o->f);	/* the cookie has no close: fd stays */
		o->f = NULL;
	}
	if (!rc && o->werr)
		rc = o->werr;
	if (!rc && o->tmp && fsync(o->fd) < 0)
		rc = -errno;
	if (o->fd >= 0) {
		if (close(o->fd) < 0 && !rc && errno != EINTR)
			rc = -errno;
		o->fd = -1;
	}
	if (rc)
		goto err_errno;
	if (o->tmp) {
		if (lstat(o->path, &st) == 0 && !S_ISREG(st.st_mode)) {
			rc = tr_seterr(err, errlen, EEXIST,
				       "%s: is %s now (it was not when opened); not replaced",
				       o->path, tr_file_kind(st.st_mode));
			goto err;
		}
		if (rename(o->tmp, o->path) < 0) {
			rc = -errno;
			goto err_errno;
		}
		free(o->tmp);
		o->tmp = NULL;
	}
	o->committed = true;
	return 0;
err_errno:
	tr_seterr(err, errlen, -rc, "%s: %s", o->path, strerror(-rc));
err:
	if (o->tmp) {
		unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
	}
	errno = -rc;
	return rc;
}

void tr_outfile_release(struct tr_outfile *o)
{
	if (o->f) {
		fclose(o->f);
		o->f = NULL;
	}
	if (o->fd >= 0 && o->path) {
		close(o->fd);
		o->fd = -1;
	}
	if (o->tmp) {
		unlink(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
	}
	free(o->path);
	o->path = NULL;
}

int tr_outfile_write(const char *path, unsigned flags, mode_t mode, const void *buf,
		     size_t len, char *err, size_t errlen)
{
	struct tr_outfile o;
	int rc = tr_outfile_open(&o, path, flags, mode, err, errlen);

	if (rc)
		return rc;
	if ((rc = tr_write_all(o.fd, buf, len)))
		tr_seterr(err, errlen, -rc, "%s: %s", path, strerror(-rc));
	else
		rc = tr_outfile_commit(&o, err, errlen);
	tr_outfile_release(&o);
	errno = -rc;
	return rc;
}
