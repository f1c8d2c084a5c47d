// Self-test of native/libibverbs: an ordinary libibverbs program (Debian's <infiniband/verbs.h>, linked with
// -libverbs), run under `verbslab exec`. Two RC QPs of one device talk to each other over RoCEv2/UDP through the
// device's own address (loopback); every verb the library implements is called, with its error paths, and the bytes
// moved are compared. Prints "ok N - what" / "not ok N - what: why" lines; exits 1 if any check failed.
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static int n_checks, n_failed;
#define CHECK(cond, ...)                                                                    \
  do {                                                                                      \
    n_checks++;                                                                             \
    if (cond) { printf("ok %d - ", n_checks); printf(__VA_ARGS__); printf("\n"); }          \
    else { n_failed++; printf("not ok %d - ", n_checks); printf(__VA_ARGS__);               \
           printf(" (errno %d %s)\n", errno, strerror(errno)); }                             \
  } while (0)

enum { SZ = 65536 };
static struct ibv_context* ctx;
static struct ibv_pd* pd;
static struct ibv_cq *cqa, *cqb;
static struct ibv_qp *qa, *qb;
static struct ibv_mr *mra, *mrb;
static uint8_t *bufa, *bufb;
static union ibv_gid gid1;

// Polls cq until one completion arrives (or 5 s pass); returns 1 and fills wc.
static int wait_wc(struct ibv_cq* cq, struct ibv_wc* wc) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    int n = ibv_poll_cq(cq, 1, wc);
    if (n) return n;
    clock_gettime(CLOCK_MONOTONIC, &t);
    if (t.tv_sec - t0.tv_sec > 5) return 0;
  }
}

static struct ibv_qp* make_qp(struct ibv_cq* cq, struct ibv_srq* srq) {
  struct ibv_qp_init_attr ia = {.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = IBV_QPT_RC,
                                .cap = {.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 2, .max_recv_sge = 2}};
  return ibv_create_qp(pd, &ia);
}

static int connect_qp(struct ibv_qp* q, uint32_t remote_qpn) {
  struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
                          .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC};
  if (ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) return -1;
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTR; a.path_mtu = IBV_MTU_1024; a.dest_qp_num = remote_qpn; a.rq_psn = 0;
  a.max_dest_rd_atomic = 1; a.min_rnr_timer = 12;
  a.ah_attr.is_global = 1; a.ah_attr.grh.dgid = gid1; a.ah_attr.grh.sgid_index = 1; a.ah_attr.grh.hop_limit = 1;
  a.ah_attr.port_num = 1;
  if (ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                               IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) return -2;
  memset(&a, 0, sizeof a);
  a.qp_state = IBV_QPS_RTS; a.timeout = 14; a.retry_cnt = 7; a.rnr_retry = 7; a.sq_psn = 0; a.max_rd_atomic = 1;
  return ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                                  IBV_QP_MAX_QP_RD_ATOMIC) ? -3 : 0;
}

static int post_recv(struct ibv_qp* q, uint64_t id, void* addr, uint32_t len, uint32_t lkey) {
  struct ibv_sge s = {(uintptr_t)addr, len, lkey};
  struct ibv_recv_wr wr = {.wr_id = id, .sg_list = &s, .num_sge = 1}, *bad;
  return ibv_post_recv(q, &wr, &bad);
}

static int post_send(struct ibv_qp* q, enum ibv_wr_opcode op, uint64_t id, void* addr, uint32_t len, uint32_t lkey,
                     uint64_t raddr, uint32_t rkey, unsigned flags) {
  struct ibv_sge s = {(uintptr_t)addr, len, lkey};
  struct ibv_send_wr wr = {.wr_id = id, .sg_list = &s, .num_sge = 1, .opcode = op,
                           .send_flags = IBV_SEND_SIGNALED | flags}, *bad;
  wr.wr.rdma.remote_addr = raddr;
  wr.wr.rdma.rkey = rkey;
  return ibv_post_send(q, &wr, &bad);
}

