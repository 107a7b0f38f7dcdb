/*
 * A fake libibverbs.so.1 for rocetop's verbs build, loaded through LD_LIBRARY_PATH, so the real
 * ffi.rs, rdma-sys's inline ops (post_send, post_recv, poll_cq through ctx->ops) and the
 * hand-written layouts run without an RDMA NIC.
 *
 * $FAKE_VERBS_DEVICES devices (default 1, at most 4), "fakerxe0", "fakerxe1", ..., port 1, RoCE.
 * Each one's GID table is read from a fake sysfs tree
 * ($FAKE_VERBS_SYSFS/class/infiniband/<device>/ports/1/gids/N), the tree rocetop's GID selection
 * reads too; the wire joins QPs of every device. The wire: each QP binds a Unix datagram socket $FAKE_VERBS_DIR/qp-<qpn>; a send goes
 * to the destination QPN's socket stamped with its send time and is delivered by the receiver's
 * poll_cq no sooner than $FAKE_VERBS_DELAY_US later; every $FAKE_VERBS_DROP_EVERY-th send is lost
 * on the wire, and, as an RC QP resends what is not acknowledged, delivered after the QP's local
 * ACK timeout (4.096 us x 2^timeout, set at RTS) instead; so is the first send after a test creates
 * the file $FAKE_VERBS_DIR/drop-next (removed when it drops one). A UD QP resends nothing: its
 * dropped send is lost. UD sends go to the work request's remote QPN through an address handle
 * (checked as the RC path: GRH, port, sgid_index); a UD receive gets the 40-byte GRH first.
 * Opening the device and bringing a QP to RTR each take $FAKE_VERBS_SETUP_MS (default 20), about
 * what a real NIC takes.
 *
 * Checked as the kernel does: each modify_qp transition against the RC or UD state/attribute table
 * (required and allowed masks), a GRH on RoCE, the sgid_index against the fake sysfs tree, port 1.
 * A parent destroyed before its children (PD with MR/QP, CQ with QP, context with PD/CQ) is
 * refused with EBUSY and logged as "VIOLATION" to $FAKE_VERBS_LOG (and stderr); each device open and
 * close is logged there too ("OPEN fakerxe0", "CLOSE fakerxe0"), so a test can count them.
 * After $FAKE_VERBS_GID_CHANGE_AFTER sends, one IBV_EVENT_GID_CHANGE for port 1 is raised; so is one
 * at the first send after a test creates the file $FAKE_VERBS_DIR/gid-change (removed when raised).
 * Each raised event is logged ("EVENT GID_CHANGE").
 */
#define _GNU_SOURCE
#include <infiniband/verbs.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#undef ibv_get_device_list
#undef ibv_query_port
#undef ibv_reg_mr

#define MAX_DEVS 4
#define MAX_RQ 64
#define MAX_PENDING 64
#define MAX_MSG 256
#define GRH_LEN 40

struct msg {
	uint64_t sent_ns; /* when it is on the wire: its post, or its resend */
	uint32_t len;
	uint8_t data[MAX_MSG];
};

struct fake_ctx {
	struct ibv_context ctx;
	int pds, cqs;
	int event_w; /* write end of the async pipe */
};

struct fake_pd {
	struct ibv_pd pd;
	int children;
};

struct fake_ah {
	struct ibv_ah ah;
};

struct fake_qp;

struct fake_cq {
	struct ibv_cq cq;
	int qps;
	struct ibv_wc wc[MAX_PENDING];
	int n;
	struct fake_qp *members[16];
	int nmembers;
};

struct recv_wr {
	uint64_t wr_id;
	uint64_t addr;
	uint32_t length;
};

struct fake_qp {
	struct ibv_qp qp;
	int sock;
	char path[108];
	uint32_t dest_qpn;
	uint8_t timeout;
	uint32_t max_recv;
	struct recv_wr rq[MAX_RQ];
	int nrq;
	struct msg pending[MAX_PENDING];
	int npending;
};

