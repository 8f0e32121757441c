/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: the TSDL parser on the raw bytes, and, when they start with
 * the metadata packet magic (either byte order), the packetized reader
 * followed by the parser on the text it unpacks.
 */
#include <stdint.h>
#include <stdlib.h>

#include "ctf/ctf-internal.h"
#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	struct trawl_ctf_trace *t = trawl_ctf_metadata_parse((const char *)data, size, err,
							     sizeof(err));
	trawl_ctf_trace_free(t);
	if (size >= 4 && ((data[0] == 0x57 && data[1] == 0x1d && data[2] == 0xd1 && data[3] == 0x75) ||
			  (data[0] == 0x75 && data[1] == 0xd1 && data[2] == 0x1d && data[3] == 0x57))) {
		size_t len;
		char *text = tr_ctf_metadata_unpack(data, size, "fuzz", &len, err, sizeof(err));
		if (text) {
			t = trawl_ctf_metadata_parse(text, len, err, sizeof(err));
			trawl_ctf_trace_free(t);
			free(text);
		}
	}
	return 0;
}
