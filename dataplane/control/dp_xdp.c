/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * net_af_xdp ports with our XDP program: see dp_xdp.h for what the switch
 * calls when, and xdp/roce_xdp.h for the loader underneath.  The checks and
 * arguments before EAL are dp_xdp_eal.c.
 */
#include <errno.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_telemetry.h>

#include "dp.h"
#include "dp_xdp.h"
#include "roce_xdp.h"

struct xdp_port {
	struct roce_xdp *x;	/* NULL: not ours, or not started */
	char name[64];		/* the configuration's port name */
	char ifname[IF_NAMESIZE];
	int ifindex;
	bool is_af_xdp;
	bool prepared;
	bool was_promisc;	/* IFF_PROMISC before the switch */
};

static struct xdp_port xports[RTE_MAX_ETHPORTS];
static pthread_mutex_t xlock = PTHREAD_MUTEX_INITIALIZER;
/* Frames the programs of stopped ports denied: the exit summary comes after the ports stop. */
static uint64_t denied_stopped;

/* Reads (set == false) or sets the IFF_PROMISC flag of ifname. */
static int
promisc(const char *ifname, bool set, bool on, bool *was)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM, 0), rc = 0;

	if (s < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0) {
		rc = -errno;
	} else if (!set) {
		*was = (ifr.ifr_flags & IFF_PROMISC) != 0;
	} else {
		ifr.ifr_flags = on ? (ifr.ifr_flags | IFF_PROMISC) : (ifr.ifr_flags & ~IFF_PROMISC);
		if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
			rc = -errno;
	}
	close(s);
	return rc;
}

/* The xdp port of the configuration's port index, or NULL. */
static struct xdp_port *
xport_of(uint16_t idx)
{
	struct xdp_port *p;

	if (idx >= dp.n_ports)
		return NULL;
	p = &xports[dp.ports[idx].port_id];
	return p->x != NULL ? p : NULL;
}

static void
key_apply(struct xdp_port *p, const struct ovl_ip *src, uint32_t qpn, bool deny)
{
	if (p == NULL || p->x == NULL)
		return;
	if (deny)
		roce_xdp_deny_add(p->x, src->ver == 6 ? 6 : 4, src->b, qpn);
	else
		roce_xdp_deny_del(p->x, src->ver == 6 ? 6 : 4, src->b, qpn);
}

/* On every uplink: the fabric's frames from @host to @pqpn. */
static void
uplinks_apply(const struct ovl_ip *host, uint32_t pqpn, bool deny)
{
	for (uint16_t i = 0; i < dp.n_ports; i++)
		if (dp.ports[i].uplink)
			key_apply(xport_of(i), host, pqpn, deny);
}

/*
 * The one receive-side key of a learned half: its source's frames to the
 * QP, on the source's tenant port (out) or from the source's host on each
 * uplink (in).  The frames the other way are another half's.
 */
static void
half_apply(const struct ovl *o, const struct ovl_conn *c, bool deny)
{
	const struct ovl_qp *h = &o->qps[c->l];
	const struct ovl_endpoint *se = &o->endpoints[c->src_ep];

	if (c->half == OVL_HALF_OUT)
		key_apply(xport_of(se->port), &se->vip, h->vqpn, deny);
	else
		uplinks_apply(&se->host, h->pqpn, deny);
}

/*
 * Every receive-side key of c: from the fabric (R's host, L's pqpn) on each
 * uplink; from a local end's tenant port (its vIP, the peer's vQPN).
 */
static void
conn_apply(const struct ovl *o, const struct ovl_conn *c, bool deny)
{
	const struct ovl_qp *l = &o->qps[c->l], *r = &o->qps[c->r];
	const struct ovl_endpoint *le = &o->endpoints[l->endpoint], *re = &o->endpoints[r->endpoint];

	if (c->half) {
		half_apply(o, c, deny);
		return;
	}
	if (!c->hairpin)
		uplinks_apply(&re->host, l->pqpn, deny);
	if (le->local)
		key_apply(xport_of(le->port), &le->vip, r->vqpn, deny);
	if (re->local)
		key_apply(xport_of(re->port), &re->vip, l->vqpn, deny);
}

static bool
conn_revoked(const struct ovl_conn *c)
{
	return __atomic_load_n(&dp_conn_state(c->state)->ingress.revoked, __ATOMIC_ACQUIRE) != 0;
}

