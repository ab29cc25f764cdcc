/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-packet half of estats.h: include estats.h, not this file.
 *
 * The calls a switch makes, by the thread that makes them:
 *   the thread of L's egress frames:   estats_egress(c, prof, flags, psn, syndrome, now)
 *   the thread of L's ingress frames:  estats_ingress(c, prof, flags, psn, syndrome, now)
 *                                      estats_ingress_cnp_sent(c)
 * for every RC frame of the connection (requests, answers, CNPs), with
 * @flags the opcode's role flags plus ESTATS_F_ACKREQ and ESTATS_F_CE from
 * the headers, and @syndrome the AETH syndrome byte (0 when the frame has no
 * AETH, as READ response middles).  The finer entry points below are what
 * those two dispatch to.
 */
#ifndef ESTATS_WIRE_H
#define ESTATS_WIRE_H

/* Probe words: valid bit, 24-bit PSN, 39-bit time (ns, wraps after 9 minutes). */
#define ESTATS_W_VALID (UINT64_C(1) << 63)
#define ESTATS_W_TBITS 39u
#define ESTATS_W_TMASK ((UINT64_C(1) << ESTATS_W_TBITS) - 1u)

/* @a is @b or after it, modulo 2^24 (within half the PSN space). */
static inline bool
estats_psn_ge(uint32_t a, uint32_t b)
{
	return ((a - b) & ESTATS_PSN_MASK) < 0x800000u;
}

static inline uint64_t
estats_word(uint32_t psn, uint64_t now)
{
	return ESTATS_W_VALID | ((uint64_t)(psn & ESTATS_PSN_MASK) << ESTATS_W_TBITS) | (now & ESTATS_W_TMASK);
}

static inline uint32_t
estats_word_psn(uint64_t w)
{
	return (uint32_t)(w >> ESTATS_W_TBITS) & ESTATS_PSN_MASK;
}

/*
 * Time from the probe's start to @now.  The two sides read their clocks at
 * different moments (once per burst), so a round trip shorter than that
 * skew can come out negative: it counts as 0.
 */
static inline uint64_t
estats_word_age(uint64_t w, uint64_t now)
{
	uint64_t d = (now - w) & ESTATS_W_TMASK;

	return d >= (ESTATS_W_TMASK >> 1) ? 0 : d;
}

/* Publish a probe word, or load the other side's, with the ordering the protocol needs. */
static inline void
estats_word_put(uint64_t *p, uint64_t w)
{
	__atomic_store_n(p, w, __ATOMIC_RELEASE);
}

