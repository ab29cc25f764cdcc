/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net_rtest: see rtest_pmd.h.  TEST-ONLY: registered in the test binary.
 *
 * Ownership: a port's rule list is written by the control side through
 * rte_flow (under rte_flow's per-port mutex) and read by the rx burst on a
 * forwarding lcore; both hold the port's spinlock while they touch it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bus_vdev_driver.h>
#include <ethdev_driver.h>
#include <ethdev_vdev.h>
#include <rte_cycles.h>
#include <rte_flow.h>
#include <rte_flow_driver.h>
#include <rte_kvargs.h>
#include <rte_malloc.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include "rtest_pmd.h"

#define RT_RING 4096
#define RT_TXQ_MAX 16

struct rt_priv;

/* An installed rule: the pattern it matches and what it does. */
struct rte_flow {
	struct rte_flow *next;
	bool transfer;
	bool m_smac;
	uint8_t smac[6];
	uint8_t ip_ver;             /* 0: any */
	bool m_src, m_dst;
	uint8_t src[16], dst[16];
	bool m_udp;
	uint16_t udp_dst;
	bool m_raw;
	int32_t raw_off;
	uint16_t raw_len;
	uint8_t raw_pat[32], raw_mask[32];
	/* actions */
	bool mark, queue, count, age, drop, fwd;
	uint32_t mark_id;
	uint32_t age_timeout;
	bool set_dmac, set_smac;
	uint8_t new_dmac[6], new_smac[6];
	uint16_t fwd_port;
	/* counters */
	uint64_t hits, bytes, last_hit_tsc;
};

struct rt_queue {
	struct rt_priv *priv;
	uint16_t qid;
};

struct rt_priv {
	uint16_t port_id;
	uint32_t caps;
	struct rte_ring *rx_wire, *tx_wire;
	rte_spinlock_t lock;
	struct rte_flow *flows;
	struct rtest_stats st;
	struct rte_ether_addr mac;
};

static struct rt_priv *rt_ports[RTE_MAX_ETHPORTS];

static struct rt_priv *
priv_of(uint16_t port_id)
{
	return port_id < RTE_MAX_ETHPORTS ? rt_ports[port_id] : NULL;
}

/*
 * ------------------------------------------------------------------------
 * The data path.
 */

/* Does @f match the frame at @d of @len bytes? Untagged Ethernet only. */
static bool
rule_match(const struct rte_flow *f, const uint8_t *d, uint32_t len)
{
	uint32_t l3 = 14, l4;
	uint16_t et;
	uint8_t ver;

	if (len < 14)
		return false;
	if (f->m_smac && memcmp(d + 6, f->smac, 6))
		return false;
	et = (uint16_t)(d[12] << 8 | d[13]);
	if (et == 0x0800) {
		if (len < l3 + 20 || d[l3 + 9] != 17)
			return false;
		ver = 4;
		l4 = l3 + (uint32_t)(d[l3] & 0xf) * 4;
		if (f->m_src && memcmp(d + l3 + 12, f->src, 4))
			return false;
		if (f->m_dst && memcmp(d + l3 + 16, f->dst, 4))
			return false;
	} else if (et == 0x86dd) {
		if (len < l3 + 40 || d[l3 + 6] != 17)
			return false;
		ver = 6;
		l4 = l3 + 40;
		if (f->m_src && memcmp(d + l3 + 8, f->src, 16))
			return false;
		if (f->m_dst && memcmp(d + l3 + 24, f->dst, 16))
			return false;
	} else {
		return false;
	}
	if (f->ip_ver && f->ip_ver != ver)
		return false;
	if (len < l4 + 8)
		return false;
	if (f->m_udp && (uint16_t)(d[l4 + 2] << 8 | d[l4 + 3]) != f->udp_dst)
		return false;
	if (f->m_raw) {
		uint32_t at = l4 + 8 + (uint32_t)f->raw_off;

		if (len < at + f->raw_len)
			return false;
		for (uint16_t i = 0; i < f->raw_len; i++)
			if ((d[at + i] ^ f->raw_pat[i]) & f->raw_mask[i])
				return false;
	}
	return true;
}

static uint16_t
rt_rx(void *q, struct rte_mbuf **bufs, uint16_t n)
{
	struct rt_priv *p = ((struct rt_queue *)q)->priv;
	uint16_t nb = (uint16_t)rte_ring_dequeue_burst(p->rx_wire, (void **)bufs, n, NULL), out = 0;

	if (nb == 0)
		return 0;
	rte_spinlock_lock(&p->lock);
	p->st.rx += nb;
	for (uint16_t i = 0; i < nb; i++) {
		struct rte_mbuf *m = bufs[i];
		uint8_t *d = rte_pktmbuf_mtod(m, uint8_t *);
		struct rte_flow *f;

		for (f = p->flows; f; f = f->next)
			if (rule_match(f, d, m->data_len))
				break;
		if (f) {
			f->hits++;
			f->bytes += m->pkt_len;
			f->last_hit_tsc = rte_rdtsc();
			if (f->drop) {
				p->st.dropped++;
				rte_pktmbuf_free(m);
				continue;
			}
			if (f->fwd) {
				struct rt_priv *t = priv_of(f->fwd_port);

				if (f->set_dmac)
					memcpy(d, f->new_dmac, 6);
				if (f->set_smac)
					memcpy(d + 6, f->new_smac, 6);
				p->st.forwarded++;
				if (!t || rte_ring_enqueue(t->tx_wire, m) != 0)
					rte_pktmbuf_free(m);
				continue;
			}
			if (f->mark) {
				m->ol_flags |= RTE_MBUF_F_RX_FDIR | RTE_MBUF_F_RX_FDIR_ID;
				m->hash.fdir.hi = f->mark_id;
				p->st.marked++;
			}
		}
		bufs[out++] = m;
	}
	rte_spinlock_unlock(&p->lock);
	return out;
}

static uint16_t
rt_tx(void *q, struct rte_mbuf **bufs, uint16_t n)
{
	struct rt_priv *p = ((struct rt_queue *)q)->priv;

	return (uint16_t)rte_ring_enqueue_burst(p->tx_wire, (void **)bufs, n, NULL);
}

/*
 * ------------------------------------------------------------------------
 * flow_ops.
 */
static const char *
caps_str(uint32_t caps, char *buf, size_t len)
{
	static const char *const names[] = { "mark", "queue", "count", "age", "drop", "forward", "fail_create" };
	size_t n = 0;

	buf[0] = 0;
	for (unsigned i = 0; i < RTE_DIM(names) && n < len; i++)
		if (caps & (1u << i))
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "+" : "", names[i]);
	if (!n)
		snprintf(buf, len, "none");
	return buf;
}

