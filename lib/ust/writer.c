/* SPDX-License-Identifier: MIT */
/*
 * lib/ust/writer.c - the CTF description of a user-space trace: the writer
 * (env domain "ust", tracer "trawl"), the stream class with its event
 * header and context fields, an event class per tracepoint from its field
 * list. Used by the in-process session and by the agent (lib/agent).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "trawl/ctf.h"
#include "trawl/relay.h"
#include "ust-private.h"

static struct trawl_ctf_type *field_type(struct trawl_ctf_writer *w, const struct trawl_tp_field *f)
{
	struct trawl_ctf_type *t;
	switch (f->kind) {
	case TRAWL_TP_INT:
		return trawl_ctf_type_int(w, f->size * 8u, f->sign, f->base);
	case TRAWL_TP_FLOAT:
		return trawl_ctf_type_float(w, f->size * 8u);
	case TRAWL_TP_STRING:
		return trawl_ctf_type_string(w);
	case TRAWL_TP_ARRAY:
		t = trawl_ctf_type_int(w, f->size * 8u, f->sign, f->base);
		return t ? trawl_ctf_type_array(w, t, f->length) : NULL;
	case TRAWL_TP_ENUM:
		t = trawl_ctf_type_int(w, f->size * 8u, f->sign, 10);
		t = t ? trawl_ctf_type_enum(w, t) : NULL;
		for (size_t i = 0; t && f->enm && i < f->enm->n; i++)
			if (trawl_ctf_enum_add(w, t, f->enm->entries[i].label,
					       (uint64_t)f->enm->entries[i].lo,
					       (uint64_t)f->enm->entries[i].hi) < 0)
				t = NULL;
		return t;
	default:
		errno = EINVAL;
		return NULL;
	}
}

/* Adds event class ev (its id already set) to writer w. */
int tr_ust_writer_add_event(struct trawl_ctf_writer *w, struct trawl_ctf_stream_class *sc,
			 const struct trawl_tp_event *ev)
{
	struct trawl_ctf_type *st = trawl_ctf_type_struct(w);
	if (!st)
		return -ENOMEM;
	for (const struct trawl_tp_field *f = ev->fields; f && f->name; f++) {
		int r;
		if (f->kind == TRAWL_TP_BYTES) {
			char len[256];
			snprintf(len, sizeof(len), "%s_length", f->name);
			struct trawl_ctf_type *lt = trawl_ctf_type_int(w, 32, false, 10);
			struct trawl_ctf_type *u8 = trawl_ctf_type_int(w, 8, false, 16);
			struct trawl_ctf_type *q = u8 ? trawl_ctf_type_sequence(w, u8, len) : NULL;
			if (!lt || !q)
				return -ENOMEM;
			r = trawl_ctf_struct_add(w, st, len, lt);
			if (!r)
				r = trawl_ctf_struct_add(w, st, f->name, q);
		} else {
			struct trawl_ctf_type *t = field_type(w, f);
			r = t ? trawl_ctf_struct_add(w, st, f->name, t) : -EINVAL;
		}
		if (r < 0)
			return r;
	}
	char name[512];
	snprintf(name, sizeof(name), "%s:%s", ev->provider, ev->name);
	struct trawl_ctf_event_class *ec = trawl_ctf_writer_event_class(w, sc, name, ev->loglevel, st);
	if (!ec)
		return -errno;
	return ec->id == ev->id ? 0 : -EINVAL;
}

struct trawl_ctf_writer *tr_ust_writer_new(const char *dir, const char *hostname, bool tsc,
				       size_t io_queue, const struct ust_writer_relay *rel)
{
	return tr_ust_writer_new_at(dir, NULL, hostname, tsc, io_queue, rel, NULL, 0);
}

struct trawl_ctf_writer *tr_ust_writer_new_at(const char *dir, const char *root,
					  const char *hostname, bool tsc, size_t io_queue,
					  const struct ust_writer_relay *rel, char *err,
					  size_t errlen)
{
	struct trawl_ctf_dest *dest = NULL;
	if (rel) {
		const struct trawl_relay_dest_opts ro = {
			.sz = sizeof(ro), .addr = rel->addr, .session = rel->session,
			.live_timer_us = rel->live_us, .resume_ms = TRAWL_RELAY_RESUME_MS,
			.live_demand = rel->live_demand, .on_demand = rel->on_demand,
			.demand_arg = rel->demand_arg, .horizon = rel->horizon,
		};
		if (!(dest = trawl_relay_dest_new(&ro)))
			return NULL;
	}
	struct trawl_ctf_writer_opts wo = {
		.sz = sizeof(wo), .path = dir, .hostname = hostname, .domain = "ust",
		.tracer_name = "trawl", .clock_name = tsc ? "tsc" : "monotonic",
		.clock_freq = 1000000000, .clock_offset_s = 0, .clock_offset = 1,
		.packet_size = 4096, .io_queue = io_queue, .dest = dest,
		.err = rel ? rel->err : err, .errlen = rel ? rel->errlen : errlen,
		.root = root,
	};
	return trawl_ctf_writer_new(&wo);
}