int
dp_xdp_port_prepare(uint16_t port_id, const char *name)
{
	struct rte_eth_dev_info info;
	struct xdp_port *p = &xports[port_id];

	if (!dp_xdp_is_af_xdp(port_id) || rte_eth_dev_info_get(port_id, &info) != 0)
		return 0;
	pthread_mutex_lock(&xlock);
	p->is_af_xdp = true;
	p->ifindex = (int)info.if_index;
	snprintf(p->name, sizeof(p->name), "%s", name);
	if (if_indextoname((unsigned int)p->ifindex, p->ifname) == NULL ||
	    promisc(p->ifname, false, false, &p->was_promisc) < 0) {
		pthread_mutex_unlock(&xlock);
		fprintf(stderr, "port %s: net_af_xdp interface %d is gone\n", name, p->ifindex);
		return -1;
	}
	p->prepared = true;
	pthread_mutex_unlock(&xlock);
	return 0;
}

/*
 * ROCE_XDP_MODE=generic or native overrides the mode net_af_xdp chose
 * (native where the driver has it).  On a veth, native XDP takes TSO away
 * from the peer and halves the kernel's TCP throughput; generic does not.
 */
static unsigned int
mode_flags(void)
{
	const char *m = getenv("ROCE_XDP_MODE");

	if (m != NULL && strcmp(m, "generic") == 0)
		return ROCE_XDP_F_SKB;
	if (m != NULL && strcmp(m, "native") == 0)
		return ROCE_XDP_F_DRV;
	return 0;
}

/* Does some port's deny map hold entries (else allowing a key needs no system call)?  Under xlock. */
static bool
deny_map_any(void)
{
	for (uint16_t i = 0; i < dp.n_ports; i++)
		if (xport_of(i) != NULL && roce_xdp_deny_count(xport_of(i)->x) > 0)
			return true;
	return false;
}

int
dp_xdp_port_start(uint16_t port_id, const struct ovl *o)
{
	struct xdp_port *p = &xports[port_id];
	char err[512] = "";
	int rc;

	if (!p->is_af_xdp)
		return 0;
	pthread_mutex_lock(&xlock);
	rc = roce_xdp_adopt(p->ifindex, mode_flags(), &p->x, err, sizeof(err));
	if (rc == -ENOENT) {
		/* Someone else's program (xdp_prog= of the operator's): it stays theirs. */
		fprintf(stderr, "port %s (%s): the XDP program is not ours: no deny map, no /roce/xdp counters\n",
			p->name, p->ifname);
		pthread_mutex_unlock(&xlock);
		return 0;
	}
	if (rc < 0) {
		fprintf(stderr, "port %s: %s\n", p->name, err);
		pthread_mutex_unlock(&xlock);
		return -1;
	}
	if (err[0] != '\0')
		fprintf(stderr, "port %s: %s\n", p->name, err);
	roce_xdp_port_set(p->x, o != NULL ? o->udp_port : 0);
	for (uint32_t i = 0; o != NULL && i < o->n_conns; i++)
		if (ovl_live(&o->conns[i]) && (o->conns[i].acl_block || conn_revoked(&o->conns[i])))
			conn_apply(o, &o->conns[i], true);
	pthread_mutex_unlock(&xlock);
	return 0;
}

void
dp_xdp_port_stop(uint16_t port_id)
{
	struct xdp_port *p = &xports[port_id];

	if (!p->is_af_xdp)
		return;
	uint64_t v[ROCE_XDP_CTR_COUNT];

	pthread_mutex_lock(&xlock);
	if (p->x != NULL && roce_xdp_stats_read(p->x, v) == 0)
		denied_stopped += v[ROCE_XDP_CTR_DENIED];
	roce_xdp_free(p->x);
	p->x = NULL;
	/* net_af_xdp set IFF_PROMISC for rte_eth_promiscuous_enable(): undo it. */
	if (p->prepared && !p->was_promisc)
		promisc(p->ifname, true, false, NULL);
	p->is_af_xdp = false;
	pthread_mutex_unlock(&xlock);
}

void
dp_xdp_conn_deny(const struct ovl *o, const struct ovl_conn *c, bool deny)
{
	pthread_mutex_lock(&xlock);
	conn_apply(o, c, deny);
	pthread_mutex_unlock(&xlock);
}