/* Messages stay valid after the call: one buffer per port is enough for tests. */
static char rt_msg[RTE_MAX_ETHPORTS][192];

static int
refuse(struct rt_priv *p, struct rte_flow_error *err, enum rte_flow_error_type type, const void *cause,
       const char *what)
{
	char caps[96];

	snprintf(rt_msg[p->port_id], sizeof(rt_msg[0]), "net_rtest: %s (this port accepts: %s)", what,
		 caps_str(p->caps & RTEST_CAP_ALL, caps, sizeof(caps)));
	p->st.refused++;
	return rte_flow_error_set(err, ENOTSUP, type, cause, rt_msg[p->port_id]);
}

static int
need(struct rt_priv *p, uint32_t cap, struct rte_flow_error *err, const struct rte_flow_action *a,
     const char *name)
{
	char what[64];

	if (p->caps & cap)
		return 0;
	snprintf(what, sizeof(what), "action %s not supported", name);
	return refuse(p, err, RTE_FLOW_ERROR_TYPE_ACTION, a, what);
}

/* Parse a rule into @f, or refuse it. */
static int
rt_parse(struct rte_eth_dev *dev, const struct rte_flow_attr *attr, const struct rte_flow_item items[],
	 const struct rte_flow_action actions[], struct rte_flow_error *err, struct rte_flow *f)
{
	struct rt_priv *p = dev->data->dev_private;
	bool after_udp = false;
	int rc;

	memset(f, 0, sizeof(*f));
	if (attr->egress || attr->group || (!attr->ingress && !attr->transfer))
		return refuse(p, err, RTE_FLOW_ERROR_TYPE_ATTR, attr, "only ingress or transfer rules in group 0");
	if (attr->transfer && !(p->caps & RTEST_CAP_FORWARD))
		return refuse(p, err, RTE_FLOW_ERROR_TYPE_ATTR_TRANSFER, attr, "transfer rules not supported");
	f->transfer = attr->transfer;
	for (const struct rte_flow_item *it = items; it->type != RTE_FLOW_ITEM_TYPE_END; it++) {
		if (it->last)
			return refuse(p, err, RTE_FLOW_ERROR_TYPE_ITEM_LAST, it, "ranges not supported");
		switch (it->type) {
		case RTE_FLOW_ITEM_TYPE_VOID:
			break;
		case RTE_FLOW_ITEM_TYPE_PORT_REPRESENTOR: {
			const struct rte_flow_item_ethdev *e = it->spec;

			if (!attr->transfer || !e || e->port_id != p->port_id)
				return refuse(p, err, RTE_FLOW_ERROR_TYPE_ITEM, it,
					      "port_representor must name this port, in a transfer rule");
			break;
		}
		case RTE_FLOW_ITEM_TYPE_ETH: {
			const struct rte_flow_item_eth *s = it->spec, *m = it->mask;
			static const uint8_t zero[6];

			if (s && m && memcmp(&m->hdr.src_addr, zero, 6)) {
				f->m_smac = true;
				memcpy(f->smac, &s->hdr.src_addr, 6);
			}
			break;
		}
		case RTE_FLOW_ITEM_TYPE_IPV4: {
			const struct rte_flow_item_ipv4 *s = it->spec, *m = it->mask ? it->mask : &rte_flow_item_ipv4_mask;

			f->ip_ver = 4;
			if (s && m->hdr.src_addr) {
				f->m_src = true;
				memcpy(f->src, &s->hdr.src_addr, 4);
			}
			if (s && m->hdr.dst_addr) {
				f->m_dst = true;
				memcpy(f->dst, &s->hdr.dst_addr, 4);
			}
			break;
		}
		case RTE_FLOW_ITEM_TYPE_IPV6: {
			const struct rte_flow_item_ipv6 *s = it->spec, *m = it->mask ? it->mask : &rte_flow_item_ipv6_mask;
			static const uint8_t zero[16];

			f->ip_ver = 6;
			if (s && memcmp(&m->hdr.src_addr, zero, 16)) {
				f->m_src = true;
				memcpy(f->src, &s->hdr.src_addr, 16);
			}
			if (s && memcmp(&m->hdr.dst_addr, zero, 16)) {
				f->m_dst = true;
				memcpy(f->dst, &s->hdr.dst_addr, 16);
			}
			break;
		}
		case RTE_FLOW_ITEM_TYPE_UDP: {
			const struct rte_flow_item_udp *s = it->spec, *m = it->mask ? it->mask : &rte_flow_item_udp_mask;

			if (s && m->hdr.dst_port) {
				f->m_udp = true;
				f->udp_dst = rte_be_to_cpu_16(s->hdr.dst_port);
			}
			after_udp = true;
			break;
		}
		case RTE_FLOW_ITEM_TYPE_RAW: {
			const struct rte_flow_item_raw *s = it->spec, *m = it->mask;

			if (!s || !after_udp || !s->relative || s->search || s->offset < 0 || !s->pattern ||
			    s->length == 0 || s->offset + s->length > (int)sizeof(f->raw_pat))
				return refuse(p, err, RTE_FLOW_ERROR_TYPE_ITEM, it,
					      "raw: only relative to UDP, no search, 32 bytes at most");
			f->m_raw = true;
			f->raw_off = s->offset;
			f->raw_len = s->length;
			memcpy(f->raw_pat, s->pattern, s->length);
			if (m && m->pattern)
				memcpy(f->raw_mask, m->pattern, s->length);
			else
				memset(f->raw_mask, 0xff, s->length);
			break;
		}
#ifdef DP_HAVE_IB_BTH
		case RTE_FLOW_ITEM_TYPE_IB_BTH: {
			const struct rte_flow_item_ib_bth *s = it->spec, *m = it->mask;

			if (!s || !m || !after_udp)
				return refuse(p, err, RTE_FLOW_ERROR_TYPE_ITEM, it, "ib_bth: spec and mask after udp");
			f->m_raw = true;
			f->raw_off = 0;
			f->raw_len = 12;
			memcpy(f->raw_pat, &s->hdr, 12);
			memcpy(f->raw_mask, &m->hdr, 12);
			break;
		}
#endif
		default: {
			char what[64];

			snprintf(what, sizeof(what), "pattern item type %d not supported", (int)it->type);
			return refuse(p, err, RTE_FLOW_ERROR_TYPE_ITEM, it, what);
		}
		}
	}
	for (const struct rte_flow_action *a = actions; a->type != RTE_FLOW_ACTION_TYPE_END; a++) {
		switch (a->type) {
		case RTE_FLOW_ACTION_TYPE_VOID:
			break;
		case RTE_FLOW_ACTION_TYPE_MARK:
			if ((rc = need(p, RTEST_CAP_MARK, err, a, "MARK")))
				return rc;
			f->mark = true;
			f->mark_id = ((const struct rte_flow_action_mark *)a->conf)->id;
			break;
		case RTE_FLOW_ACTION_TYPE_QUEUE:
			if ((rc = need(p, RTEST_CAP_QUEUE, err, a, "QUEUE")))
				return rc;
			if (((const struct rte_flow_action_queue *)a->conf)->index >= dev->data->nb_rx_queues)
				return refuse(p, err, RTE_FLOW_ERROR_TYPE_ACTION_CONF, a, "queue index out of range");
			f->queue = true;
			break;
		case RTE_FLOW_ACTION_TYPE_COUNT:
			if ((rc = need(p, RTEST_CAP_COUNT, err, a, "COUNT")))
				return rc;
			f->count = true;
			break;
		case RTE_FLOW_ACTION_TYPE_AGE:
			if ((rc = need(p, RTEST_CAP_AGE, err, a, "AGE")))
				return rc;
			f->age = true;
			f->age_timeout = ((const struct rte_flow_action_age *)a->conf)->timeout;
			break;
		case RTE_FLOW_ACTION_TYPE_DROP:
			if ((rc = need(p, RTEST_CAP_DROP, err, a, "DROP")))
				return rc;
			f->drop = true;
			break;
		case RTE_FLOW_ACTION_TYPE_MODIFY_FIELD: {
			const struct rte_flow_action_modify_field *mf = a->conf;

			if ((rc = need(p, RTEST_CAP_FORWARD, err, a, "MODIFY_FIELD")))
				return rc;
			if (!attr->transfer || mf->operation != RTE_FLOW_MODIFY_SET ||
			    mf->src.field != RTE_FLOW_FIELD_VALUE || mf->width != 48 ||
			    (mf->dst.field != RTE_FLOW_FIELD_MAC_DST && mf->dst.field != RTE_FLOW_FIELD_MAC_SRC))
				return refuse(p, err, RTE_FLOW_ERROR_TYPE_ACTION_CONF, a,
					      "modify_field: only set of a MAC to a value, in a transfer rule");
			if (mf->dst.field == RTE_FLOW_FIELD_MAC_DST) {
				f->set_dmac = true;
				memcpy(f->new_dmac, mf->src.value, 6);
			} else {
				f->set_smac = true;
				memcpy(f->new_smac, mf->src.value, 6);
			}
			break;
		}
		case RTE_FLOW_ACTION_TYPE_REPRESENTED_PORT:
		case RTE_FLOW_ACTION_TYPE_PORT_ID: {
			uint16_t to = a->type == RTE_FLOW_ACTION_TYPE_PORT_ID ?
				      (uint16_t)((const struct rte_flow_action_port_id *)a->conf)->id :
				      ((const struct rte_flow_action_ethdev *)a->conf)->port_id;

			if ((rc = need(p, RTEST_CAP_FORWARD, err, a, "REPRESENTED_PORT")))
				return rc;
			if (!attr->transfer || !priv_of(to))
				return refuse(p, err, RTE_FLOW_ERROR_TYPE_ACTION_CONF, a,
					      "represented_port: a net_rtest port, in a transfer rule");
			f->fwd = true;
			f->fwd_port = to;
			break;
		}
		default: {
			char what[64];

			snprintf(what, sizeof(what), "action type %d not supported", (int)a->type);
			return refuse(p, err, RTE_FLOW_ERROR_TYPE_ACTION, a, what);
		}
		}
	}
	if (f->drop && (f->mark || f->queue || f->fwd))
		return refuse(p, err, RTE_FLOW_ERROR_TYPE_ACTION, NULL, "drop with another fate");
	return 0;
}