static void device_checks(void) {
  int n = -1;
  struct ibv_device** list = ibv_get_device_list(&n);
  CHECK(list && n == 1, "ibv_get_device_list: one device");
  if (!list || n < 1) exit(1);
  CHECK(strncmp(ibv_get_device_name(list[0]), "vl", 2) == 0, "device name %s", ibv_get_device_name(list[0]));
  CHECK(ibv_get_device_guid(list[0]) != 0, "ibv_get_device_guid is not 0");
  ctx = ibv_open_device(list[0]);
  CHECK(ctx != NULL, "ibv_open_device");
  ibv_free_device_list(list);
  if (!ctx) exit(1);
  struct ibv_device_attr da;
  CHECK(ibv_query_device(ctx, &da) == 0 && da.phys_port_cnt == 1 && da.max_qp > 0, "ibv_query_device");
  struct ibv_device_attr_ex dx;
  CHECK(ibv_query_device_ex(ctx, NULL, &dx) == 0 && dx.orig_attr.max_cqe == da.max_cqe, "ibv_query_device_ex (verbs_context op)");
  struct ibv_port_attr pa;
  CHECK(ibv_query_port(ctx, 1, &pa) == 0 && pa.state == IBV_PORT_ACTIVE && pa.link_layer == IBV_LINK_LAYER_ETHERNET,
        "ibv_query_port 1: active, Ethernet");
  CHECK(ibv_query_port(ctx, 2, &pa) == EINVAL, "ibv_query_port 2: EINVAL");
  CHECK(ibv_query_gid(ctx, 1, 1, &gid1) == 0 && gid1.raw[10] == 0xff && gid1.raw[11] == 0xff && gid1.raw[12] == 127,
        "ibv_query_gid 1: ::ffff:127.x.x.x");
  union ibv_gid g;
  CHECK(ibv_query_gid(ctx, 1, 99, &g) == -1 && errno == EINVAL, "ibv_query_gid 99: -1, EINVAL");
  struct ibv_gid_entry ge;
  CHECK(ibv_query_gid_ex(ctx, 1, 1, &ge, 0) == 0 && ge.gid_type == IBV_GID_TYPE_ROCE_V2 && !memcmp(&ge.gid, &gid1, 16),
        "ibv_query_gid_ex 1: RoCE v2");
  struct ibv_gid_entry tab[8];
  CHECK(ibv_query_gid_table(ctx, tab, 8, 0) == pa.gid_tbl_len, "ibv_query_gid_table: %d entries", pa.gid_tbl_len);
  CHECK(ibv_query_gid_table(ctx, tab, 1, 0) == -EINVAL, "ibv_query_gid_table into 1 entry: -EINVAL");
  __be16 pkey;
  CHECK(ibv_query_pkey(ctx, 1, 0, &pkey) == 0 && be16toh(pkey) == 0xffff, "ibv_query_pkey 0: 0xffff");
  CHECK(ibv_fork_init() == 0 && ibv_is_fork_initialized() == IBV_FORK_UNNEEDED, "fork: unneeded (device in process)");
  CHECK(strcmp(ibv_wc_status_str(IBV_WC_REM_ACCESS_ERR), "remote access error") == 0, "ibv_wc_status_str");
}

static void memory_checks(void) {
  pd = ibv_alloc_pd(ctx);
  CHECK(pd != NULL, "ibv_alloc_pd");
  bufa = aligned_alloc(4096, SZ);
  bufb = aligned_alloc(4096, SZ);
  memset(bufa, 0, SZ);
  memset(bufb, 0, SZ);
  int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
  mra = ibv_reg_mr(pd, bufa, SZ, acc);
  mrb = ibv_reg_mr(pd, bufb, SZ, acc);
  CHECK(mra && mrb && mra->lkey != mrb->lkey && mra->addr == bufa && mra->length == SZ, "ibv_reg_mr over malloc'd memory");
  void* gone = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  munmap(gone, 8192);
  errno = 0;
  CHECK(ibv_reg_mr(pd, gone, 8192, IBV_ACCESS_LOCAL_WRITE) == NULL && errno == EFAULT, "ibv_reg_mr unmapped: EFAULT");
  errno = 0;
  CHECK(ibv_reg_mr(pd, bufa, SZ, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND) == NULL && errno == EOPNOTSUPP,
        "ibv_reg_mr ON_DEMAND: EOPNOTSUPP");
  errno = 0;
  CHECK(ibv_reg_mr(pd, bufa, SZ, IBV_ACCESS_REMOTE_WRITE) == NULL && errno == EINVAL,
        "ibv_reg_mr REMOTE_WRITE without LOCAL_WRITE: EINVAL");
  struct ibv_mr* iova = ibv_reg_mr_iova(pd, bufa, 4096, 0x10000, IBV_ACCESS_LOCAL_WRITE);
  CHECK(iova != NULL, "ibv_reg_mr_iova");
  if (iova) CHECK(ibv_dereg_mr(iova) == 0, "ibv_dereg_mr");
}