/* (R's host, L's pqpn) of c as bytes, for finding a connection in another overlay. */
struct fkey {
	uint8_t ver;
	uint8_t b[16];
	uint32_t qpn;
};

static int
fkey_cmp(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct fkey));
}

static void
fkey_of(const struct ovl *o, const struct ovl_conn *c, struct fkey *k)
{
	memset(k, 0, sizeof(*k));
	k->ver = o->endpoints[o->qps[c->r].endpoint].host.ver;
	memcpy(k->b, o->endpoints[o->qps[c->r].endpoint].host.b, 16);
	k->qpn = o->qps[c->l].pqpn;
}

/*
 * A removed connection's keys: denied, so that its frames stop in the
 * driver; but a learning tenant's frames to a connection no longer there
 * are what its switch learns from, so they are let through (a deny of its
 * revocation undone, where @any map holds entries).  @learns: the tenant
 * learns before or after.
 */
static void
conn_removed(const struct ovl *old, const struct ovl_conn *c, bool learns, bool any)
{
	if (!learns || any)
		conn_apply(old, c, !learns);
}

/* Per tenant of @old: does it learn in @old or, by its name, in @o?  NULL without memory. */
static bool *
tenants_learning(const struct ovl *o, const struct ovl *old)
{
	bool *l = calloc(old->n_tenants + 1, sizeof(*l));

	for (uint32_t t = 0; l != NULL && t < old->n_tenants; t++) {
		l[t] = old->tenants[t].qp_learning;
		for (uint32_t u = 0; !l[t] && u < o->n_tenants; u++)
			l[t] = o->tenants[u].qp_learning && !strcmp(o->tenants[u].name, old->tenants[t].name);
	}
	return l;
}

void
dp_xdp_reload(const struct ovl *o, const struct ovl *old)
{
	struct fkey *keys = NULL, k;
	bool any = false, *learns = NULL;

	pthread_mutex_lock(&xlock);
	for (uint16_t i = 0; i < dp.n_ports; i++) {
		struct xdp_port *p = xport_of(i);

		if (p != NULL)
			roce_xdp_port_set(p->x, o->udp_port);
	}
	uint32_t n_keys = 0;

	if (old != NULL && o->n_conns > 0)
		keys = malloc(sizeof(*keys) * o->n_conns);
	if (keys != NULL) {
		/* A half's one key is of another kind (half_apply()); the present loop allows it. */
		for (uint32_t i = 0; i < o->n_conns; i++)
			if (ovl_live(&o->conns[i]) && !o->conns[i].half)
				fkey_of(o, &o->conns[i], &keys[n_keys++]);
		qsort(keys, n_keys, sizeof(*keys), fkey_cmp);
	}
	if (old != NULL) {
		learns = tenants_learning(o, old);
		any = deny_map_any();
	}
	/* Removed connections (a tenant gone, a QP gone): their frames stop in the driver. */
	for (uint32_t i = 0; old != NULL && i < old->n_conns; i++) {
		const struct ovl_conn *c = &old->conns[i];

		if (!ovl_live(c))
			continue;
		fkey_of(old, c, &k);
		if (c->half || keys == NULL || bsearch(&k, keys, n_keys, sizeof(*keys), fkey_cmp) == NULL)
			conn_removed(old, c, learns == NULL || learns[c->tenant], any);
	}
	free(learns);
	/*
	 * Present ones: denied while blocked or revoked, allowed otherwise
	 * (one system call per key and port: skipped while no map has entries).
	 */
	any = deny_map_any();
	for (uint32_t i = 0; i < o->n_conns; i++) {
		const struct ovl_conn *c = &o->conns[i];
		bool deny = c->acl_block || conn_revoked(c);

		if (ovl_live(c) && (deny || any))
			conn_apply(o, c, deny);
	}
	free(keys);
	pthread_mutex_unlock(&xlock);
}