static struct ibv_device devices[MAX_DEVS];
static uint32_t next_qpn;
static unsigned long sends;

static const char *env(const char *k, const char *dflt)
{
	const char *v = getenv(k);
	return v && *v ? v : dflt;
}

static long env_num(const char *k, long dflt)
{
	return strtol(env(k, ""), NULL, 10) ?: dflt;
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void setup_pause(void)
{
	long ms = env_num("FAKE_VERBS_SETUP_MS", 20);
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
	if (ms > 0)
		nanosleep(&ts, NULL);
}

/* One line to $FAKE_VERBS_LOG, which tests read: "VIOLATION ...", "OPEN <device>", "CLOSE <device>". */
static void log_line(const char *line)
{
	const char *log = getenv("FAKE_VERBS_LOG");
	if (log) {
		FILE *f = fopen(log, "a");
		if (f) {
			fprintf(f, "%s\n", line);
			fclose(f);
		}
	}
}

static void violation(const char *fmt, ...)
{
	char line[256], out[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "fake-verbs: VIOLATION %s\n", line);
	snprintf(out, sizeof(out), "VIOLATION %s", line);
	log_line(out);
}

/* GID `index` of port 1 of `dev` from the fake sysfs tree: 0 when set, -1 when absent or all
 * zero. */
static int sysfs_gid(const char *dev, int index, uint8_t out[16])
{
	char p[512], text[128];
	snprintf(p, sizeof(p), "%s/class/infiniband/%s/ports/1/gids/%d",
		 env("FAKE_VERBS_SYSFS", "/nonexistent"), dev, index);
	FILE *f = fopen(p, "r");
	if (!f)
		return -1;
	int ok = fgets(text, sizeof(text), f) != NULL;
	fclose(f);
	if (!ok)
		return -1;
	text[strcspn(text, "\n")] = 0;
	struct in6_addr a;
	if (inet_pton(AF_INET6, text, &a) != 1)
		return -1;
	memcpy(out, &a, 16);
	static const uint8_t zero[16];
	return memcmp(out, zero, 16) ? 0 : -1;
}

struct ibv_device **ibv_get_device_list(int *num)
{
	int n = atoi(env("FAKE_VERBS_DEVICES", "1"));
	if (n < 1 || n > MAX_DEVS)
		n = 1;
	struct ibv_device **l = calloc(n + 1, sizeof(*l));
	if (!l) {
		errno = ENOMEM;
		return NULL;
	}
	for (int i = 0; i < n; i++) {
		struct ibv_device *d = &devices[i];
		snprintf(d->name, sizeof(d->name), "fakerxe%d", i);
		snprintf(d->dev_name, sizeof(d->dev_name), "uverbs%d", i);
		d->node_type = IBV_NODE_CA;
		d->transport_type = IBV_TRANSPORT_IB;
		l[i] = d;
	}
	if (num)
		*num = n;
	return l;
}

void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

const char *ibv_get_device_name(struct ibv_device *d)
{
	return d->name;
}

static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
static int fake_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
static int fake_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);