static void traffic_checks(void) {
  cqa = ibv_create_cq(ctx, 64, NULL, NULL, 0);
  cqb = ibv_create_cq(ctx, 64, NULL, NULL, 0);
  CHECK(cqa && cqb, "ibv_create_cq");
  CHECK(ibv_create_cq(ctx, 0, NULL, NULL, 0) == NULL && errno == EINVAL, "ibv_create_cq 0 entries: EINVAL");
  qa = make_qp(cqa, NULL);
  qb = make_qp(cqb, NULL);
  CHECK(qa && qb && qa->qp_num != qb->qp_num && qa->state == IBV_QPS_RESET, "ibv_create_qp RC x2");
  if (!qa || !qb) exit(1);
  CHECK(connect_qp(qa, qb->qp_num) == 0 && connect_qp(qb, qa->qp_num) == 0, "ibv_modify_qp RESET->INIT->RTR->RTS (both)");
  struct ibv_qp_attr qa_attr;
  struct ibv_qp_init_attr qa_init;
  CHECK(ibv_query_qp(qa, &qa_attr, IBV_QP_STATE, &qa_init) == 0 && qa_attr.qp_state == IBV_QPS_RTS &&
            qa_attr.dest_qp_num == qb->qp_num, "ibv_query_qp: RTS, dest_qp_num");
  struct ibv_wc wc;

  // SEND / RECV
  for (int i = 0; i < 3000; i++) bufa[i] = (uint8_t)(i * 7 + 1);
  CHECK(post_recv(qb, 11, bufb, 4096, mrb->lkey) == 0, "ibv_post_recv");
  CHECK(post_send(qa, IBV_WR_SEND, 12, bufa, 3000, mra->lkey, 0, 0, 0) == 0, "ibv_post_send SEND");
  CHECK(wait_wc(cqb, &wc) && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.wr_id == 11 &&
            wc.byte_len == 3000 && wc.qp_num == qb->qp_num, "RECV completion, byte_len 3000");
  CHECK(memcmp(bufa, bufb, 3000) == 0, "SEND: 3000 bytes arrived intact");
  CHECK(wait_wc(cqa, &wc) && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND && wc.wr_id == 12, "SEND completion");

  // RDMA WRITE with immediate
  for (int i = 0; i < SZ; i++) bufa[i] = (uint8_t)(i ^ 0x5a);
  CHECK(post_recv(qb, 21, NULL, 0, 0) == 0, "ibv_post_recv (no SGE) for WRITE_WITH_IMM");
  {
    struct ibv_sge s = {(uintptr_t)bufa, SZ / 2, mra->lkey};
    struct ibv_send_wr wr = {.wr_id = 22, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
                             .send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32(0x12345678)}, *bad;
    wr.wr.rdma.remote_addr = (uintptr_t)bufb + 100;
    wr.wr.rdma.rkey = mrb->rkey;
    CHECK(ibv_post_send(qa, &wr, &bad) == 0, "ibv_post_send RDMA_WRITE_WITH_IMM 32 KiB");
  }
  CHECK(wait_wc(cqb, &wc) && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
            (wc.wc_flags & IBV_WC_WITH_IMM) && be32toh(wc.imm_data) == 0x12345678, "RECV_RDMA_WITH_IMM, imm 0x12345678 (big-endian)");
  CHECK(memcmp(bufa, bufb + 100, SZ / 2) == 0, "WRITE: 32 KiB placed at the remote address");
  CHECK(wait_wc(cqa, &wc) && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_WRITE, "WRITE completion");

  // RDMA READ
  memset(bufa, 0, SZ);
  CHECK(post_send(qa, IBV_WR_RDMA_READ, 31, bufa, 8000, mra->lkey, (uintptr_t)bufb + 100, mrb->rkey, 0) == 0, "ibv_post_send RDMA_READ");
  CHECK(wait_wc(cqa, &wc) && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_READ && wc.byte_len == 8000, "READ completion");
  CHECK(memcmp(bufa, bufb + 100, 8000) == 0, "READ: 8000 bytes read back");

  // atomics
  uint64_t* target = (uint64_t*)(bufb + 4096);
  *target = 40;
  {
    struct ibv_sge s = {(uintptr_t)bufa, 8, mra->lkey};
    struct ibv_send_wr wr = {.wr_id = 41, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_ATOMIC_FETCH_AND_ADD,
                             .send_flags = IBV_SEND_SIGNALED}, *bad;
    wr.wr.atomic.remote_addr = (uintptr_t)target;
    wr.wr.atomic.rkey = mrb->rkey;
    wr.wr.atomic.compare_add = 2;
    CHECK(ibv_post_send(qa, &wr, &bad) == 0, "ibv_post_send ATOMIC_FETCH_AND_ADD");
    CHECK(wait_wc(cqa, &wc) && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_FETCH_ADD, "FETCH_ADD completion");
    CHECK(*(uint64_t*)bufa == 40 && *target == 42, "FETCH_ADD: original 40 returned, target now 42");
    wr.wr_id = 42; wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP; wr.wr.atomic.compare_add = 42; wr.wr.atomic.swap = 7;
    CHECK(ibv_post_send(qa, &wr, &bad) == 0 && wait_wc(cqa, &wc) && wc.status == IBV_WC_SUCCESS && *target == 7,
          "CMP_AND_SWP 42 -> 7");
  }

  // inline SEND
  {
    CHECK(post_recv(qb, 51, bufb, 64, mrb->lkey) == 0, "ibv_post_recv for inline");
    char msg[] = "inline payload";
    struct ibv_sge s = {(uintptr_t)msg, sizeof msg, 0};
    struct ibv_send_wr wr = {.wr_id = 52, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND,
                             .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE}, *bad;
    int r = ibv_post_send(qa, &wr, &bad);
    if (r == 0) {
      CHECK(wait_wc(cqb, &wc) && wc.status == IBV_WC_SUCCESS && !memcmp(bufb, msg, sizeof msg), "SEND_INLINE arrives");
      CHECK(wait_wc(cqa, &wc) && wc.status == IBV_WC_SUCCESS, "SEND_INLINE completion");
    } else {
      CHECK(r == EINVAL, "SEND_INLINE beyond max_inline_data: EINVAL");
    }
  }
}

