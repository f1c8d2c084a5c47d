/* The preamble of every C program `verbslab export-c` writes (app/scenario/export-c.ts): the checks, device
 * opening, polling and connecting helpers the exported steps call. */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

static int checks, failures;
int rc;
struct ibv_wc wcs[4096];

#define CHECK(step, cond, what) do { \
        checks++; \
        if (cond) printf("PASS step %d: %s\n", (step), (what)); \
        else { failures++; printf("FAIL step %d: %s\n", (step), (what)); goto out; } \
    } while (0)

/* Every scenario device opens the device named by $VERBSLAB_IBDEV (default: the first one), so two scenario
 * devices talk through one real device in loopback, like two ports of Soft-RoCE. */
__attribute__((unused)) static struct ibv_context *open_device(void)
{
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    const char *want = getenv("VERBSLAB_IBDEV");
    struct ibv_context *ctx = NULL;
    if (!list) return NULL;
    for (int i = 0; i < n && !ctx; i++)
        if (!want || !strcmp(ibv_get_device_name(list[i]), want)) ctx = ibv_open_device(list[i]);
    ibv_free_device_list(list);
    return ctx;
}

/* GID index of the RoCE v2 address to use ($VERBSLAB_GID_INDEX, default 1 as on Soft-RoCE). */
__attribute__((unused)) static int gid_index(void)
{
    const char *s = getenv("VERBSLAB_GID_INDEX");
    return s ? atoi(s) : 1;
}

/* Poll until n completions arrived or about two seconds passed; returns how many were polled. */
__attribute__((unused)) static int poll_cq_n(struct ibv_cq *cq, struct ibv_wc *wc, int n, int max)
{
    int got = 0;
    for (int spin = 0; spin < 2000 && got < n; spin++) {
        int r = ibv_poll_cq(cq, max - got, wc + got);
        if (r < 0) return r;
        got += r;
        if (got < n) poll(NULL, 0, 1);
    }
    if (got < max) { int r = ibv_poll_cq(cq, max - got, wc + got); if (r > 0) got += r; }
    return got;
}

/* Wait up to two seconds for an async event of the given type; acknowledges every event read. */
__attribute__((unused)) static int expect_async(struct ibv_context *ctx, enum ibv_event_type type)
{
    struct ibv_async_event ev;
    struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
    int fl = fcntl(ctx->async_fd, F_GETFL);
    fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
    for (int i = 0; i < 20; i++) {
        if (poll(&p, 1, 100) <= 0) continue;
        if (ibv_get_async_event(ctx, &ev)) continue;
        enum ibv_event_type t = ev.event_type;
        ibv_ack_async_event(&ev);
        if (t == type) return 1;
    }
    return 0;
}

/* Wait up to two seconds for a completion event on a channel; returns 0 and the CQ, or -1 (EAGAIN). */
__attribute__((unused)) static int get_cq_event(struct ibv_comp_channel *ch, struct ibv_cq **cq)
{
    void *cq_ctx;
    struct pollfd p = { .fd = ch->fd, .events = POLLIN };
    int fl = fcntl(ch->fd, F_GETFL);
    fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK);
    if (poll(&p, 1, 2000) <= 0) { errno = EAGAIN; return -1; }
    return ibv_get_cq_event(ch, cq, &cq_ctx);
}

/* The QP's state is `want` within `ms` milliseconds (polled every millisecond): 0, or the state it is in at the
 * deadline. A QP leaves RTS for ERR asynchronously, when the responder's NAK arrives or the retries run out (the
 * scenario's headless run had run the engine to idle by then); a program waits for it as for any asynchronous
 * outcome, with a deadline above the transport's own timers. */
__attribute__((unused)) static int wait_qp_state(struct ibv_qp *qp, enum ibv_qp_state want, int ms)
{
    struct ibv_qp_attr a;
    struct ibv_qp_init_attr init;
    for (int i = 0;; i++) {
        if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init)) return -1;
        if (a.qp_state == want || i >= ms) return a.qp_state == want ? 0 : (int)a.qp_state + 100;
        struct timespec t = { 0, 1000000 };
        nanosleep(&t, NULL);
    }
}

/* RESET -> INIT -> RTR -> RTS with rc_pingpong's attributes (PSN 0), like the console's "connect". */
__attribute__((unused)) static int modify_to_rts(struct ibv_qp *qp, struct ibv_context *peer_ctx, uint32_t peer_qpn,
                                                 int access, enum ibv_mtu mtu)
{
    struct ibv_qp_attr a;
    struct ibv_qp_init_attr init;
    if (ibv_query_qp(qp, &a, IBV_QP_STATE, &init)) return errno;
    int ud = init.qp_type == IBV_QPT_UD, rcq = init.qp_type == IBV_QPT_RC;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_INIT; a.pkey_index = 0; a.port_num = 1;
    if (ud) a.qkey = 0x11111111; else a.qp_access_flags = access;
    int r = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | (ud ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS));
    if (r) return r;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTR;
    int mask = IBV_QP_STATE;
    if (!ud) {
        a.path_mtu = mtu; a.dest_qp_num = peer_qpn; a.rq_psn = 0;
        a.ah_attr.is_global = 1; a.ah_attr.port_num = 1; a.ah_attr.grh.hop_limit = 1; a.ah_attr.grh.sgid_index = gid_index();
        if (ibv_query_gid(peer_ctx, 1, gid_index(), &a.ah_attr.grh.dgid)) return errno;
        mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
        if (rcq) { a.max_dest_rd_atomic = 1; a.min_rnr_timer = 12; mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER; }
    }
    r = ibv_modify_qp(qp, &a, mask);
    if (r) return r;
    memset(&a, 0, sizeof a);
    a.qp_state = IBV_QPS_RTS; a.sq_psn = 0;
    mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
    if (rcq) { a.timeout = 14; a.retry_cnt = 7; a.rnr_retry = 7; a.max_rd_atomic = 1;
               mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC; }
    return ibv_modify_qp(qp, &a, mask);
}

__attribute__((unused)) static void print_wcs(int step, const struct ibv_wc *wc, int n)
{
    for (int i = 0; i < n; i++)
        printf("     step %d: completion %d: %s (%d), opcode %d, byte_len %u, wr_id %llu, qp_num 0x%x, wc_flags 0x%x\n",
               step, i, ibv_wc_status_str(wc[i].status), (int)wc[i].status, (int)wc[i].opcode, wc[i].byte_len,
               (unsigned long long)wc[i].wr_id, wc[i].qp_num, (unsigned)wc[i].wc_flags);
}

__attribute__((unused)) static void dump(const char *what, uint64_t addr, size_t len)
{
    const uint8_t *p = (const uint8_t *)(uintptr_t)addr;
    printf("%s:", what);
    for (size_t i = 0; i < len; i++) printf(" %02x", p[i]);
    printf("\n");
}