struct ibv_context *ibv_open_device(struct ibv_device *d)
{
	struct fake_ctx *c = calloc(1, sizeof(*c));
	int fds[2];
	if (!c || pipe2(fds, O_NONBLOCK | O_CLOEXEC)) {
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	setup_pause();
	char line[128];
	snprintf(line, sizeof(line), "OPEN %s", d->name);
	log_line(line);
	c->ctx.device = d;
	c->ctx.cmd_fd = -1;
	c->ctx.async_fd = fds[0];
	c->event_w = fds[1];
	c->ctx.num_comp_vectors = 1;
	/* Not an extended verbs_context: rdma-sys's ___ibv_query_port takes the compat symbol. */
	c->ctx.abi_compat = NULL;
	c->ctx.ops.post_send = fake_post_send;
	c->ctx.ops.post_recv = fake_post_recv;
	c->ctx.ops.poll_cq = fake_poll_cq;
	return &c->ctx;
}

int ibv_close_device(struct ibv_context *ctx)
{
	struct fake_ctx *c = (struct fake_ctx *)ctx;
	if (c->pds || c->cqs) {
		violation("context closed with %d PDs and %d CQs alive", c->pds, c->cqs);
		return EBUSY;
	}
	char line[128];
	snprintf(line, sizeof(line), "CLOSE %s", ctx->device->name);
	log_line(line);
	close(c->ctx.async_fd);
	close(c->event_w);
	free(c);
	return 0;
}

/* The compat entry point: the caller's struct is at least _compat_ibv_port_attr. */
int ibv_query_port(struct ibv_context *ctx, uint8_t port, struct _compat_ibv_port_attr *out)
{
	(void)ctx;
	if (port != 1)
		return EINVAL;
	struct ibv_port_attr *a = (struct ibv_port_attr *)out;
	a->state = IBV_PORT_ACTIVE;
	a->max_mtu = IBV_MTU_4096;
	a->active_mtu = IBV_MTU_1024;
	a->gid_tbl_len = 16;
	a->max_msg_sz = 1 << 30;
	a->lid = 0;
	a->link_layer = IBV_LINK_LAYER_ETHERNET;
	return 0;
}

int ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid)
{
	if (port != 1 || sysfs_gid(ctx->device->name, index, gid->raw))
		return EINVAL;
	return 0;
}

struct ibv_pd *ibv_alloc_pd(struct ibv_context *ctx)
{
	struct fake_pd *p = calloc(1, sizeof(*p));
	if (!p) {
		errno = ENOMEM;
		return NULL;
	}
	p->pd.context = ctx;
	((struct fake_ctx *)ctx)->pds++;
	return &p->pd;
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct fake_pd *p = (struct fake_pd *)pd;
	if (p->children) {
		violation("PD deallocated with %d MRs/QPs alive", p->children);
		return EBUSY;
	}
	((struct fake_ctx *)pd->context)->pds--;
	free(p);
	return 0;
}

struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
	(void)access;
	struct ibv_mr *m = calloc(1, sizeof(*m));
	if (!m) {
		errno = ENOMEM;
		return NULL;
	}
	m->context = pd->context;
	m->pd = pd;
	m->addr = addr;
	m->length = len;
	m->lkey = m->rkey = 0x1234;
	((struct fake_pd *)pd)->children++;
	return m;
}

int ibv_dereg_mr(struct ibv_mr *m)
{
	((struct fake_pd *)m->pd)->children--;
	free(m);
	return 0;
}

struct ibv_cq *ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
			     struct ibv_comp_channel *channel, int comp_vector)
{
	(void)channel;
	(void)comp_vector;
	struct fake_cq *q = calloc(1, sizeof(*q));
	if (!q) {
		errno = ENOMEM;
		return NULL;
	}
	q->cq.context = ctx;
	q->cq.cq_context = cq_context;
	q->cq.cqe = cqe;
	((struct fake_ctx *)ctx)->cqs++;
	return &q->cq;
}