static void channel_checks(void) {
  struct ibv_comp_channel* ch = ibv_create_comp_channel(ctx);
  CHECK(ch && ch->fd >= 0, "ibv_create_comp_channel: a real fd");
  int token = 0;
  struct ibv_cq* cq = ibv_create_cq(ctx, 16, &token, ch, 0);
  CHECK(cq != NULL, "ibv_create_cq with a channel");
  CHECK(ibv_destroy_comp_channel(ch) == EBUSY, "ibv_destroy_comp_channel while a CQ uses it: EBUSY");
  struct ibv_qp* q = make_qp(cq, NULL);
  struct ibv_qp* p = make_qp(cq, NULL);
  CHECK(q && p && connect_qp(q, p->qp_num) == 0 && connect_qp(p, q->qp_num) == 0, "QP pair on the channel's CQ");
  CHECK(ibv_req_notify_cq(cq, 0) == 0, "ibv_req_notify_cq");
  struct pollfd pf = {ch->fd, POLLIN, 0};
  CHECK(poll(&pf, 1, 0) == 0, "poll(): nothing before a completion");
  CHECK(post_send(q, IBV_WR_RDMA_WRITE, 61, bufa, 16, mra->lkey, (uintptr_t)bufb, mrb->rkey, 0) == 0, "WRITE on the armed CQ");
  CHECK(poll(&pf, 1, 5000) == 1 && (pf.revents & POLLIN), "poll(): the channel fd becomes readable");
  struct ibv_cq* ev_cq = NULL;
  void* ev_ctx = NULL;
  CHECK(ibv_get_cq_event(ch, &ev_cq, &ev_ctx) == 0 && ev_cq == cq && ev_ctx == &token, "ibv_get_cq_event: the CQ and its context");
  struct ibv_wc wc;
  CHECK(wait_wc(cq, &wc) && wc.wr_id == 61 && wc.status == IBV_WC_SUCCESS, "the completion behind the event");
  CHECK(ibv_destroy_cq(cq) == EBUSY, "ibv_destroy_cq with QPs: EBUSY");
  CHECK(ibv_destroy_qp(q) == 0 && ibv_destroy_qp(p) == 0, "ibv_destroy_qp");
  CHECK(ibv_destroy_cq(cq) == EBUSY, "ibv_destroy_cq with an unacknowledged event: EBUSY");
  ibv_ack_cq_events(cq, 1);
  CHECK(ibv_destroy_cq(cq) == 0, "ibv_ack_cq_events then ibv_destroy_cq");
  CHECK(ibv_destroy_comp_channel(ch) == 0, "ibv_destroy_comp_channel");
}