static inline uint64_t
estats_word_get(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/*
 * Whether the starting side may place a new probe: none is there, the other
 * side has consumed it (@done), or it has outlived the profile's timeout.
 */
static inline bool
estats_probe_free(uint64_t w, const uint64_t *done, const struct estats_profile *prof, uint64_t now)
{
	return w == 0 || estats_word_get(done) == w || estats_word_age(w, now) > prof->timeout_ns;
}

/* The NAK kind of AETH syndrome @syn, or -1 for an ACK. */
static inline int
estats_aeth_nak(unsigned syn)
{
	switch ((syn >> 5) & 7u) {
	case 0:
		return -1;
	case 1:
		return ESTATS_NAK_RNR;
	case 3:
		switch (syn & 0x1fu) {
		case 0:
			return ESTATS_NAK_PSN_SEQ;
		case 1:
			return ESTATS_NAK_INV_REQ;
		case 2:
			return ESTATS_NAK_REM_ACCESS;
		case 3:
			return ESTATS_NAK_REM_OP;
		case 4:
			return ESTATS_NAK_INV_RD_REQ;
		default:
			return ESTATS_NAK_RESERVED;
		}
	default:
		return ESTATS_NAK_RESERVED;
	}
}

/*
 * What an answer with PSN @psn does to the probe on @w: 1 it completes it,
 * -1 it cancels it (a NAK at or before the sampled PSN), 0 neither.  With
 * @keep_on_nak a NAK never cancels (message completion waits for recovery).
 */
static inline int
estats_answer(uint64_t w, uint32_t psn, bool nak, bool keep_on_nak)
{
	uint32_t s = estats_word_psn(w);

	if (!nak)
		return estats_psn_ge(psn, s) ? 1 : 0;
	if (estats_psn_ge(psn, s) && ((psn - s) & ESTATS_PSN_MASK) != 0)
		return 1;
	return keep_on_nak ? 0 : -1;
}

/* Complete or cancel the probe on @probe, recording into @h: the completing side of the protocol. */
static inline void
estats_probe_answer(const uint64_t *probe, uint64_t *done, struct estats_hist *h,
		    const struct estats_profile *prof, uint32_t psn, bool nak, bool keep_on_nak, uint64_t now)
{
	uint64_t w = estats_word_get(probe);
	uint64_t age;
	int r;

	if (w == 0 || w == *done)
		return;
	r = estats_answer(w, psn, nak, keep_on_nak);
	if (r == 0)
		return;
	age = estats_word_age(w, now);
	if (r > 0 && age <= prof->timeout_ns)
		estats_hist_record(h, age);
	estats_word_put(done, w);
}

/*
 * L sent a request with PSN @psn toward the fabric (egress thread only).
 * Counts a retransmission, or may start a network round-trip sample, and
 * opens and posts message samples.
 */
static inline void
estats_egress_request(struct estats_conn *c, const struct estats_profile *prof, uint32_t flags,
		      uint32_t psn, uint64_t now)
{
	struct estats_egress *eg = &c->egress;

	psn &= ESTATS_PSN_MASK;
	if (eg->nxt_valid && !estats_psn_ge(psn, eg->nxt_psn)) {
		/* Seen before: Karn's rule, the round trip in flight is now ambiguous. */
		ESTATS_INC(&eg->retrans);
		if (eg->net_probe != 0)
			estats_word_put(&eg->net_probe, 0);
		return;
	}
	eg->nxt_valid = 1;
	eg->nxt_psn = (psn + 1u) & ESTATS_PSN_MASK;
	if (flags & (ESTATS_F_SEND | ESTATS_F_WRITE)) {
		if ((flags & (ESTATS_F_FIRST | ESTATS_F_ONLY)) &&
		    estats_probe_free(eg->msg_probe, &c->ingress.msg_done, prof, now)) {
			eg->msg_open = 1;
			eg->msg_t0 = now;
		}
		if ((flags & (ESTATS_F_LAST | ESTATS_F_ONLY)) && eg->msg_open) {
			eg->msg_open = 0;
			estats_word_put(&eg->msg_probe, estats_word(psn, eg->msg_t0));
		}
	}
	if ((flags & (ESTATS_F_LAST | ESTATS_F_ONLY | ESTATS_F_ACKREQ)) &&
	    estats_probe_free(eg->net_probe, &c->ingress.net_done, prof, now))
		estats_word_put(&eg->net_probe, estats_word(psn, now));
}

/*
 * L answered R's request (ACK, NAK, READ response, atomic ACK) toward the
 * fabric (egress thread only): counts L's NAKs and completes the host
 * response sample.
 */
static inline void
estats_egress_answer(struct estats_conn *c, const struct estats_profile *prof, uint32_t psn,
		     unsigned syndrome, uint64_t now)
{
	struct estats_egress *eg = &c->egress;
	int nak = estats_aeth_nak(syndrome);

	if (nak >= 0)
		ESTATS_INC(&eg->cold->naks[nak]);
	estats_probe_answer(&c->ingress.host_probe, &eg->host_done, &eg->cold->host, prof,
			    psn & ESTATS_PSN_MASK, nak >= 0, false, now);
}

/*
 * R's request with PSN @psn is delivered to L (ingress thread only).  Counts
 * out-of-sequence and duplicate requests, and may start a host response
 * sample.
 */
static inline void
estats_ingress_request(struct estats_conn *c, const struct estats_profile *prof, uint32_t flags,
		       uint32_t psn, uint64_t now)
{
	struct estats_ingress *in = &c->ingress;

	psn &= ESTATS_PSN_MASK;
	if (in->exp_valid && psn != in->exp_psn) {
		if (!estats_psn_ge(psn, in->exp_psn)) {
			/* R retransmitted: the host sample in flight is ambiguous. */
			ESTATS_INC(&in->dup);
			if (in->host_probe != 0)
				estats_word_put(&in->host_probe, 0);
			return;
		}
		ESTATS_INC(&in->oos);
		/* L's RNIC drops it and waits for exp_psn, unless R has moved on for good. */
		if (++in->oos_run < prof->oos_resync)
			return;
	}
	in->oos_run = 0;
	in->exp_psn = (psn + 1u) & ESTATS_PSN_MASK;
	/* A READ request reserves one PSN per response packet, which this side cannot count: resync. */
	in->exp_valid = !(flags & ESTATS_F_READ);
	if ((flags & (ESTATS_F_LAST | ESTATS_F_ONLY | ESTATS_F_ACKREQ)) &&
	    estats_probe_free(in->host_probe, &c->egress.host_done, prof, now))
		estats_word_put(&in->host_probe, estats_word(psn, now));
}

/*
 * R answered L's request (ingress thread only): counts R's NAKs and
 * completes the network round-trip and message completion samples.
 */
static inline void
estats_ingress_answer(struct estats_conn *c, const struct estats_profile *prof, uint32_t psn,
		      unsigned syndrome, uint64_t now)
{
	struct estats_ingress *in = &c->ingress;
	int nak = estats_aeth_nak(syndrome);

	psn &= ESTATS_PSN_MASK;
	if (nak >= 0)
		ESTATS_INC(&in->cold->naks[nak]);
	estats_probe_answer(&c->egress.net_probe, &in->net_done, &in->cold->net, prof, psn, nak >= 0, false, now);
	estats_probe_answer(&c->egress.msg_probe, &in->msg_done, &in->cold->msg, prof, psn, nak >= 0, true, now);
}

/*
 * An egress frame of the connection (egress thread only): L's request or
 * answer.  @syndrome is the AETH syndrome, 0 without an AETH.
 */
static inline void
estats_egress(struct estats_conn *c, const struct estats_profile *prof, uint32_t flags, uint32_t psn,
	      unsigned syndrome, uint64_t now)
{
	if (flags & ESTATS_F_CE)
		ESTATS_INC(&c->egress.ce);
	if (flags & ESTATS_F_REQ)
		estats_egress_request(c, prof, flags, psn, now);
	else if (flags & ESTATS_F_RESP)
		estats_egress_answer(c, prof, psn, syndrome, now);
}

/*
 * An ingress frame of the connection (ingress thread only): R's request or
 * answer, or a CNP from the fabric for L.
 */
static inline void
estats_ingress(struct estats_conn *c, const struct estats_profile *prof, uint32_t flags, uint32_t psn,
	       unsigned syndrome, uint64_t now)
{
	if (flags & ESTATS_F_CE)
		ESTATS_INC(&c->ingress.ce);
	if (flags & ESTATS_F_REQ)
		estats_ingress_request(c, prof, flags, psn, now);
	else if (flags & ESTATS_F_RESP)
		estats_ingress_answer(c, prof, psn, syndrome, now);
	else if (flags & ESTATS_F_CNP)
		ESTATS_INC(&c->ingress.cnp_rx);
}

/* The switch sent a CNP to R for this connection (ingress thread only). */
static inline void
estats_ingress_cnp_sent(struct estats_conn *c)
{
	ESTATS_INC(&c->ingress.cnp_tx);
}

#endif /* ESTATS_WIRE_H */