int ibv_destroy_cq(struct ibv_cq *cq)
{
	struct fake_cq *q = (struct fake_cq *)cq;
	if (q->qps) {
		violation("CQ destroyed with %d QPs alive", q->qps);
		return EBUSY;
	}
	((struct fake_ctx *)cq->context)->cqs--;
	free(q);
	return 0;
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *init)
{
	if ((init->qp_type != IBV_QPT_RC && init->qp_type != IBV_QPT_UD) || !init->send_cq || !init->recv_cq ||
	    init->send_cq != init->recv_cq || init->cap.max_recv_wr > MAX_RQ) {
		errno = EINVAL;
		return NULL;
	}
	struct fake_qp *q = calloc(1, sizeof(*q));
	if (!q) {
		errno = ENOMEM;
		return NULL;
	}
	struct fake_cq *cq = (struct fake_cq *)init->send_cq;
	if (cq->nmembers >= 16) {
		free(q);
		errno = ENOMEM;
		return NULL;
	}
	q->qp.context = pd->context;
	q->qp.pd = pd;
	q->qp.send_cq = q->qp.recv_cq = init->send_cq;
	q->qp.qp_type = init->qp_type;
	q->qp.state = IBV_QPS_RESET;
	q->qp.qp_num = ((uint32_t)getpid() & 0xffff) << 8 | (__atomic_add_fetch(&next_qpn, 1, __ATOMIC_RELAXED) & 0xff);
	q->max_recv = init->cap.max_recv_wr;
	q->sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(q->path, sizeof(q->path), "%s/qp-%u", env("FAKE_VERBS_DIR", "/tmp"),
		 q->qp.qp_num);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", q->path);
	unlink(q->path);
	if (q->sock < 0 || bind(q->sock, (struct sockaddr *)&sa, sizeof(sa))) {
		if (q->sock >= 0)
			close(q->sock);
		free(q);
		errno = EIO;
		return NULL;
	}
	cq->members[cq->nmembers++] = q;
	cq->qps++;
	((struct fake_pd *)pd)->children++;
	return &q->qp;
}

int ibv_destroy_qp(struct ibv_qp *qp)
{
	struct fake_qp *q = (struct fake_qp *)qp;
	struct fake_cq *cq = (struct fake_cq *)qp->send_cq;
	for (int i = 0; i < cq->nmembers; i++)
		if (cq->members[i] == q) {
			cq->members[i] = cq->members[--cq->nmembers];
			break;
		}
	cq->qps--;
	((struct fake_pd *)qp->pd)->children--;
	close(q->sock);
	unlink(q->path);
	free(q);
	return 0;
}

/* The kernel's RC transitions (core/verbs.c qp_state_table): required and optional attributes. */
struct transition {
	enum ibv_qp_state from, to;
	int required, optional;
};

static const struct transition rc_table[] = {
	{IBV_QPS_RESET, IBV_QPS_INIT,
	 IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, 0},
	{IBV_QPS_INIT, IBV_QPS_RTR,
	 IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
	     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
	 IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX},
	{IBV_QPS_RTR, IBV_QPS_RTS,
	 IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
	     IBV_QP_MAX_QP_RD_ATOMIC,
	 IBV_QP_CUR_STATE | IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS | IBV_QP_MIN_RNR_TIMER |
	     IBV_QP_PATH_MIG_STATE},
};

/* The same for UD: a Q_Key at INIT, no path at RTR (each send names its address handle). */
static const struct transition ud_table[] = {
	{IBV_QPS_RESET, IBV_QPS_INIT, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY, 0},
	{IBV_QPS_INIT, IBV_QPS_RTR, IBV_QP_STATE, IBV_QP_PKEY_INDEX | IBV_QP_QKEY},
	{IBV_QPS_RTR, IBV_QPS_RTS, IBV_QP_STATE | IBV_QP_SQ_PSN, IBV_QP_CUR_STATE | IBV_QP_QKEY},
};

/* A path as the kernel accepts it on RoCE: a GRH, port 1, a source GID that exists. */
static int bad_path(const char *dev, const struct ibv_ah_attr *ah)
{
	uint8_t g[16];
	return !ah->is_global || ah->port_num != 1 || sysfs_gid(dev, ah->grh.sgid_index, g);
}

struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	if (bad_path(pd->context->device->name, attr)) {
		errno = EINVAL;
		return NULL;
	}
	struct fake_ah *h = calloc(1, sizeof(*h));
	if (!h) {
		errno = ENOMEM;
		return NULL;
	}
	h->ah.context = pd->context;
	h->ah.pd = pd;
	((struct fake_pd *)pd)->children++;
	return &h->ah;
}