static void srq_checks(void) {
  struct ibv_srq_init_attr sa = {.attr = {.max_wr = 16, .max_sge = 1}};
  struct ibv_srq* srq = ibv_create_srq(pd, &sa);
  CHECK(srq != NULL, "ibv_create_srq");
  if (!srq) return;
  struct ibv_cq* cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
  struct ibv_qp* r = make_qp(cq, srq);
  struct ibv_qp* s = make_qp(cq, NULL);
  CHECK(r && s && connect_qp(r, s->qp_num) == 0 && connect_qp(s, r->qp_num) == 0, "QP on an SRQ connected");
  struct ibv_sge sg = {(uintptr_t)bufb, 256, mrb->lkey};
  struct ibv_recv_wr wr = {.wr_id = 71, .sg_list = &sg, .num_sge = 1}, *bad;
  CHECK(ibv_post_srq_recv(srq, &wr, &bad) == 0, "ibv_post_srq_recv");
  memcpy(bufa, "through the SRQ", 16);
  CHECK(post_send(s, IBV_WR_SEND, 72, bufa, 16, mra->lkey, 0, 0, 0) == 0, "SEND to the SRQ's QP");
  struct ibv_wc wc;
  int got = 0, ok = 0;
  for (int i = 0; i < 2 && wait_wc(cq, &wc); i++) { got++; if (wc.wr_id == 71 && wc.status == IBV_WC_SUCCESS && wc.qp_num == r->qp_num) ok = 1; }
  CHECK(got == 2 && ok && !memcmp(bufb, "through the SRQ", 16), "SRQ receive completes with the bytes");
  struct ibv_srq_attr at;
  CHECK(ibv_query_srq(srq, &at) == 0 && at.max_wr == 16, "ibv_query_srq");
  CHECK(ibv_destroy_srq(srq) == EBUSY, "ibv_destroy_srq while a QP uses it: EBUSY");
  ibv_destroy_qp(r);
  ibv_destroy_qp(s);
  CHECK(ibv_destroy_srq(srq) == 0, "ibv_destroy_srq");
  ibv_destroy_cq(cq);
}

static void async_checks(void) {
  struct ibv_cq* cq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
  struct ibv_cq* rcq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
  struct ibv_qp_init_attr ia = {.send_cq = cq, .recv_cq = rcq, .qp_type = IBV_QPT_RC,
                                .cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1}};
  struct ibv_qp* q = ibv_create_qp(pd, &ia);
  struct ibv_qp* p = ibv_create_qp(pd, &ia);
  CHECK(cq && q && p && connect_qp(q, p->qp_num) == 0 && connect_qp(p, q->qp_num) == 0, "QP pair on a CQ of 1 entry");
  struct pollfd pf = {ctx->async_fd, POLLIN, 0};
  CHECK(poll(&pf, 1, 0) == 0, "async_fd: nothing pending");
  CHECK(post_send(q, IBV_WR_RDMA_WRITE, 91, bufa, 8, mra->lkey, (uintptr_t)bufb, mrb->rkey, 0) == 0 &&
            post_send(q, IBV_WR_RDMA_WRITE, 92, bufa, 8, mra->lkey, (uintptr_t)bufb, mrb->rkey, 0) == 0,
        "two signaled WRITEs into it");
  struct ibv_async_event ev = {0};
  int got = 0;
  for (int i = 0; i < 50 && !got; i++) {
    if (poll(&pf, 1, 100) != 1) continue;
    if (ibv_get_async_event(ctx, &ev) == 0 && ev.event_type == IBV_EVENT_CQ_ERR) got = 1;
    else ibv_ack_async_event(&ev);
  }
  CHECK(got && ev.element.cq == cq, "ibv_get_async_event: IBV_EVENT_CQ_ERR on that CQ (overrun)");
  if (got) ibv_ack_async_event(&ev);
  CHECK(strcmp(ibv_event_type_str(IBV_EVENT_CQ_ERR), "CQ error") == 0, "ibv_event_type_str");
  ibv_destroy_qp(q);
  ibv_destroy_qp(p);
  ibv_destroy_cq(cq);
  ibv_destroy_cq(rcq);
}

