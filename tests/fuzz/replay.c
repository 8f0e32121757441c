/* SPDX-License-Identifier: MIT */
/*
 * Replays a fuzz target's seed corpus through the ordinary (sanitized) build,
 * so `make check` runs every target on every seed without libFuzzer. TAP:
 * one line per input file. Usage: replay-fuzz-X CORPUS_DIR...
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int n;

static void one(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		printf("not ok %d - open %s\n", ++n, path);
		return;
	}
	struct stat st;
	fstat(fileno(f), &st);
	size_t len = (size_t)st.st_size;
	uint8_t *buf = malloc(len ? len : 1);
	size_t got = fread(buf, 1, len, f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, got);
	free(buf);
	/* Reaching here without a sanitizer report or a crash is the check. */
	printf("ok %d - %s (%zu bytes)\n", ++n, path, got);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			struct dirent **ents;
			int m = scandir(argv[i], &ents, NULL, alphasort);
			for (int j = 0; j < m; j++) {
				if (ents[j]->d_name[0] != '.') {
					char p[4096];
					snprintf(p, sizeof(p), "%s/%s", argv[i], ents[j]->d_name);
					one(p);
				}
				free(ents[j]);
			}
			free(ents);
		} else {
			one(argv[i]);
		}
	}
	printf("1..%d\n", n);
	return 0;
}