void
dp_xdp_changes(const struct ovl *o, const struct ovl *old, const struct ovl_inc_conn *ch, uint32_t n)
{
	bool any, ours = false;

	pthread_mutex_lock(&xlock);
	for (uint16_t i = 0; i < dp.n_ports; i++)
		ours |= xport_of(i) != NULL;
	/*
	 * Removed connections: denied in the driver (a changed one keeps its
	 * key, below).  A change in place keeps the tenants' indices.
	 */
	any = ours && deny_map_any();
	for (uint32_t i = 0; i < n && ours; i++) {
		const struct ovl_conn *c = ch[i].to == OVL_NONE ? &old->conns[ch[i].from] : NULL;

		if (c != NULL)
			conn_removed(old, c, old->tenants[c->tenant].qp_learning || o->tenants[c->tenant].qp_learning,
				     any);
	}
	/* After the removals: a new connection may take the key of one removed in this batch. */
	any = ours && deny_map_any();
	for (uint32_t i = 0; i < n; i++) {
		const struct ovl_conn *c;
		bool deny;

		if (ch[i].to == OVL_NONE || !ours)
			continue;
		c = &o->conns[ch[i].to];
		deny = c->acl_block || conn_revoked(c);
		if (deny || any)
			conn_apply(o, c, deny);
	}
	pthread_mutex_unlock(&xlock);
}

uint64_t
dp_xdp_denied_total(void)
{
	uint64_t v[ROCE_XDP_CTR_COUNT], sum;

	pthread_mutex_lock(&xlock);
	sum = denied_stopped;
	for (uint32_t i = 0; i < RTE_MAX_ETHPORTS; i++)
		if (xports[i].x != NULL && roce_xdp_stats_read(xports[i].x, v) == 0)
			sum += v[ROCE_XDP_CTR_DENIED];
	pthread_mutex_unlock(&xlock);
	return sum;
}

/* Telemetry keys hold letters, digits and '_' only (as /roce/offload's). */
static void
tel_key(const char *name, char *key, size_t len)
{
	size_t i;

	for (i = 0; name[i] != '\0' && i + 1 < len; i++)
		key[i] = ((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
			  (name[i] >= '0' && name[i] <= '9')) ? name[i] : '_';
	key[i] = '\0';
}

/*
 * /roce/xdp: {"ports": {KEY: {...}}} for each net_af_xdp port, KEY its
 * name made a telemetry key: its name, interface, our program's id, attach
 * mode and kind, the program's counters and the deny map's size.
 */
static int
tel_xdp(const char *cmd __rte_unused, const char *params __rte_unused, struct rte_tel_data *d)
{
	struct rte_tel_data *ports = rte_tel_data_alloc();
	char key[64];

	if (ports == NULL)
		return -ENOMEM;
	rte_tel_data_start_dict(d);
	rte_tel_data_start_dict(ports);
	pthread_mutex_lock(&xlock);
	for (uint32_t i = 0; i < RTE_MAX_ETHPORTS; i++) {
		struct xdp_port *p = &xports[i];
		uint64_t v[ROCE_XDP_CTR_COUNT];
		struct rte_tel_data *c;

		if (!p->is_af_xdp || (c = rte_tel_data_alloc()) == NULL)
			continue;
		rte_tel_data_start_dict(c);
		rte_tel_data_add_dict_string(c, "name", p->name);
		rte_tel_data_add_dict_string(c, "iface", p->ifname);
		rte_tel_data_add_dict_int(c, "ifindex", p->ifindex);
		rte_tel_data_add_dict_string(c, "program", p->x != NULL ? "roce_xdp" : "not ours");
		if (p->x != NULL) {
			rte_tel_data_add_dict_u64(c, "prog_id", roce_xdp_prog_id(p->x));
			rte_tel_data_add_dict_string(c, "mode", roce_xdp_mode_name(roce_xdp_mode(p->x)));
			rte_tel_data_add_dict_string(c, "attach", roce_xdp_is_link(p->x) ? "link" : "netlink");
			if (roce_xdp_stats_read(p->x, v) == 0)
				for (int k = 0; k < ROCE_XDP_CTR_COUNT; k++)
					rte_tel_data_add_dict_u64(c, roce_xdp_counter_name(k), v[k]);
			rte_tel_data_add_dict_u64(c, "deny_entries", roce_xdp_deny_count(p->x));
		}
		tel_key(p->name, key, sizeof(key));
		if (rte_tel_data_add_dict_container(ports, key, c, 0) != 0)
			rte_tel_data_free(c);
	}
	pthread_mutex_unlock(&xlock);
	if (rte_tel_data_add_dict_container(d, "ports", ports, 0) != 0)
		rte_tel_data_free(ports);
	return 0;
}

int
dp_xdp_telemetry_init(void)
{
	return rte_telemetry_register_cmd("/roce/xdp", tel_xdp,
		"net_af_xdp ports: XDP program id, attach mode, counters, deny entries. No parameters");
}