static void ud_checks(void) {
  errno = 0;
  CHECK(ibv_create_ah(pd, &(struct ibv_ah_attr){.is_global = 1, .port_num = 1}) == NULL && errno == EINVAL,
        "ibv_create_ah with the zero GID: EINVAL");
  errno = 0;
  CHECK(ibv_create_ah(pd, &(struct ibv_ah_attr){.is_global = 0, .port_num = 1}) == NULL && errno == EINVAL,
        "ibv_create_ah without a GRH (RoCE needs one): EINVAL");
  struct ibv_cq* cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
  struct ibv_qp_init_attr ia = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
                                .cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1}};
  struct ibv_qp* u1 = ibv_create_qp(pd, &ia);
  struct ibv_qp* u2 = ibv_create_qp(pd, &ia);
  CHECK(u1 && u2, "ibv_create_qp UD x2");
  if (!u1 || !u2) return;
  for (struct ibv_qp** q = (struct ibv_qp*[]){u1, u2, NULL}; *q; q++) {
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1, .qkey = 0x11111111};
    int r = ibv_modify_qp(*q, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY);
    a.qp_state = IBV_QPS_RTR;
    r |= ibv_modify_qp(*q, &a, IBV_QP_STATE);
    a.qp_state = IBV_QPS_RTS; a.sq_psn = 0;
    r |= ibv_modify_qp(*q, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
    CHECK(r == 0, "UD QP to RTS");
  }
  struct ibv_ah* ah = ibv_create_ah(pd, &(struct ibv_ah_attr){.is_global = 1, .port_num = 1, .grh = {.dgid = gid1, .sgid_index = 1}});
  CHECK(ah != NULL, "ibv_create_ah to our own GID 1");
  memset(bufb, 0, 2048);
  CHECK(post_recv(u2, 101, bufb, 40 + 1000, mrb->lkey) == 0, "UD receive of 40 + 1000 bytes posted");
  for (int i = 0; i < 1000; i++) bufa[i] = (uint8_t)(i * 3);
  struct ibv_sge s = {(uintptr_t)bufa, 1000, mra->lkey};
  struct ibv_send_wr wr = {.wr_id = 102, .sg_list = &s, .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED}, *bad;
  wr.wr.ud.ah = ah; wr.wr.ud.remote_qpn = u2->qp_num; wr.wr.ud.remote_qkey = 0x11111111;
  CHECK(ibv_post_send(u1, &wr, &bad) == 0, "UD SEND posted");
  struct ibv_wc wc, rwc = {0};
  int got = 0;
  for (int i = 0; i < 2 && wait_wc(cq, &wc); i++) { got++; if (wc.wr_id == 101) rwc = wc; }
  CHECK(got == 2 && rwc.status == IBV_WC_SUCCESS && rwc.byte_len == 1040 && (rwc.wc_flags & IBV_WC_GRH) &&
            rwc.src_qp == u1->qp_num, "UD receive: 1040 bytes (GRH + payload), src_qp");
  CHECK(!memcmp(bufb + 40, bufa, 1000), "UD payload after the 40-byte GRH");
  CHECK(bufb[20] == 0x45 && !memcmp(bufb + 20 + 12, gid1.raw + 12, 4), "GRH slot: the IPv4 header, source = our address");
  struct ibv_ah_attr back;
  CHECK(ibv_init_ah_from_wc(ctx, 1, &rwc, (struct ibv_grh*)bufb, &back) == 0 && back.is_global &&
            !memcmp(&back.grh.dgid, &gid1, 16) && back.grh.sgid_index == 1, "ibv_init_ah_from_wc: reply to the sender's GID");
  struct ibv_ah* reply = ibv_create_ah_from_wc(pd, &rwc, (struct ibv_grh*)bufb, 1);
  CHECK(reply != NULL, "ibv_create_ah_from_wc");
  if (reply) CHECK(ibv_destroy_ah(reply) == 0, "ibv_destroy_ah (reply)");
  CHECK(ibv_destroy_ah(ah) == 0, "ibv_destroy_ah");
  ibv_destroy_qp(u1);
  ibv_destroy_qp(u2);
  ibv_destroy_cq(cq);
}