static int
rt_validate(struct rte_eth_dev *dev, const struct rte_flow_attr *attr, const struct rte_flow_item items[],
	    const struct rte_flow_action actions[], struct rte_flow_error *err)
{
	struct rt_priv *p = dev->data->dev_private;
	struct rte_flow f;
	int rc = rt_parse(dev, attr, items, actions, err, &f);

	if (rc == 0)
		p->st.validated++;
	return rc;
}

static struct rte_flow *
rt_create(struct rte_eth_dev *dev, const struct rte_flow_attr *attr, const struct rte_flow_item items[],
	  const struct rte_flow_action actions[], struct rte_flow_error *err)
{
	struct rt_priv *p = dev->data->dev_private;
	struct rte_flow *f = calloc(1, sizeof(*f)), **tail;

	if (!f) {
		rte_flow_error_set(err, ENOMEM, RTE_FLOW_ERROR_TYPE_UNSPECIFIED, NULL, "net_rtest: no memory");
		return NULL;
	}
	if (rt_parse(dev, attr, items, actions, err, f) != 0) {
		free(f);
		return NULL;
	}
	if (p->caps & RTEST_CAP_FAIL_CREATE) {
		free(f);
		snprintf(rt_msg[p->port_id], sizeof(rt_msg[0]), "net_rtest: the device has no room for the rule");
		rte_flow_error_set(err, ENOSPC, RTE_FLOW_ERROR_TYPE_HANDLE, NULL, rt_msg[p->port_id]);
		return NULL;
	}
	f->last_hit_tsc = rte_rdtsc();
	rte_spinlock_lock(&p->lock);
	for (tail = &p->flows; *tail; tail = &(*tail)->next)
		;
	*tail = f;
	p->st.created++;
	p->st.rules++;
	rte_spinlock_unlock(&p->lock);
	return f;
}

