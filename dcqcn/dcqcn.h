/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * DCQCN as three pure algorithms: the congestion point (CP) that marks ECN
 * from a queue's depth, the notification point (NP) that paces CNPs per
 * connection, and the reaction point (RP) that turns CNPs into a sending rate.
 *
 * The library is shaped like rte_meter.  Parameters are given in the units
 * NVIDIA documents for its firmware (struct dcqcn_params), converted once into
 * a precomputed integer profile (struct dcqcn_profile) that many connections
 * share, and each connection keeps a small state (struct dcqcn_np,
 * struct dcqcn_rp).  No function reads a clock: time is passed in as @now, in
 * nanoseconds of a monotonic clock that the caller owns (the data plane
 * converts its TSC once per burst; tests and dcqcn-sim use a virtual clock).
 * Timers are evaluated lazily from @now: there are no timer objects, and a
 * call at time t processes every timer event due at or before t, in order,
 * exactly as if each had fired on time.
 *
 * The library links against libc and libm only.  It is not thread-safe: one
 * connection's state belongs to one lcore, and a profile is read-only once
 * built.  docs/dcqcn.md describes the parameters, their sources and the
 * state machine.
 */
#ifndef DCQCN_H
#define DCQCN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The time value that means "no event pending". */
#define DCQCN_NEVER UINT64_MAX

/* Alpha is kept with 20 fractional bits: DCQCN_ALPHA_ONE is 1.0. */
#define DCQCN_ALPHA_SHIFT 20
#define DCQCN_ALPHA_ONE (UINT32_C(1) << DCQCN_ALPHA_SHIFT)

/* The ECN codepoints of the IP header (RFC 3168). */
#define DCQCN_ECN_NOT_ECT 0u
#define DCQCN_ECN_ECT1 1u
#define DCQCN_ECN_ECT0 2u
#define DCQCN_ECN_CE 3u

/* Which published rate machine a profile follows. */
enum dcqcn_model {
	/* NVIDIA ConnectX firmware: periodic alpha, monitored cuts. */
	DCQCN_MODEL_NVIDIA = 0,
	/* Zhu et al., SIGCOMM 2015: alpha and cut at each CNP, decay after K. */
	DCQCN_MODEL_PAPER = 1,
};

/* How the NP treats a CE mark inside the min_time_between_cnps window. */
enum dcqcn_cnp_mode {
	/* The mark is ignored (NVIDIA NICs). */
	DCQCN_CNP_SUPPRESS = 0,
	/* One CNP leaves at the end of the window if any mark fell in it (paper). */
	DCQCN_CNP_DEFER = 1,
};

/* The phase that the next rate increase of an RP will use. */
enum dcqcn_stage {
	DCQCN_STAGE_FR = 0,     /* fast recovery: Rc = (Rt + Rc) / 2 */
	DCQCN_STAGE_AI = 1,     /* additive increase: Rt += rpg_ai_rate first */
	DCQCN_STAGE_HI = 2,     /* hyper increase: Rt += i * rpg_hai_rate first */
};

/*
 * Parameters in human units, by the names of the NVIDIA firmware (mlxconfig
 * and the sysfs files under /sys/class/net/IF/ecn/roce_rp and roce_np), plus
 * the switch-side marking curve (kmin, kmax, pmax) and the CNP pacing mode.
 * Fill with dcqcn_params_default() and change with dcqcn_params_set().
 */
struct dcqcn_params {
	enum dcqcn_model model;
	/* Reaction point. */
	uint32_t rp_enable;                     /* 0 or 1 */
	uint32_t clamp_tgt_rate;                /* 0 or 1 */
	uint32_t clamp_tgt_rate_after_time_inc; /* 0 or 1 */
	uint32_t rpg_time_reset;                /* us */
	uint32_t rpg_byte_reset;                /* bytes, 0 disables */
	uint32_t rpg_threshold;                 /* F, increase events */
	uint32_t rpg_max_rate;                  /* Mb/s, 0 = line rate */
	uint32_t rpg_ai_rate;                   /* Mb/s */
	uint32_t rpg_hai_rate;                  /* Mb/s */
	uint32_t rpg_gd;                        /* alpha to rate shift */
	uint32_t rpg_min_dec_fac;               /* percent */
	uint32_t rpg_min_rate;                  /* Mb/s */
	uint32_t rate_to_set_on_first_cnp;      /* Mb/s, 0 = no change */
	uint32_t dce_tcp_g;                     /* 1/1024 units */
	uint32_t dce_tcp_rtt;                   /* us */
	uint32_t rate_reduce_monitor_period;    /* us */
	uint32_t initial_alpha_value;           /* 1/1024 units */
	/* Notification point. */
	uint32_t np_enable;                     /* 0 or 1 */
	uint32_t min_time_between_cnps;         /* us */
	enum dcqcn_cnp_mode cnp_mode;
	uint32_t cnp_dscp;                      /* 0..63 */
	uint32_t cnp_802p_prio;                 /* 0..7 */
	/* Congestion point. */
	uint32_t kmin;                          /* bytes */
	uint32_t kmax;                          /* bytes */
	double pmax;                            /* percent */
};