// Hostile counts: num_sge far beyond the caps with a one-element list, a negative num_sge, an inline length beyond
// max_inline_data, a cyclic chain. Each verb returns EINVAL (ENOMEM for the full queue) with *bad_wr on the WR at
// fault and reads nothing past the list (it used to read 20 000 SGEs from a 1-element array: SIGSEGV). The WRs
// before a refused one are posted (ibv_post_send's contract).
static void hostile_count_checks(void) {
  struct ibv_cq* cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
  struct ibv_qp *p = make_qp(cq, NULL), *q = make_qp(cq, NULL);
  struct ibv_srq_init_attr sa = {.attr = {.max_wr = 4, .max_sge = 1}};
  struct ibv_srq* srq = ibv_create_srq(pd, &sa);
  CHECK(cq && p && q && srq && connect_qp(p, q->qp_num) == 0 && connect_qp(q, p->qp_num) == 0, "hostile counts: two RC QPs and an SRQ");
  if (!cq || !p || !q || !srq) return;
  // one element, mapped, followed by an unmapped page: any read past it faults
  uint8_t* page = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  munmap(page + 4096, 4096);
  struct ibv_sge* one = (struct ibv_sge*)(page + 4096 - sizeof(struct ibv_sge));
  *one = (struct ibv_sge){(uintptr_t)bufa, 8, mra->lkey};
  struct ibv_wc wc;
  struct ibv_send_wr *sbad = NULL, sw = {.wr_id = 1, .sg_list = one, .num_sge = 20000, .opcode = IBV_WR_SEND,
                                         .send_flags = IBV_SEND_SIGNALED};
  CHECK(ibv_post_send(p, &sw, &sbad) == EINVAL && sbad == &sw, "ibv_post_send num_sge 20000, one-element list: EINVAL, bad_wr");
  sw.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED; sbad = NULL;
  CHECK(ibv_post_send(p, &sw, &sbad) == EINVAL && sbad == &sw, "ibv_post_send INLINE num_sge 20000: EINVAL before the length loop");
  sw.num_sge = 3; sbad = NULL;
  CHECK(ibv_post_send(p, &sw, &sbad) == EINVAL && sbad == &sw, "ibv_post_send num_sge 3 > max_send_sge 2: EINVAL");
  sw.num_sge = -1; sw.send_flags = IBV_SEND_SIGNALED; sbad = NULL;
  CHECK(ibv_post_send(p, &sw, &sbad) == EINVAL && sbad == &sw, "ibv_post_send num_sge -1: EINVAL");
  struct ibv_sge big[2] = {{(uintptr_t)bufa, 0x80000000u, 0}, {(uintptr_t)bufa, 0x80000000u, 0}};
  sw.sg_list = big; sw.num_sge = 2; sw.send_flags = IBV_SEND_INLINE; sbad = NULL;
  CHECK(ibv_post_send(p, &sw, &sbad) == EINVAL && sbad == &sw, "ibv_post_send INLINE of 4 GiB: EINVAL (nothing copied)");
  // a good WR, then a hostile one: the first is posted and completes, bad_wr names the second
  struct ibv_recv_wr *rbad = NULL, rw = {.wr_id = 2, .sg_list = one, .num_sge = 1};
  CHECK(ibv_post_recv(q, &rw, &rbad) == 0, "receive for the good SEND posted");
  struct ibv_send_wr hostile = {.wr_id = 4, .sg_list = one, .num_sge = 20000, .opcode = IBV_WR_SEND};
  struct ibv_send_wr good = {.wr_id = 3, .sg_list = one, .num_sge = 1, .opcode = IBV_WR_SEND,
                             .send_flags = IBV_SEND_SIGNALED, .next = &hostile};
  sbad = NULL;
  CHECK(ibv_post_send(p, &good, &sbad) == EINVAL && sbad == &hostile, "ibv_post_send good + hostile: EINVAL, bad_wr = the second");
  CHECK(wait_wc(cq, &wc) && wc.status == IBV_WC_SUCCESS && (wc.wr_id == 3 || wc.wr_id == 2) &&
            wait_wc(cq, &wc) && wc.status == IBV_WC_SUCCESS && (wc.wr_id == 3 || wc.wr_id == 2),
        "the WR before the refused one was posted and completed");
  rw.num_sge = 20000; rbad = NULL;
  CHECK(ibv_post_recv(q, &rw, &rbad) == EINVAL && rbad == &rw, "ibv_post_recv num_sge 20000, one-element list: EINVAL, bad_wr");
  rw.num_sge = -5; rbad = NULL;
  CHECK(ibv_post_recv(q, &rw, &rbad) == EINVAL && rbad == &rw, "ibv_post_recv num_sge -5: EINVAL");
  rw.num_sge = 2; rbad = NULL;
  CHECK(ibv_post_srq_recv(srq, &rw, &rbad) == EINVAL && rbad == &rw, "ibv_post_srq_recv num_sge 2 > max_sge 1: EINVAL");
  rw.num_sge = 20000; rbad = NULL;
  CHECK(ibv_post_srq_recv(srq, &rw, &rbad) == EINVAL && rbad == &rw, "ibv_post_srq_recv num_sge 20000: EINVAL, bad_wr");
  rw.num_sge = 1; rw.sg_list = NULL; rbad = NULL;
  CHECK(ibv_post_srq_recv(srq, &rw, &rbad) == EINVAL && rbad == &rw, "ibv_post_srq_recv num_sge 1, sg_list NULL: EINVAL");
  // a cyclic chain: the queue fills (max_wr), the next WR is refused with ENOMEM; the call returns
  rw.sg_list = one; rw.num_sge = 1; rw.next = &rw; rbad = NULL;
  CHECK(ibv_post_srq_recv(srq, &rw, &rbad) == ENOMEM && rbad == &rw, "ibv_post_srq_recv cyclic chain: ENOMEM once the SRQ is full");
  rbad = NULL;
  CHECK(ibv_post_recv(q, &rw, &rbad) == ENOMEM && rbad == &rw, "ibv_post_recv cyclic chain: ENOMEM once the RQ is full");
  ibv_destroy_qp(p);
  ibv_destroy_qp(q);
  ibv_destroy_srq(srq);
  ibv_destroy_cq(cq);
  munmap(page, 4096);
}