static int
rt_destroy(struct rte_eth_dev *dev, struct rte_flow *flow, struct rte_flow_error *err)
{
	struct rt_priv *p = dev->data->dev_private;
	struct rte_flow **pp;

	rte_spinlock_lock(&p->lock);
	for (pp = &p->flows; *pp && *pp != flow; pp = &(*pp)->next)
		;
	if (!*pp) {
		rte_spinlock_unlock(&p->lock);
		return rte_flow_error_set(err, ENOENT, RTE_FLOW_ERROR_TYPE_HANDLE, flow, "net_rtest: no such rule");
	}
	*pp = flow->next;
	p->st.destroyed++;
	p->st.rules--;
	rte_spinlock_unlock(&p->lock);
	free(flow);
	return 0;
}

static int
rt_flush(struct rte_eth_dev *dev, struct rte_flow_error *err)
{
	struct rt_priv *p = dev->data->dev_private;
	struct rte_flow *f, *next;

	RTE_SET_USED(err);
	rte_spinlock_lock(&p->lock);
	f = p->flows;
	p->flows = NULL;
	p->st.flushed += p->st.rules;
	p->st.rules = 0;
	rte_spinlock_unlock(&p->lock);
	for (; f; f = next) {
		next = f->next;
		free(f);
	}
	return 0;
}