/*
 * The precomputed integer form of a parameter set for one line rate.  Read
 * only after dcqcn_profile_build(); shared by every connection that uses it.
 */
struct dcqcn_profile {
	enum dcqcn_model model;
	bool rp_enable;
	bool clamp_tgt_rate;
	bool clamp_after_time_inc;
	uint64_t line_bps;
	uint64_t max_bps;               /* release the limiter at this rate */
	uint64_t min_bps;
	uint64_t ai_bps;
	uint64_t hai_bps;
	uint64_t first_cnp_bps;         /* 0 = cut from the current rate */
	uint64_t time_reset_ns;
	uint64_t byte_reset;            /* 0 = byte counter disabled */
	uint64_t alpha_period_ns;       /* dce_tcp_rtt, or K for the paper */
	uint64_t monitor_ns;            /* rate_reduce_monitor_period */
	uint32_t threshold;
	uint32_t g_keep;                /* dce_tcp_g: the weight of the old alpha, /1024 */
	uint32_t gd_shift;              /* cut = Rc * alpha_q10 >> gd_shift */
	uint32_t min_dec_fac;           /* percent */
	uint32_t alpha_init;            /* DCQCN_ALPHA_ONE = 1.0 */
	/* Notification point. */
	bool np_enable;
	enum dcqcn_cnp_mode cnp_mode;
	uint64_t cnp_window_ns;
	uint8_t cnp_dscp;
	uint8_t cnp_802p_prio;
	/* Congestion point: probability in units of 2^-32. */
	uint64_t kmin;
	uint64_t kmax;
	uint64_t pmax_q32;
};

/*
 * Counters under the names operators know from NVIDIA NICs.  The library
 * increments them where it decides; callers keep one block per connection
 * (or per queue for the CP) and add them up per tenant.  Every function that
 * takes one accepts NULL.
 */
struct dcqcn_counters {
	uint64_t cp_ecn_marked;                 /* ECT packets this CP set to CE */
	uint64_t np_ecn_marked_roce_packets;    /* CE packets seen by the NP */
	uint64_t np_cnp_sent;                   /* CNPs the NP asked to send */
	uint64_t rp_cnp_handled;                /* CNPs that drove the rate machine */
	uint64_t rp_cnp_ignored;                /* CNPs dropped: RP disabled or stale */
};

/* Per-connection NP state.  Zero-initialised is valid ("no CNP yet"). */
struct dcqcn_np {
	uint64_t last_cnp_ns;   /* when the last CNP was sent */
	uint8_t sent_any;       /* a CNP has been sent */
	uint8_t pending;        /* defer mode: a mark is waiting for the window */
};

/*
 * Per-connection RP state.  Initialise with dcqcn_rp_init().  While no CNP
 * has been seen (or after the rate has recovered to rpg_max_rate) there is no
 * rate limiter: the rate is the line rate and no timer runs.
 */
struct dcqcn_rp {
	uint64_t rc_bps;        /* current rate */
	uint64_t rt_bps;        /* target rate */
	uint64_t clock_ns;      /* events up to this time are processed */
	uint64_t next_alpha_ns; /* next alpha update, DCQCN_NEVER while idle */
	uint64_t alpha_grid_ns; /* NVIDIA: the alpha updates fall on this grid */
	uint64_t next_timer_ns; /* next rate-increase timer expiry */
	uint64_t last_cut_ns;   /* last rate cut */
	uint64_t bytes;         /* bytes sent since the last byte event */
	uint32_t alpha;         /* DCQCN_ALPHA_ONE = 1.0 */
	uint16_t t_stage;       /* timer expiries since the last cut */
	uint16_t bc_stage;      /* byte-counter expiries since the last cut */
	uint8_t active;         /* a rate limiter is allocated */
	uint8_t cut_pending;    /* a CNP arrived inside the monitor period */
	uint8_t alpha_cnp;      /* a CNP arrived in this alpha period (NVIDIA) */
};

/* Parameters. */

/*
 * Fill @p with the named profile's defaults: "nvidia" (the firmware defaults,
 * the default profile) or "paper" (Zhu et al., SIGCOMM 2015).
 * Returns 0, or -ENOENT for an unknown name.
 */
int dcqcn_params_default(struct dcqcn_params *p, const char *profile);

/*
 * Set one parameter from text, by its configuration name (the NVIDIA name,
 * for example "rpg_ai_rate", or "kmin", "kmax", "pmax", "cnp_mode").
 * Returns 0, -ENOENT for an unknown name, or -EINVAL for a value that does
 * not parse or is out of the documented range; @p is unchanged on error.
 */
int dcqcn_params_set(struct dcqcn_params *p, const char *name, const char *value);

/*
 * Format the value of parameter @name into @buf.  Returns the length that
 * snprintf() would write, or -ENOENT.
 */
int dcqcn_params_get(const struct dcqcn_params *p, const char *name, char *buf, size_t len);

