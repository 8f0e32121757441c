/* SPDX-License-Identifier: MIT */
/*
 * test-outfile: lib/util/outfile.c, the one way an output file is written.
 * A device stays a device and gets the bytes in place, a FIFO's reader
 * gets them, a symbolic link is refused and its target left alone (also
 * when the link appears while the file is written), a regular file is
 * replaced only once complete (its old bytes until then, its mode kept),
 * temporaries are random and gone afterwards, and a full device says "No
 * space left on device". The devices are nodes made here with mknod
 * (skipped without the privilege), never the system's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "internal.h"
#include "util/outfile.h"
#include "tap.h"

static char dir[64];

static char *at(const char *name)
{
	static char b[4][256];
	static int i;
	char *p = b[i++ & 3];

	snprintf(p, 256, "%s/%s", dir, name);
	return p;
}

static void put(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || tr_write_all(fd, s, strlen(s)) || close(fd))
		abort();
}

static char *get(const char *path)
{
	size_t n;

	return (char *)slurp(path, &n);
}

/* Entries of dir whose name starts with '.', but . and .. */
static int ntemps(void)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d)))
		if (de->d_name[0] == '.' && strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	if (d)
		closedir(d);
	return n;
}

static int write_str(struct tr_outfile *o, const char *s)
{
	return tr_write_all(o->fd, s, strlen(s));
}

static void test_new_and_replace(void)
{
	struct tr_outfile o, o2;
	struct stat st, st2;
	char err[256] = "";
	char *s;

	/* a new file appears only at commit */
	is_int(tr_outfile_open(&o, at("new"), 0, 0644, err, sizeof(err)), 0, "new: opened");
	ok(!o.stream && !o.existed && o.tmp, "new: written into a temporary");
	ok(access(at("new"), F_OK) < 0, "new: nothing at the target before commit");
	is_int(ntemps(), 1, "new: one temporary beside it");
	ok(o.tmp && !strncmp(o.tmp, at(".new."), strlen(at(".new."))),
	   "new: the temporary is in the target's directory (%s)", o.tmp ? o.tmp : "");
	is_int(tr_outfile_open(&o2, at("new"), 0, 0644, err, sizeof(err)), 0, "new: opened twice");
	ok(o.tmp && o2.tmp && strcmp(o.tmp, o2.tmp), "new: the temporaries' names differ");
	ok(o.tmp && strlen(o.tmp) == strlen(at(".new.")) + 16 + 4,
	   "new: 64 random bits in the name");
	tr_outfile_release(&o2);
	is_int(write_str(&o, "abc"), 0, "new: written");
	is_int(tr_outfile_commit(&o, err, sizeof(err)), 0, "new: committed (%s)", err);
	tr_outfile_release(&o);
	s = get(at("new"));
	is_str(s, "abc", "new: its bytes");
	free(s);
	is_int(ntemps(), 0, "new: no temporary left");

	/* a regular file keeps its old bytes until the new ones are complete */
	put(at("old"), "old bytes");
	chmod(at("old"), 0640);
	stat(at("old"), &st);
	is_int(tr_outfile_open(&o, at("old"), 0, 0666, err, sizeof(err)), 0, "old: opened");
	ok(o.existed && !o.stream, "old: a regular file, replaced");
	is_int(write_str(&o, "new bytes, longer"), 0, "old: written");
	s = get(at("old"));
	is_str(s, "old bytes", "old: the old bytes until commit");
	free(s);
	is_int(tr_outfile_commit(&o, err, sizeof(err)), 0, "old: committed (%s)", err);
	tr_outfile_release(&o);
	s = get(at("old"));
	is_str(s, "new bytes, longer", "old: the new bytes after");
	free(s);
	stat(at("old"), &st2);
	is_int(st2.st_mode & 07777, 0640, "old: its mode kept");
	ok(st2.st_ino != st.st_ino, "old: replaced by a rename (a new inode)");

	/* released without commit: the target as it was, no temporary */
	is_int(tr_outfile_open(&o, at("old"), 0, 0666, err, sizeof(err)), 0, "abort: opened");
	is_int(write_str(&o, "partial"), 0, "abort: written");
	tr_outfile_release(&o);
	s = get(at("old"));
	is_str(s, "new bytes, longer", "abort: the target as it was");
	free(s);
	is_int(ntemps(), 0, "abort: the temporary removed");
}

static void test_refused(void)
{
	struct tr_outfile o;
	struct stat st;
	char err[256] = "";
	char *s;

	put(at("victim"), "precious");
	if (symlink(at("victim"), at("link")))
		abort();
	is_int(tr_outfile_open(&o, at("link"), 0, 0644, err, sizeof(err)), -ELOOP,
	       "symlink: refused");
	ok(strstr(err, "link") && strstr(err, "is a symbolic link (not followed"),
	   "symlink: says so (%s)", err);
	s = get(at("victim"));
	is_str(s, "precious", "symlink: its target untouched");
	free(s);
	ok(lstat(at("link"), &st) == 0 && S_ISLNK(st.st_mode), "symlink: still a link");
	is_int(ntemps(), 0, "symlink: no temporary");

	if (symlink(at("nowhere"), at("dangling")))
		abort();
	is_int(tr_outfile_open(&o, at("dangling"), 0, 0644, err, sizeof(err)), -ELOOP,
	       "dangling symlink: refused");
	ok(access(at("nowhere"), F_OK) < 0, "dangling symlink: nothing created where it points");

	mkdir(at("adir"), 0755);
	is_int(tr_outfile_open(&o, at("adir"), 0, 0644, err, sizeof(err)), -EISDIR,
	       "directory: refused");
	ok(strstr(err, "adir: is a directory") != NULL, "directory: says so (%s)", err);

	/* the target turns into a link while written: not renamed over */
	put(at("swap"), "swap before");
	is_int(tr_outfile_open(&o, at("swap"), 0, 0644, err, sizeof(err)), 0, "swap: opened");
	is_int(write_str(&o, "swapped bytes"), 0, "swap: written");
	unlink(at("swap"));
	if (symlink(at("victim"), at("swap")))
		abort();
	ok(tr_outfile_commit(&o, err, sizeof(err)) < 0, "swap: commit refused");
	ok(strstr(err, "is a symbolic link now") != NULL, "swap: says so (%s)", err);
	tr_outfile_release(&o);
	s = get(at("victim"));
	is_str(s, "precious", "swap: the link's target untouched");
	free(s);
	ok(lstat(at("swap"), &st) == 0 && S_ISLNK(st.st_mode), "swap: the link left as it is");
	is_int(ntemps(), 0, "swap: the temporary removed");
}