static int
rt_query(struct rte_eth_dev *dev, struct rte_flow *flow, const struct rte_flow_action *action, void *data,
	 struct rte_flow_error *err)
{
	struct rt_priv *p = dev->data->dev_private;
	int rc = 0;

	rte_spinlock_lock(&p->lock);
	if (action->type == RTE_FLOW_ACTION_TYPE_COUNT && flow->count) {
		struct rte_flow_query_count *q = data;

		q->hits_set = q->bytes_set = 1;
		q->hits = flow->hits;
		q->bytes = flow->bytes;
		if (q->reset)
			flow->hits = flow->bytes = 0;
	} else if (action->type == RTE_FLOW_ACTION_TYPE_AGE && flow->age) {
		struct rte_flow_query_age *q = data;
		uint64_t s = (rte_rdtsc() - flow->last_hit_tsc) / rte_get_tsc_hz();

		memset(q, 0, sizeof(*q));
		q->sec_since_last_hit_valid = 1;
		q->sec_since_last_hit = (uint32_t)RTE_MIN(s, 0xffffffu);
		q->aged = s >= flow->age_timeout;
	} else {
		rc = rte_flow_error_set(err, ENOTSUP, RTE_FLOW_ERROR_TYPE_ACTION, action,
					"net_rtest: the rule has no such counter");
	}
	rte_spinlock_unlock(&p->lock);
	return rc;
}