int ibv_destroy_ah(struct ibv_ah *ah)
{
	((struct fake_pd *)ah->pd)->children--;
	free(ah);
	return 0;
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask)
{
	struct fake_qp *q = (struct fake_qp *)qp;
	if (!(mask & IBV_QP_STATE))
		return EINVAL;
	const struct transition *t = NULL;
	const struct transition *table = qp->qp_type == IBV_QPT_UD ? ud_table : rc_table;
	for (size_t i = 0; i < 3; i++)
		if (table[i].from == qp->state && table[i].to == a->qp_state)
			t = &table[i];
	if (!t || (mask & t->required) != t->required ||
	    (mask & ~(t->required | t->optional)))
		return EINVAL;
	if ((mask & IBV_QP_PORT) && a->port_num != 1)
		return EINVAL;
	if (a->qp_state == IBV_QPS_RTR && qp->qp_type == IBV_QPT_RC) {
		/* RoCE addresses by GID: no GRH, no packet; the source GID must exist. */
		if (bad_path(qp->context->device->name, &a->ah_attr) || a->path_mtu < IBV_MTU_256 ||
		    a->path_mtu > IBV_MTU_4096)
			return EINVAL;
		q->dest_qpn = a->dest_qp_num;
	}
	if (a->qp_state == IBV_QPS_RTR)
		setup_pause();
	if (mask & IBV_QP_TIMEOUT)
		q->timeout = a->timeout;
	qp->state = a->qp_state;
	return 0;
}

static void complete(struct fake_cq *cq, uint64_t wr_id, enum ibv_wc_opcode op, uint32_t len,
		     uint32_t qpn)
{
	if (cq->n >= MAX_PENDING)
		return;
	struct ibv_wc *w = &cq->wc[cq->n++];
	memset(w, 0, sizeof(*w));
	w->wr_id = wr_id;
	w->status = IBV_WC_SUCCESS;
	w->opcode = op;
	w->byte_len = len;
	w->qp_num = qpn;
}

static void raise_event(struct ibv_context *ctx, enum ibv_event_type ty, int port)
{
	if (ty == IBV_EVENT_GID_CHANGE)
		log_line("EVENT GID_CHANGE");
	struct ibv_async_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.event_type = ty;
	ev.element.port_num = port;
	if (write(((struct fake_ctx *)ctx)->event_w, &ev, sizeof(ev)) != sizeof(ev))
		violation("async event lost");
}

static int fake_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct fake_qp *q = (struct fake_qp *)qp;
	for (; wr; wr = wr->next) {
		int ud = qp->qp_type == IBV_QPT_UD;
		if (qp->state != IBV_QPS_RTS || wr->opcode != IBV_WR_SEND || wr->num_sge != 1 ||
		    wr->sg_list[0].length > MAX_MSG || (ud && !wr->wr.ud.ah)) {
			*bad = wr;
			return EINVAL;
		}
		uint32_t dest = ud ? wr->wr.ud.remote_qpn : q->dest_qpn;
		struct msg m = {.sent_ns = now_ns(), .len = wr->sg_list[0].length};
		/* Inline: the bytes are taken now, as a provider copies them at post time. */
		memcpy(m.data, (void *)(uintptr_t)wr->sg_list[0].addr, m.len);
		long k = (long)__atomic_add_fetch(&sends, 1, __ATOMIC_RELAXED);
		long drop = env_num("FAKE_VERBS_DROP_EVERY", 0);
		char drop_next[128];
		snprintf(drop_next, sizeof(drop_next), "%s/drop-next", env("FAKE_VERBS_DIR", "/tmp"));
		int dropped = (drop > 0 && k % drop == 0) || unlink(drop_next) == 0;
		if (dropped && !ud)
			/* Lost on the wire: the RC sender resends it once its ACK timeout passes. */
			m.sent_ns += 4096ull << q->timeout;
		if (!(dropped && ud)) {
			struct sockaddr_un sa = {.sun_family = AF_UNIX};
			snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/qp-%u",
				 env("FAKE_VERBS_DIR", "/tmp"), dest);
			sendto(q->sock, &m, sizeof(m.sent_ns) + sizeof(m.len) + m.len, 0,
			       (struct sockaddr *)&sa, sizeof(sa));
		}
		if (wr->send_flags & IBV_SEND_SIGNALED)
			complete((struct fake_cq *)qp->send_cq, wr->wr_id, IBV_WC_SEND, m.len,
				 qp->qp_num);
		char trigger[128];
		snprintf(trigger, sizeof(trigger), "%s/gid-change", env("FAKE_VERBS_DIR", "/tmp"));
		if (k == env_num("FAKE_VERBS_GID_CHANGE_AFTER", -1) || unlink(trigger) == 0)
			raise_event(qp->context, IBV_EVENT_GID_CHANGE, 1);
	}
	return 0;
}