static void test_devices(void)
{
	struct tr_outfile o;
	struct stat st;
	char err[256] = "";

	if (mknod(at("null"), S_IFCHR | 0666, makedev(1, 3)) < 0 ||
	    mknod(at("full"), S_IFCHR | 0666, makedev(1, 7)) < 0) {
		printf("ok %d # skip no mknod here (%s)\n", ++tap_n, strerror(errno));
		return;
	}
	int fd = open(at("null"), O_WRONLY);

	if (fd < 0) {
		printf("ok %d # skip device nodes cannot be opened here (%s)\n", ++tap_n,
		       strerror(errno));
		return;
	}
	close(fd);
	is_int(tr_outfile_open(&o, at("null"), 0, 0644, err, sizeof(err)), 0, "null: opened");
	ok(o.stream && !o.tmp, "null: a stream, no temporary");
	is_int(ntemps(), 0, "null: nothing beside it");
	FILE *f = tr_outfile_stdio(&o);

	ok(f && fputs("to the device\n", f) >= 0, "null: written through stdio");
	is_int(tr_outfile_commit(&o, err, sizeof(err)), 0, "null: committed (%s)", err);
	tr_outfile_release(&o);
	ok(lstat(at("null"), &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3),
	   "null: still the character device 1,3");
	is_int(ntemps(), 0, "null: no temporary left");

	/* a full device: the real error, through stdio and through the fd */
	is_int(tr_outfile_open(&o, at("full"), 0, 0644, err, sizeof(err)), 0, "full: opened");
	f = tr_outfile_stdio(&o);
	char buf[8192];

	memset(buf, 'x', sizeof(buf));
	size_t w = f ? fwrite(buf, 1, sizeof(buf), f) : 0;

	ok(w < sizeof(buf), "full: a short fwrite");
	is_int(tr_outfile_why(&o, -EIO), -ENOSPC, "full: the -EIO of fwrite is ENOSPC");
	is_int(tr_outfile_commit(&o, err, sizeof(err)), -ENOSPC, "full: commit fails");
	ok(strstr(err, "full: No space left on device") != NULL, "full: says so (%s)", err);
	tr_outfile_release(&o);
	ok(lstat(at("full"), &st) == 0 && S_ISCHR(st.st_mode), "full: still a device");
}

static void test_fifo_and_stdout(void)
{
	struct tr_outfile o;
	struct stat st;
	char err[256] = "", buf[64] = "";
	int rd;

	if (mkfifo(at("fifo"), 0600))
		abort();
	/* its reader first, so that opening it to write does not wait */
	rd = open(at("fifo"), O_RDONLY | O_NONBLOCK);
	ok(rd >= 0, "fifo: a reader");
	is_int(tr_outfile_open(&o, at("fifo"), 0, 0644, err, sizeof(err)), 0, "fifo: opened");
	ok(o.stream && !o.tmp, "fifo: a stream");
	is_int(write_str(&o, "through the fifo"), 0, "fifo: written");
	is_int(tr_outfile_commit(&o, err, sizeof(err)), 0, "fifo: committed (%s)", err);
	tr_outfile_release(&o);
	ssize_t n = read(rd, buf, sizeof(buf) - 1);

	is_int(n, 16, "fifo: the reader got every byte");
	is_str(buf, "through the fifo", "fifo: the bytes");
	close(rd);
	ok(lstat(at("fifo"), &st) == 0 && S_ISFIFO(st.st_mode), "fifo: still a FIFO");

	/* "-" is standard output when the caller says so */
	int p[2], saved;

	if (pipe(p))
		abort();
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	dup2(p[1], STDOUT_FILENO);
	close(p[1]);
	int rc = tr_outfile_open(&o, "-", TR_OUTFILE_DASH, 0644, err, sizeof(err));
	bool stream = o.stream && o.is_stdout;

	if (!rc) {
		write_str(&o, "on stdout");
		rc = tr_outfile_commit(&o, err, sizeof(err));
	}
	tr_outfile_release(&o);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	is_int(rc, 0, "-: opened and committed (%s)", err);
	ok(stream, "-: standard output, a stream");
	memset(buf, 0, sizeof(buf));
	n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	is_str(buf, "on stdout", "-: the bytes on standard output");
}

int main(void)
{
	strcpy(dir, "/tmp/test-outfile.XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	test_new_and_replace();
	test_refused();
	test_devices();
	test_fifo_and_stdout();

	const char *names[] = { "new", "old", "victim", "link", "dangling", "swap", "null",
				"full", "fifo" };

	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		unlink(at(names[i]));
	rmdir(at("adir"));
	rmdir(dir);
	return done_testing();
}