static const struct rte_flow_ops rt_flow_ops = {
	.validate = rt_validate,
	.create = rt_create,
	.destroy = rt_destroy,
	.flush = rt_flush,
	.query = rt_query,
};

/*
 * ------------------------------------------------------------------------
 * eth_dev_ops.
 */
static int
rt_flow_ops_get(struct rte_eth_dev *dev, const struct rte_flow_ops **ops)
{
	RTE_SET_USED(dev);
	*ops = &rt_flow_ops;
	return 0;
}

static int
rt_configure(struct rte_eth_dev *dev)
{
	RTE_SET_USED(dev);
	return 0;
}

static int
rt_start(struct rte_eth_dev *dev)
{
	dev->data->dev_link.link_status = RTE_ETH_LINK_UP;
	for (uint16_t q = 0; q < dev->data->nb_rx_queues; q++)
		dev->data->rx_queue_state[q] = RTE_ETH_QUEUE_STATE_STARTED;
	for (uint16_t q = 0; q < dev->data->nb_tx_queues; q++)
		dev->data->tx_queue_state[q] = RTE_ETH_QUEUE_STATE_STARTED;
	return 0;
}

static int
rt_stop(struct rte_eth_dev *dev)
{
	dev->data->dev_link.link_status = RTE_ETH_LINK_DOWN;
	for (uint16_t q = 0; q < dev->data->nb_rx_queues; q++)
		dev->data->rx_queue_state[q] = RTE_ETH_QUEUE_STATE_STOPPED;
	for (uint16_t q = 0; q < dev->data->nb_tx_queues; q++)
		dev->data->tx_queue_state[q] = RTE_ETH_QUEUE_STATE_STOPPED;
	return 0;
}

static void
ring_drain(struct rte_ring *r)
{
	void *m;

	while (r && rte_ring_dequeue(r, &m) == 0)
		rte_pktmbuf_free(m);
}

static int
rt_close(struct rte_eth_dev *dev)
{
	struct rt_priv *p = dev->data->dev_private;

	if (rte_eal_process_type() != RTE_PROC_PRIMARY || !p)
		return 0;
	rt_flush(dev, NULL);
	ring_drain(p->rx_wire);
	ring_drain(p->tx_wire);
	rte_ring_free(p->rx_wire);
	rte_ring_free(p->tx_wire);
	p->rx_wire = p->tx_wire = NULL;
	rt_ports[p->port_id] = NULL;
	return 0;
}

static int
rt_info(struct rte_eth_dev *dev, struct rte_eth_dev_info *info)
{
	RTE_SET_USED(dev);
	info->max_mac_addrs = 1;
	info->max_rx_pktlen = 16384;
	info->min_mtu = RTE_ETHER_MIN_MTU;
	info->max_mtu = 16384 - RTE_ETHER_HDR_LEN - RTE_ETHER_CRC_LEN;
	info->max_rx_queues = 1;
	info->max_tx_queues = RT_TXQ_MAX;
	return 0;
}