struct trawl_ctf_stream_class *tr_ust_stream_class_new(struct trawl_ctf_writer *w,
						    unsigned header, unsigned contexts)
{
	struct trawl_ctf_type *ctx = NULL;
	int r = 0;
	if (contexts) {
		ctx = trawl_ctf_type_struct(w);
		if (!ctx)
			r = -ENOMEM;
		if (!r && (contexts & TRAWL_UST_CTX_VPID))
			r = trawl_ctf_struct_add(w, ctx, "vpid", trawl_ctf_type_int(w, 32, true, 10));
		if (!r && (contexts & TRAWL_UST_CTX_VTID))
			r = trawl_ctf_struct_add(w, ctx, "vtid", trawl_ctf_type_int(w, 32, true, 10));
		if (!r && (contexts & TRAWL_UST_CTX_PROCNAME)) {
			struct trawl_ctf_type *c = trawl_ctf_type_int(w, 8, false, 10);
			if (c)
				c->u.i.encoding = TRAWL_CTF_ENC_UTF8;
			struct trawl_ctf_type *a = c ? trawl_ctf_type_array(w, c, 17) : NULL;
			r = a ? trawl_ctf_struct_add(w, ctx, "procname", a) : -ENOMEM;
		}
		if (!r && (contexts & TRAWL_UST_CTX_CGROUP_ID))
			r = trawl_ctf_struct_add(w, ctx, "cgroup_id",
						 trawl_ctf_type_int(w, 64, false, 10));
	}
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	return trawl_ctf_writer_stream_class(w, header == TRAWL_UST_HEADER_LARGE ?
					     TRAWL_CTF_HEADER_LARGE : TRAWL_CTF_HEADER_FIXED, ctx);
}

size_t tr_ust_ctx_len(unsigned contexts)
{
	/* the fields tr_ust_ctx_fill writes and the stream class declares */
	return (contexts & TRAWL_UST_CTX_VPID ? 4 : 0) + (contexts & TRAWL_UST_CTX_VTID ? 4 : 0) +
	       (contexts & TRAWL_UST_CTX_PROCNAME ? 17 : 0) +
	       (contexts & TRAWL_UST_CTX_CGROUP_ID ? 8 : 0);
}

size_t tr_ust_event_len(const struct ust_evtab *t, const uint8_t *p, size_t avail)
{
	uint16_t id16;
	uint32_t id;
	size_t n;
	if (avail < 2)
		return 0;
	memcpy(&id16, p, 2);
	id = id16;
	if (t->header != TRAWL_UST_HEADER_LARGE) {
		n = 10;
	} else if (id16 == 65535) {
		if (avail < 6)
			return 0;
		memcpy(&id, p + 2, 4);
		n = 14;
	} else {
		n = 6;
	}
	n += t->ctxlen;
	if (id >= t->nevs || !t->evs[id] || n > avail)
		return 0;
	/* the payload: byte-aligned, as the emit functions write it */
	for (const struct trawl_tp_field *f = t->evs[id]->fields; f && f->name; f++) {
		size_t len;
		uint32_t l32;
		switch (f->kind) {
		case TRAWL_TP_STRING:
			len = strnlen((const char *)p + n, avail - n) + 1;
			break;
		case TRAWL_TP_BYTES:
			if (avail - n < 4)
				return 0;
			memcpy(&l32, p + n, 4);
			len = 4 + (size_t)l32;
			break;
		case TRAWL_TP_ARRAY:
			len = (size_t)f->size * f->length;
			break;
		default:
			len = f->size;
			break;
		}
		if (len > avail - n)
			return 0;
		n += len;
	}
	return n;
}

int tr_ust_session_writer(struct trawl_ust_session *s, const char *dir, size_t io_queue,
			  struct trawl_ctf_writer **pw, struct trawl_ctf_stream_class **psc)
{
	struct trawl_ctf_writer *w = tr_ust_writer_new(dir, s->hostname, s->tsc, io_queue, NULL);
	if (!w)
		return -errno;
	int r = 0;
	struct trawl_ctf_stream_class *sc = tr_ust_stream_class_new(w, s->header, s->contexts);
	if (!sc)
		r = -errno;
	for (size_t i = 0; !r && i < s->nevs; i++)
		r = tr_ust_writer_add_event(w, sc, s->evs[i]);
	if (r < 0) {
		trawl_ctf_writer_free(w);
		return r;
	}
	*pw = w;
	*psc = sc;
	return 0;
}