static int fake_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct fake_qp *q = (struct fake_qp *)qp;
	for (; wr; wr = wr->next) {
		if (qp->state == IBV_QPS_RESET || wr->num_sge != 1 || q->nrq >= (int)q->max_recv) {
			*bad = wr;
			return q->nrq >= (int)q->max_recv ? ENOMEM : EINVAL;
		}
		q->rq[q->nrq++] = (struct recv_wr){wr->wr_id, wr->sg_list[0].addr,
						   wr->sg_list[0].length};
	}
	return 0;
}

static int fake_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct fake_cq *c = (struct fake_cq *)cq;
	uint64_t delay = (uint64_t)env_num("FAKE_VERBS_DELAY_US", 5) * 1000;
	for (int i = 0; i < c->nmembers; i++) {
		struct fake_qp *q = c->members[i];
		while (q->npending < MAX_PENDING) {
			struct msg *m = &q->pending[q->npending];
			if (recv(q->sock, m, sizeof(*m), 0) <= 0)
				break;
			q->npending++;
		}
		/* Deliver what is due into the receives posted, in order. */
		while (q->npending > 0 && q->nrq > 0 && now_ns() >= q->pending[0].sent_ns + delay) {
			struct msg *m = &q->pending[0];
			struct recv_wr r = q->rq[0];
			/* A UD receive starts with the GRH (zeros here: nobody reads it). */
			uint32_t grh = q->qp.qp_type == IBV_QPT_UD ? GRH_LEN : 0;
			uint32_t room = r.length > grh ? r.length - grh : 0;
			uint32_t len = m->len < room ? m->len : room;
			memset((void *)(uintptr_t)r.addr, 0, grh < r.length ? grh : r.length);
			memcpy((void *)(uintptr_t)(r.addr + grh), m->data, len);
			complete(c, r.wr_id, IBV_WC_RECV, len + grh, q->qp.qp_num);
			memmove(q->rq, q->rq + 1, --q->nrq * sizeof(q->rq[0]));
			memmove(q->pending, q->pending + 1, --q->npending * sizeof(q->pending[0]));
		}
	}
	int k = c->n < n ? c->n : n;
	memcpy(wc, c->wc, k * sizeof(*wc));
	memmove(c->wc, c->wc + k, (c->n - k) * sizeof(*wc));
	c->n -= k;
	return k;
}

int ibv_get_async_event(struct ibv_context *ctx, struct ibv_async_event *ev)
{
	return read(ctx->async_fd, ev, sizeof(*ev)) == sizeof(*ev) ? 0 : -1;
}

void ibv_ack_async_event(struct ibv_async_event *ev)
{
	(void)ev;
}

const char *ibv_wc_status_str(enum ibv_wc_status s)
{
	return s == IBV_WC_SUCCESS ? "success" : "fake error";
}

const char *ibv_event_type_str(enum ibv_event_type e)
{
	return e == IBV_EVENT_GID_CHANGE ? "GID table change" : "fake event";
}