static int
queue_setup(struct rte_eth_dev *dev, void **slot, uint16_t qid)
{
	struct rt_queue *q = rte_zmalloc("rtest_q", sizeof(*q), 0);

	if (!q)
		return -ENOMEM;
	q->priv = dev->data->dev_private;
	q->qid = qid;
	rte_free(*slot);
	*slot = q;
	return 0;
}

static int
rt_rxq_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc, unsigned int socket,
	     const struct rte_eth_rxconf *conf, struct rte_mempool *mp)
{
	RTE_SET_USED(nb_desc);
	RTE_SET_USED(socket);
	RTE_SET_USED(conf);
	RTE_SET_USED(mp);
	return queue_setup(dev, &dev->data->rx_queues[qid], qid);
}

static int
rt_txq_setup(struct rte_eth_dev *dev, uint16_t qid, uint16_t nb_desc, unsigned int socket,
	     const struct rte_eth_txconf *conf)
{
	RTE_SET_USED(nb_desc);
	RTE_SET_USED(socket);
	RTE_SET_USED(conf);
	return queue_setup(dev, &dev->data->tx_queues[qid], qid);
}

static void
rt_rxq_release(struct rte_eth_dev *dev, uint16_t qid)
{
	rte_free(dev->data->rx_queues[qid]);
	dev->data->rx_queues[qid] = NULL;
}

static void
rt_txq_release(struct rte_eth_dev *dev, uint16_t qid)
{
	rte_free(dev->data->tx_queues[qid]);
	dev->data->tx_queues[qid] = NULL;
}

static int
rt_link_update(struct rte_eth_dev *dev, int wait)
{
	RTE_SET_USED(dev);
	RTE_SET_USED(wait);
	return 0;
}

static int
rt_promisc(struct rte_eth_dev *dev)
{
	RTE_SET_USED(dev);
	return 0;
}

static const struct eth_dev_ops rt_ops = {
	.dev_configure = rt_configure,
	.dev_start = rt_start,
	.dev_stop = rt_stop,
	.dev_close = rt_close,
	.dev_infos_get = rt_info,
	.rx_queue_setup = rt_rxq_setup,
	.tx_queue_setup = rt_txq_setup,
	.rx_queue_release = rt_rxq_release,
	.tx_queue_release = rt_txq_release,
	.link_update = rt_link_update,
	.promiscuous_enable = rt_promisc,
	.promiscuous_disable = rt_promisc,
	.flow_ops_get = rt_flow_ops_get,
};

/*
 * ------------------------------------------------------------------------
 * The vdev driver.
 */
static int
caps_parse(const char *key, const char *value, void *opaque)
{
	static const char *const names[] = { "mark", "queue", "count", "age", "drop", "forward", "fail_create" };
	uint32_t *caps = opaque;
	char buf[128], *tok, *save = NULL;

	RTE_SET_USED(key);
	*caps = 0;
	snprintf(buf, sizeof(buf), "%s", value);
	for (tok = strtok_r(buf, ":+", &save); tok; tok = strtok_r(NULL, ":+", &save)) {
		unsigned i;

		if (!strcmp(tok, "all")) {
			*caps |= RTEST_CAP_ALL;
			continue;
		}
		if (!strcmp(tok, "none"))
			continue;
		for (i = 0; i < RTE_DIM(names) && strcmp(tok, names[i]); i++)
			;
		if (i == RTE_DIM(names))
			return -1;
		*caps |= 1u << i;
	}
	return 0;
}