static void error_checks(void) {
  struct ibv_wc wc;
  CHECK(post_send(qa, IBV_WR_RDMA_WRITE, 81, bufa, 64, mra->lkey, (uintptr_t)bufb, mrb->rkey ^ 0xff, 0) == 0,
        "WRITE with a wrong rkey posted");
  CHECK(wait_wc(cqa, &wc) && wc.wr_id == 81 && wc.status == IBV_WC_REM_ACCESS_ERR, "its completion: IBV_WC_REM_ACCESS_ERR");
  struct ibv_qp_attr a;
  struct ibv_qp_init_attr ia;
  CHECK(ibv_query_qp(qa, &a, IBV_QP_STATE, &ia) == 0 && a.qp_state == IBV_QPS_ERR, "the requester QP is in ERROR");
  CHECK(ibv_dealloc_pd(pd) == EBUSY, "ibv_dealloc_pd with MRs and QPs: EBUSY");
  CHECK(ibv_destroy_qp(qa) == 0 && ibv_destroy_qp(qb) == 0, "ibv_destroy_qp x2");
  CHECK(ibv_dereg_mr(mra) == 0 && ibv_dereg_mr(mrb) == 0, "ibv_dereg_mr x2");
  CHECK(ibv_destroy_cq(cqa) == 0 && ibv_destroy_cq(cqb) == 0, "ibv_destroy_cq x2");
  CHECK(ibv_dealloc_pd(pd) == 0, "ibv_dealloc_pd");
  CHECK(ibv_close_device(ctx) == 0, "ibv_close_device");
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  device_checks();
  memory_checks();
  traffic_checks();
  channel_checks();
  srq_checks();
  async_checks();
  ud_checks();
  hostile_count_checks();
  error_checks();
  printf("1..%d\n%d failed\n", n_checks, n_failed);
  free(bufa);
  free(bufb);
  return n_failed ? 1 : 0;
}