/* The name of parameter @i (0, 1, ...), or NULL past the last one. */
const char *dcqcn_param_name(unsigned int i);

/* The unit of parameter @name as documented ("us", "Mb/s", ...), or NULL. */
const char *dcqcn_param_unit(const char *name);

/*
 * Convert @p into @prof for a port of @line_rate_bps bits per second.
 * Returns 0, or -EINVAL when the set is inconsistent (kmin above kmax, a zero
 * line rate, rpg_min_rate above the maximum rate).
 */
int dcqcn_profile_build(struct dcqcn_profile *prof, const struct dcqcn_params *p,
			uint64_t line_rate_bps);

/* Congestion point. */

/*
 * The marking probability for a queue holding @queue_bytes, in units of 2^-32
 * (0 ... 2^32): 0 up to and including kmin, rising linearly to pmax at kmax,
 * and 1 (2^32) above kmax.
 */
uint64_t dcqcn_cp_mark_prob_q32(const struct dcqcn_profile *prof, uint64_t queue_bytes);

/* The same probability as a double in [0, 1], for reports and tests. */
double dcqcn_cp_mark_prob(const struct dcqcn_profile *prof, uint64_t queue_bytes);

/*
 * Decide the ECN codepoint of a packet leaving a queue of @queue_bytes.
 * @rnd is a uniform random 32-bit number supplied by the caller.  Only
 * ECT(0) and ECT(1) are marked (when @rnd is below the probability); Not-ECT
 * is never marked and CE stays CE.  Returns the new codepoint and counts
 * cp_ecn_marked when it set CE.
 */
uint8_t dcqcn_cp_mark(const struct dcqcn_profile *prof, uint8_t ecn, uint64_t queue_bytes,
		      uint32_t rnd, struct dcqcn_counters *ctr);

/* Notification point. */

/* Reset @np to "no CNP sent yet". */
void dcqcn_np_init(struct dcqcn_np *np);

/*
 * A CE-marked RoCE packet of this connection arrived at @now.  Returns true
 * when a CNP must be sent now.  Inside the pacing window a mark is dropped
 * (suppress) or remembered for dcqcn_np_poll() (defer).
 */
bool dcqcn_np_on_ce(struct dcqcn_np *np, const struct dcqcn_profile *prof, uint64_t now,
		    struct dcqcn_counters *ctr);

/*
 * Returns true when a deferred CNP is due at @now; the caller sends it.  The
 * next window starts at @now, when that CNP actually leaves.
 */
bool dcqcn_np_poll(struct dcqcn_np *np, const struct dcqcn_profile *prof, uint64_t now,
		   struct dcqcn_counters *ctr);

/* When a deferred CNP becomes due, or DCQCN_NEVER. */
uint64_t dcqcn_np_next_deadline(const struct dcqcn_np *np, const struct dcqcn_profile *prof);

/* Reaction point. */

/* Reset @rp to "no rate limiter", at the line rate of @prof. */
void dcqcn_rp_init(struct dcqcn_rp *rp, const struct dcqcn_profile *prof);

/*
 * Process every timer event due at or before @now (alpha updates, a pending
 * cut at the end of a monitor period, rate-increase timer expiries), in time
 * order; at equal times alpha first, then the cut, then the increase.
 * A @now earlier than the last processed time changes nothing.
 */
void dcqcn_rp_advance(struct dcqcn_rp *rp, const struct dcqcn_profile *prof, uint64_t now);

/* A CNP for this connection arrived at @now.  Advances to @now first. */
void dcqcn_rp_on_cnp(struct dcqcn_rp *rp, const struct dcqcn_profile *prof, uint64_t now,
		     struct dcqcn_counters *ctr);

/*
 * @bytes were sent at @now: advances to @now, then feeds the byte counter,
 * which fires once per rpg_byte_reset bytes.
 */
void dcqcn_rp_on_tx(struct dcqcn_rp *rp, const struct dcqcn_profile *prof, uint32_t bytes,
		    uint64_t now);

/* The time of the next timer event, or DCQCN_NEVER. */
uint64_t dcqcn_rp_next_event(const struct dcqcn_rp *rp, const struct dcqcn_profile *prof);

/* The current rate in bits per second. */
static inline uint64_t
dcqcn_rp_rate(const struct dcqcn_rp *rp)
{
	return rp->rc_bps;
}

/* The target rate in bits per second. */
static inline uint64_t
dcqcn_rp_target(const struct dcqcn_rp *rp)
{
	return rp->rt_bps;
}

/* Alpha with DCQCN_ALPHA_SHIFT fractional bits. */
static inline uint32_t
dcqcn_rp_alpha(const struct dcqcn_rp *rp)
{
	return rp->alpha;
}

/* The phase that the next increase will use. */
enum dcqcn_stage dcqcn_rp_stage(const struct dcqcn_rp *rp, const struct dcqcn_profile *prof);

/* "FR", "AI" or "HI". */
const char *dcqcn_stage_name(enum dcqcn_stage s);

#ifdef __cplusplus
}
#endif

#endif /* DCQCN_H */