static int
rt_probe(struct rte_vdev_device *vdev)
{
	const char *name = rte_vdev_device_name(vdev), *args = rte_vdev_device_args(vdev);
	static const char *const keys[] = { "caps", NULL };
	struct rte_eth_dev *eth;
	struct rt_priv *p;
	char rname[RTE_RING_NAMESIZE];
	uint32_t caps = RTEST_CAP_ALL;

	if (args && *args) {
		struct rte_kvargs *kv = rte_kvargs_parse(args, keys);
		int rc = kv ? rte_kvargs_process(kv, "caps", caps_parse, &caps) : -1;

		rte_kvargs_free(kv);
		if (rc < 0) {
			fprintf(stderr, "%s: bad devargs \"%s\" (caps=mark:queue:count:age:drop:forward)\n", name, args);
			return -EINVAL;
		}
	}
	eth = rte_eth_vdev_allocate(vdev, sizeof(*p));
	if (!eth)
		return -ENOMEM;
	p = eth->data->dev_private;
	p->port_id = eth->data->port_id;
	p->caps = caps;
	rte_spinlock_init(&p->lock);
	snprintf(rname, sizeof(rname), "rt_rx_%u", p->port_id);
	p->rx_wire = rte_ring_create(rname, RT_RING, (int)vdev->device.numa_node < 0 ? SOCKET_ID_ANY :
				     vdev->device.numa_node, 0);
	snprintf(rname, sizeof(rname), "rt_tx_%u", p->port_id);
	p->tx_wire = rte_ring_create(rname, RT_RING, SOCKET_ID_ANY, 0);
	eth->data->mac_addrs = rte_zmalloc(name, sizeof(struct rte_ether_addr), 0);
	if (!p->rx_wire || !p->tx_wire || !eth->data->mac_addrs) {
		rte_ring_free(p->rx_wire);
		rte_ring_free(p->tx_wire);
		rte_eth_dev_release_port(eth);
		return -ENOMEM;
	}
	eth->data->mac_addrs->addr_bytes[0] = 0x02;
	eth->data->mac_addrs->addr_bytes[5] = (uint8_t)p->port_id;
	eth->data->dev_link.link_speed = RTE_ETH_SPEED_NUM_100G;
	eth->data->dev_link.link_duplex = RTE_ETH_LINK_FULL_DUPLEX;
	eth->data->dev_flags |= RTE_ETH_DEV_AUTOFILL_QUEUE_XSTATS;
	eth->dev_ops = &rt_ops;
	eth->rx_pkt_burst = rt_rx;
	eth->tx_pkt_burst = rt_tx;
	rt_ports[p->port_id] = p;
	rte_eth_dev_probing_finish(eth);
	return 0;
}

static int
rt_remove(struct rte_vdev_device *vdev)
{
	struct rte_eth_dev *eth = rte_eth_dev_allocated(rte_vdev_device_name(vdev));

	if (!eth)
		return 0;
	rt_close(eth);
	return rte_eth_dev_release_port(eth);
}

static struct rte_vdev_driver rt_driver = {
	.probe = rt_probe,
	.remove = rt_remove,
};

RTE_PMD_REGISTER_VDEV(net_rtest, rt_driver);
RTE_PMD_REGISTER_PARAM_STRING(net_rtest, "caps=<mark:queue:count:age:drop:forward:fail_create|all|none>");

/*
 * ------------------------------------------------------------------------
 * The test's side of the wire.
 */
int
rtest_is_port(uint16_t port_id)
{
	return priv_of(port_id) != NULL;
}

void
rtest_caps_set(uint16_t port_id, uint32_t caps)
{
	struct rt_priv *p = priv_of(port_id);

	if (p)
		p->caps = caps;
}

unsigned
rtest_inject(uint16_t port_id, struct rte_mbuf **m, unsigned n)
{
	struct rt_priv *p = priv_of(port_id);

	return p ? rte_ring_enqueue_burst(p->rx_wire, (void **)m, n, NULL) : 0;
}

unsigned
rtest_collect(uint16_t port_id, struct rte_mbuf **m, unsigned n)
{
	struct rt_priv *p = priv_of(port_id);

	return p ? rte_ring_dequeue_burst(p->tx_wire, (void **)m, n, NULL) : 0;
}

int
rtest_stats_get(uint16_t port_id, struct rtest_stats *s)
{
	struct rt_priv *p = priv_of(port_id);

	if (!p)
		return -ENODEV;
	rte_spinlock_lock(&p->lock);
	*s = p->st;
	rte_spinlock_unlock(&p->lock);
	return 0;
}
