// Self-test of the librdmacm API surface on the Verbs Lab library (run under `verbslab exec`; built against Debian's
// <rdma/rdma_cma.h> and linked with -lrdmacm -libverbs like any program). One process is both sides: a listener and
// a client on the device's CM, the device talking to itself over RoCEv2/UDP. Prints "ok N - what" or
// "not ok N - what (detail)" per check; exit status 1 if any failed.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int n_checks, n_failed;
#define CHECK(cond, ...)                                                     \
  do {                                                                       \
    int ok_ = (cond);                                                        \
    n_checks++;                                                              \
    if (!ok_) n_failed++;                                                    \
    printf("%sok %d - ", ok_ ? "" : "not ", n_checks);                       \
    printf(__VA_ARGS__);                                                     \
    if (!ok_) printf(" (errno %d %s)", errno, strerror(errno));              \
    printf("\n");                                                            \
    fflush(stdout);                                                          \
  } while (0)

// The next event on a channel within 5 s (poll on the channel's fd, then rdma_get_cm_event)
static struct rdma_cm_event* next_event(struct rdma_event_channel* ch) {
  struct pollfd p = {.fd = ch->fd, .events = POLLIN};
  if (poll(&p, 1, 5000) != 1) { errno = ETIMEDOUT; return NULL; }
  struct rdma_cm_event* e = NULL;
  if (rdma_get_cm_event(ch, &e)) return NULL;
  return e;
}

static int expect(struct rdma_event_channel* ch, enum rdma_cm_event_type t, struct rdma_cm_event** out) {
  struct rdma_cm_event* e = next_event(ch);
  if (!e) return 0;
  if (e->event != t) {
    fprintf(stderr, "# got %s status %d, wanted %s\n", rdma_event_str(e->event), e->status, rdma_event_str(t));
    rdma_ack_cm_event(e);
    return 0;
  }
  if (out) *out = e; else rdma_ack_cm_event(e);
  return 1;
}

static struct sockaddr_in sin_of(const char* ip, int port) {
  struct sockaddr_in s;
  memset(&s, 0, sizeof s);
  s.sin_family = AF_INET;
  s.sin_port = htons(port);
  inet_pton(AF_INET, ip, &s.sin_addr);
  return s;
}

struct destroyer { struct rdma_cm_id* id; volatile int done; int ret; };
static void* destroy_thread(void* arg) {
  struct destroyer* d = arg;
  d->ret = rdma_destroy_id(d->id);
  d->done = 1;
  return NULL;
}

static void qp_attr_init(struct ibv_qp_init_attr* a, enum ibv_qp_type t) {
  memset(a, 0, sizeof *a);
  a->qp_type = t;
  a->cap.max_send_wr = a->cap.max_recv_wr = 4;
  a->cap.max_send_sge = a->cap.max_recv_sge = 1;
  a->sq_sig_all = 1;
}

int main(void) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  // ---- names and argument checks
  CHECK(!strcmp(rdma_event_str(RDMA_CM_EVENT_ESTABLISHED), "RDMA_CM_EVENT_ESTABLISHED"), "rdma_event_str(ESTABLISHED)");
  CHECK(!strcmp(rdma_event_str((enum rdma_cm_event_type)99), "UNKNOWN EVENT"), "rdma_event_str(99) = UNKNOWN EVENT");
  errno = 0;
  CHECK(rdma_get_cm_event(NULL, NULL) == -1 && errno == EINVAL, "rdma_get_cm_event(NULL) -> EINVAL");
  errno = 0;
  CHECK(rdma_ack_cm_event(NULL) == -1 && errno == EINVAL, "rdma_ack_cm_event(NULL) -> EINVAL");
  struct rdma_addrinfo* rai = NULL;
  errno = 0;
  CHECK(rdma_getaddrinfo(NULL, NULL, NULL, &rai) == -1 && errno == EINVAL, "rdma_getaddrinfo(NULL, NULL, NULL) -> EINVAL");
  struct rdma_addrinfo hints;
  memset(&hints, 0, sizeof hints);
  hints.ai_flags = RAI_PASSIVE | RAI_NUMERICHOST;
  hints.ai_port_space = RDMA_PS_TCP;
  CHECK(rdma_getaddrinfo("127.0.0.1", "7471", &hints, &rai) == 0 && rai && rai->ai_src_addr &&
            rai->ai_src_addr->sa_family == AF_INET && ntohs(((struct sockaddr_in*)rai->ai_src_addr)->sin_port) == 7471 &&
            rai->ai_qp_type == IBV_QPT_RC && (rai->ai_flags & RAI_PASSIVE),
        "rdma_getaddrinfo passive: source 127.0.0.1:7471, RC, TCP port space");
  rdma_freeaddrinfo(rai);

  struct rdma_event_channel* ch = rdma_create_event_channel();
  CHECK(ch && ch->fd >= 0, "rdma_create_event_channel: a file descriptor");
  fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK);
  struct rdma_cm_event* ev = NULL;
  errno = 0;
  CHECK(rdma_get_cm_event(ch, &ev) == -1 && errno == EAGAIN, "empty non-blocking channel -> EAGAIN");
  fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) & ~O_NONBLOCK);
  errno = 0;
  CHECK(rdma_create_id(ch, NULL, NULL, RDMA_PS_TCP) == -1 && errno == EINVAL, "rdma_create_id(id NULL) -> EINVAL");

  struct rdma_cm_id* listen_id = NULL;
  CHECK(rdma_create_id(ch, &listen_id, NULL, RDMA_PS_TCP) == 0 && listen_id->channel == ch && listen_id->qp_type == IBV_QPT_RC,
        "rdma_create_id TCP: RC, on the channel");
  struct sockaddr_un_like { sa_family_t f; char pad[30]; } bad = {.f = AF_UNIX};
  errno = 0;
  CHECK(rdma_bind_addr(listen_id, (struct sockaddr*)&bad) == -1 && errno == EINVAL, "bind AF_UNIX -> EINVAL");
  struct sockaddr_in far = sin_of("192.0.2.1", 0);
  errno = 0;
  CHECK(rdma_bind_addr(listen_id, (struct sockaddr*)&far) == -1 && errno == EADDRNOTAVAIL,
        "bind 192.0.2.1 (not a host address) -> EADDRNOTAVAIL");
  // the device goes on the network at the address bound: the first 127.0.0.N whose RoCE port is free
  char ip[32] = "";
  int bound = -1;
  for (int n = 1; n < 64 && bound; n++) {
    snprintf(ip, sizeof ip, "127.0.0.%d", n);
    struct sockaddr_in a = sin_of(ip, 0);
    bound = rdma_bind_addr(listen_id, (struct sockaddr*)&a);
    if (bound && errno != EADDRINUSE) break;
  }
  CHECK(bound == 0, "rdma_bind_addr %s port 0", ip);
  CHECK(listen_id->verbs != NULL && listen_id->pd != NULL && listen_id->port_num == 1, "bound ID: verbs, default PD, port 1");
  const uint16_t port = ntohs(rdma_get_src_port(listen_id));
  CHECK(port != 0, "bind port 0 picked a port (%u)", port);
  struct sockaddr_in* la = (struct sockaddr_in*)rdma_get_local_addr(listen_id);
  CHECK(la->sin_family == AF_INET && la->sin_addr.s_addr == sin_of(ip, 0).sin_addr.s_addr, "rdma_get_local_addr = %s", ip);
  CHECK(rdma_listen(listen_id, 8) == 0, "rdma_listen");
  struct rdma_cm_id* dup = NULL;
  rdma_create_id(ch, &dup, NULL, RDMA_PS_TCP);
  struct sockaddr_in same = sin_of(ip, port);
  errno = 0;
  CHECK(rdma_bind_addr(dup, (struct sockaddr*)&same) == -1 && errno == EADDRINUSE, "a second bind of %s:%u -> EADDRINUSE", ip, port);
  rdma_destroy_id(dup);

  int nd = 0;
  struct ibv_context** devs = rdma_get_devices(&nd);
  CHECK(devs && nd == 1 && devs[0] == listen_id->verbs && devs[1] == NULL, "rdma_get_devices: the device's context");
  rdma_free_devices(devs);
  int one = 1;
  CHECK(rdma_set_option(listen_id, RDMA_OPTION_ID, RDMA_OPTION_ID_REUSEADDR, &one, sizeof one) == 0, "set_option REUSEADDR accepted");
  uint8_t tos = 32;
  errno = 0;
  CHECK(rdma_set_option(listen_id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof tos) == 0, "set_option TOS");
  errno = 0;
  CHECK(rdma_set_option(listen_id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &one, sizeof one) == -1 && errno == EINVAL,
        "set_option ACK_TIMEOUT with an int -> EINVAL (it is a uint8_t)");
  errno = 0;
  CHECK(rdma_set_option(listen_id, RDMA_OPTION_IB, RDMA_OPTION_IB_PATH, &one, sizeof one) == -1 && errno == ENOSYS,
        "set_option IB_PATH -> ENOSYS");
  errno = 0;
  CHECK(rdma_join_multicast(listen_id, (struct sockaddr*)&same, NULL) == -1 && errno == ENOSYS, "rdma_join_multicast -> ENOSYS");

  // ---- an RC connection to ourselves, with private data, data through the rdma_verbs.h inlines
  struct rdma_cm_id* cli = NULL;
  CHECK(rdma_create_id(ch, &cli, (void*)0x1234, RDMA_PS_TCP) == 0 && cli->context == (void*)0x1234, "client ID with its context");
  struct sockaddr_in dst = sin_of(ip, port);
  CHECK(rdma_resolve_addr(cli, NULL, (struct sockaddr*)&dst, 2000) == 0, "rdma_resolve_addr %s:%u", ip, port);
  CHECK(expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED, NULL) && cli->verbs, "ADDR_RESOLVED (poll on the channel fd), verbs set");
  uint8_t ack_timeout = 16;
  CHECK(rdma_set_option(cli, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &ack_timeout, 1) == 0, "set_option ACK_TIMEOUT 16");
  CHECK(rdma_resolve_route(cli, 2000) == 0 && expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL), "rdma_resolve_route -> ROUTE_RESOLVED");
  CHECK(cli->route.num_paths == 1 && cli->route.path_rec, "route: one path record");
  struct ibv_qp_init_attr qa;
  qp_attr_init(&qa, IBV_QPT_RC);
  CHECK(rdma_create_qp(cli, NULL, &qa) == 0 && cli->qp && cli->send_cq && cli->recv_cq, "rdma_create_qp (default PD, CQs made)");
  errno = 0;
  CHECK(rdma_create_qp(cli, NULL, &qa) == -1 && errno == EINVAL, "a second rdma_create_qp -> EINVAL");
  char cbuf[64] = "", sbuf[64] = "";
  struct ibv_mr* cmr = rdma_reg_msgs(cli, cbuf, sizeof cbuf);
  CHECK(cmr != NULL, "rdma_reg_msgs");
  CHECK(rdma_post_recv(cli, NULL, cbuf, sizeof cbuf, cmr) == 0, "client rdma_post_recv");
  struct rdma_conn_param cp;
  memset(&cp, 0, sizeof cp);
  cp.private_data = "hello";
  cp.private_data_len = 6;
  cp.responder_resources = cp.initiator_depth = 1;
  cp.retry_count = 7;
  cp.rnr_retry_count = 7;
  CHECK(rdma_connect(cli, &cp) == 0, "rdma_connect with 6 bytes of private data");
  struct rdma_cm_event* req = NULL;
  CHECK(expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST, &req), "CONNECT_REQUEST on the listener's channel");
  struct rdma_cm_id* srv = req ? req->id : NULL;
  CHECK(req && req->listen_id == listen_id && srv && srv != listen_id && srv->verbs && srv->channel == ch,
        "request: listen_id, a new ID with verbs on the same channel");
  CHECK(req && req->param.conn.private_data_len >= 6 && !memcmp(req->param.conn.private_data, "hello", 6), "request carries \"hello\"");
  if (req) rdma_ack_cm_event(req);
  if (!srv) { printf("# no server ID: stopping\n"); return 1; }
  qp_attr_init(&qa, IBV_QPT_RC);
  CHECK(rdma_create_qp(srv, NULL, &qa) == 0, "server rdma_create_qp");
  struct ibv_mr* smr = rdma_reg_msgs(srv, sbuf, sizeof sbuf);
  CHECK(smr && rdma_post_recv(srv, NULL, sbuf, sizeof sbuf, smr) == 0, "server rdma_post_recv");
  memset(&cp, 0, sizeof cp);
  cp.responder_resources = cp.initiator_depth = 1;
  CHECK(rdma_accept(srv, &cp) == 0, "rdma_accept");
  // both sides' ESTABLISHED, in either order
  int est = 0;
  for (int i = 0; i < 2; i++) {
    struct rdma_cm_event* e = next_event(ch);
    if (e && e->event == RDMA_CM_EVENT_ESTABLISHED && (e->id == cli || e->id == srv)) est |= e->id == cli ? 1 : 2;
    else if (e) fprintf(stderr, "# got %s status %d\n", rdma_event_str(e->event), e->status);
    if (e) rdma_ack_cm_event(e);
  }
  CHECK(est == 3, "ESTABLISHED on both IDs");
  struct ibv_qp_attr qpa;
  struct ibv_qp_init_attr qia;
  CHECK(ibv_query_qp(cli->qp, &qpa, IBV_QP_STATE, &qia) == 0 && qpa.qp_state == IBV_QPS_RTS &&
            ibv_query_qp(srv->qp, &qpa, IBV_QP_STATE | IBV_QP_DEST_QPN, &qia) == 0 && qpa.qp_state == IBV_QPS_RTS &&
            qpa.dest_qp_num == cli->qp->qp_num,
        "both QPs in RTS, the server's aimed at the client's QP (moved by the CM)");
  CHECK(ibv_query_qp(cli->qp, &qpa, IBV_QP_TIMEOUT, &qia) == 0 && qpa.timeout == 16, "the client QP's ACK timeout is the option's 16");
  struct ibv_qp_attr ia;
  int mask = 0;
  ia.qp_state = IBV_QPS_RTR;
  CHECK(rdma_init_qp_attr(cli, &ia, &mask) == 0 && (mask & IBV_QP_STATE) && (mask & IBV_QP_DEST_QPN) &&
            ia.dest_qp_num == srv->qp->qp_num,
        "rdma_init_qp_attr(RTR): the peer's QP number");
  strcpy(cbuf + 32, "ping from client");
  struct ibv_wc wc;
  CHECK(rdma_post_send(cli, NULL, cbuf + 32, 17, cmr, 0) == 0 && rdma_get_send_comp(cli, &wc) == 1 && wc.status == IBV_WC_SUCCESS,
        "client rdma_post_send, rdma_get_send_comp success");
  CHECK(rdma_get_recv_comp(srv, &wc) == 1 && wc.status == IBV_WC_SUCCESS && wc.byte_len == 17 && !strcmp(sbuf, "ping from client"),
        "server received \"ping from client\" (rdma_get_recv_comp)");
  CHECK(ntohs(rdma_get_dst_port(cli)) == port && ntohs(rdma_get_src_port(srv)) == port, "ports: client dst = server src = %u", port);

  // ---- destroy_id waits for the acknowledgement of the events it got
  CHECK(rdma_disconnect(cli) == 0, "rdma_disconnect");
  int disc = 0;
  struct rdma_cm_event* held = NULL;
  for (int i = 0; i < 2; i++) {               // the server answers the DREQ with its own rdma_disconnect (DREP)
    struct rdma_cm_event* e = next_event(ch);
    if (e && e->event == RDMA_CM_EVENT_DISCONNECTED) disc |= e->id == cli ? 1 : e->id == srv ? 2 : 0;
    if (e && e->id == srv && !held) { held = e; CHECK(rdma_disconnect(srv) == 0, "server rdma_disconnect (DREP)"); }
    else if (e) rdma_ack_cm_event(e);
  }
  CHECK(disc == 3, "DISCONNECTED on both IDs");
  rdma_dereg_mr(smr);
  rdma_destroy_qp(srv);
  struct destroyer d = {.id = srv};
  pthread_t t;
  pthread_create(&t, NULL, destroy_thread, &d);
  usleep(200 * 1000);
  CHECK(held && !d.done, "rdma_destroy_id waits while the ID's event is not acknowledged");
  if (held) rdma_ack_cm_event(held);
  pthread_join(t, NULL);
  CHECK(d.done && d.ret == 0, "... and returns once it is");
  rdma_dereg_mr(cmr);
  rdma_destroy_qp(cli);
  CHECK(rdma_destroy_id(cli) == 0, "rdma_destroy_id client");

  // ---- a rejected request: REJECTED with the consumer's reason and private data
  rdma_create_id(ch, &cli, NULL, RDMA_PS_TCP);
  rdma_resolve_addr(cli, NULL, (struct sockaddr*)&dst, 2000);
  expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED, NULL);
  rdma_resolve_route(cli, 2000);
  expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL);
  memset(&cp, 0, sizeof cp);
  cp.qp_num = 0x123;                           // no QP on this ID: the number to announce
  CHECK(rdma_connect(cli, &cp) == 0, "rdma_connect without a QP (qp_num in the parameters)");
  req = NULL;
  CHECK(expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST, &req) && req->param.conn.qp_num == 0x123, "request announces QP 0x123");
  if (req) {
    struct rdma_cm_id* r = req->id;
    rdma_ack_cm_event(req);
    CHECK(rdma_reject(r, "no", 3) == 0, "rdma_reject with private data");
    struct rdma_cm_event* e = NULL;
    CHECK(expect(ch, RDMA_CM_EVENT_REJECTED, &e) && e->id == cli && e->status == 28 && e->param.conn.private_data_len >= 3 &&
              !memcmp(e->param.conn.private_data, "no", 3),
          "REJECTED, status 28 (consumer defined), private data \"no\"");
    if (e) rdma_ack_cm_event(e);
    rdma_destroy_id(r);
  }
  rdma_destroy_id(cli);

  // ---- a QP the program moves itself: CONNECT_RESPONSE, rdma_init_qp_attr + ibv_modify_qp, rdma_establish (the
  // RTU); the kernel reports no event for the active side after it, the passive side gets ESTABLISHED
  rdma_create_id(ch, &cli, NULL, RDMA_PS_TCP);
  rdma_resolve_addr(cli, NULL, (struct sockaddr*)&dst, 2000);
  expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED, NULL);
  rdma_resolve_route(cli, 2000);
  expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL);
  struct ibv_cq* xcq = ibv_create_cq(cli->verbs, 8, NULL, NULL, 0);
  qp_attr_init(&qa, IBV_QPT_RC);
  qa.send_cq = qa.recv_cq = xcq;
  struct ibv_qp* xqp = ibv_create_qp(cli->pd, &qa);
  ia.qp_state = IBV_QPS_INIT;
  CHECK(xqp && rdma_init_qp_attr(cli, &ia, &mask) == 0 && ibv_modify_qp(xqp, &ia, mask) == 0, "own QP to INIT with rdma_init_qp_attr");
  memset(&cp, 0, sizeof cp);
  cp.qp_num = xqp ? xqp->qp_num : 0;
  cp.responder_resources = cp.initiator_depth = 1;
  cp.retry_count = cp.rnr_retry_count = 7;
  CHECK(rdma_connect(cli, &cp) == 0, "rdma_connect announcing the own QP");
  req = NULL;
  struct rdma_cm_id* xs = NULL;
  if (expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST, &req)) { xs = req->id; rdma_ack_cm_event(req); }
  if (xs) {
    qp_attr_init(&qa, IBV_QPT_RC);
    rdma_create_qp(xs, NULL, &qa);
    memset(sbuf, 0, sizeof sbuf);
    smr = rdma_reg_msgs(xs, sbuf, sizeof sbuf);
    rdma_post_recv(xs, NULL, sbuf, sizeof sbuf, smr);
    memset(&cp, 0, sizeof cp);
    cp.responder_resources = cp.initiator_depth = 1;
    rdma_accept(xs, &cp);
  }
  ev = NULL;
  CHECK(xs && expect(ch, RDMA_CM_EVENT_CONNECT_RESPONSE, &ev) && ev->id == cli, "CONNECT_RESPONSE to the ID without a QP");
  if (ev) rdma_ack_cm_event(ev);
  int moved = 1;
  for (int st = IBV_QPS_RTR; st <= IBV_QPS_RTS && moved; st++) {
    ia.qp_state = st;
    moved = rdma_init_qp_attr(cli, &ia, &mask) == 0 && ibv_modify_qp(xqp, &ia, mask) == 0;
  }
  CHECK(moved && ibv_query_qp(xqp, &qpa, IBV_QP_STATE | IBV_QP_DEST_QPN, &qia) == 0 && qpa.qp_state == IBV_QPS_RTS &&
            xs && qpa.dest_qp_num == xs->qp->qp_num,
        "own QP to RTR and RTS with rdma_init_qp_attr, aimed at the server's QP");
  CHECK(rdma_establish(cli) == 0, "rdma_establish (RTU)");
  ev = NULL;
  CHECK(expect(ch, RDMA_CM_EVENT_ESTABLISHED, &ev) && ev->id == xs, "ESTABLISHED on the passive side");
  if (ev) rdma_ack_cm_event(ev);
  struct pollfd quiet = {.fd = ch->fd, .events = POLLIN};
  CHECK(poll(&quiet, 1, 300) == 0, "no event for the active side after rdma_establish (as the kernel)");
  struct ibv_mr* xmr = ibv_reg_mr(cli->pd, cbuf, sizeof cbuf, IBV_ACCESS_LOCAL_WRITE);
  strcpy(cbuf, "own QP");
  struct ibv_sge sge = {.addr = (uintptr_t)cbuf, .length = 7, .lkey = xmr ? xmr->lkey : 0};
  struct ibv_send_wr swr = {.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED}, *bad_wr;
  int got = 0;
  if (xmr && !ibv_post_send(xqp, &swr, &bad_wr))
    for (int i = 0; i < 2000 && !got; i++) { got = ibv_poll_cq(xcq, 1, &wc); if (!got) usleep(1000); }
  CHECK(got == 1 && wc.status == IBV_WC_SUCCESS && xs && rdma_get_recv_comp(xs, &wc) == 1 && !strcmp(sbuf, "own QP"),
        "a SEND from the own QP arrives");
  if (xs) { rdma_dereg_mr(smr); rdma_destroy_qp(xs); rdma_destroy_id(xs); }
  CHECK(rdma_destroy_id(cli) == 0, "rdma_destroy_id with the peer's DREQ maybe queued");
  if (xmr) ibv_dereg_mr(xmr);
  ibv_destroy_qp(xqp);
  ibv_destroy_cq(xcq);

  // ---- a QP the program put in id->qp itself (perftest's handshake does): the library moves it on the REP, as
  // rdma-core's ucma_process_conn_resp, and reports ESTABLISHED
  rdma_create_id(ch, &cli, NULL, RDMA_PS_TCP);
  rdma_resolve_addr(cli, NULL, (struct sockaddr*)&dst, 2000);
  expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED, NULL);
  rdma_resolve_route(cli, 2000);
  expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL);
  xcq = ibv_create_cq(cli->verbs, 8, NULL, NULL, 0);
  qp_attr_init(&qa, IBV_QPT_RC);
  qa.send_cq = qa.recv_cq = xcq;
  xqp = ibv_create_qp(cli->pd, &qa);
  cli->qp = xqp;
  memset(&cp, 0, sizeof cp);
  cp.responder_resources = cp.initiator_depth = 1;
  cp.retry_count = cp.rnr_retry_count = 7;
  CHECK(xqp && rdma_connect(cli, &cp) == 0, "rdma_connect with the program's QP in id->qp");
  req = NULL;
  xs = NULL;
  if (expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST, &req)) { xs = req->id; rdma_ack_cm_event(req); }
  if (xs) {
    qp_attr_init(&qa, IBV_QPT_RC);
    rdma_create_qp(xs, NULL, &qa);
    rdma_accept(xs, &cp);
  }
  est = 0;
  for (int i = 0; i < 2 && xs; i++) {
    struct rdma_cm_event* e = next_event(ch);
    if (e && e->event == RDMA_CM_EVENT_ESTABLISHED) est |= e->id == cli ? 1 : e->id == xs ? 2 : 0;
    if (e) rdma_ack_cm_event(e);
  }
  CHECK(est == 3 && ibv_query_qp(xqp, &qpa, IBV_QP_STATE | IBV_QP_DEST_QPN, &qia) == 0 && qpa.qp_state == IBV_QPS_RTS &&
            qpa.dest_qp_num == xs->qp->qp_num,
        "ESTABLISHED on both, the program's QP moved to RTS aimed at the server's");
  cli->qp = NULL;
  if (xs) { rdma_destroy_qp(xs); rdma_destroy_id(xs); }
  rdma_destroy_id(cli);
  ibv_destroy_qp(xqp);
  ibv_destroy_cq(xcq);

  // ---- nobody listens on that port: REJECTED (invalid service ID) or unreachable
  rdma_create_id(ch, &cli, NULL, RDMA_PS_TCP);
  struct sockaddr_in nobody = sin_of(ip, port == 65535 ? 1 : port + 1);
  rdma_resolve_addr(cli, NULL, (struct sockaddr*)&nobody, 2000);
  expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED, NULL);
  rdma_resolve_route(cli, 2000);
  expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL);
  qp_attr_init(&qa, IBV_QPT_RC);
  rdma_create_qp(cli, NULL, &qa);
  rdma_connect(cli, NULL);
  ev = next_event(ch);
  CHECK(ev && (ev->event == RDMA_CM_EVENT_REJECTED || ev->event == RDMA_CM_EVENT_UNREACHABLE), "connect to a port nobody listens on: %s status %d",
        ev ? rdma_event_str(ev->event) : "no event", ev ? ev->status : 0);
  if (ev) rdma_ack_cm_event(ev);
  rdma_destroy_qp(cli);
  rdma_destroy_id(cli);

  // ---- migrate: the ID's events come on the new channel
  struct rdma_event_channel* ch2 = rdma_create_event_channel();
  rdma_create_id(ch, &cli, NULL, RDMA_PS_TCP);
  CHECK(rdma_migrate_id(cli, ch2) == 0 && cli->channel == ch2, "rdma_migrate_id to a second channel");
  rdma_resolve_addr(cli, NULL, (struct sockaddr*)&dst, 2000);
  CHECK(expect(ch2, RDMA_CM_EVENT_ADDR_RESOLVED, NULL), "ADDR_RESOLVED arrives on the second channel");
  rdma_destroy_id(cli);
  rdma_destroy_event_channel(ch2);

  // ---- UD (RDMA_PS_UDP): SIDR REQ / REP; the client learns the server's QP number and Q_Key
  struct rdma_cm_id *ul = NULL, *uc = NULL;
  CHECK(rdma_create_id(ch, &ul, NULL, RDMA_PS_UDP) == 0 && ul->qp_type == IBV_QPT_UD, "rdma_create_id UDP: UD");
  struct sockaddr_in ua = sin_of(ip, 0);
  CHECK(rdma_bind_addr(ul, (struct sockaddr*)&ua) == 0 && rdma_listen(ul, 4) == 0, "UD listener");
  struct sockaddr_in ud_dst = sin_of(ip, ntohs(rdma_get_src_port(ul)));
  rdma_create_id(ch, &uc, NULL, RDMA_PS_UDP);
  rdma_resolve_addr(uc, NULL, (struct sockaddr*)&ud_dst, 2000);
  expect(ch, RDMA_CM_EVENT_ADDR_RESOLVED, NULL);
  rdma_resolve_route(uc, 2000);
  expect(ch, RDMA_CM_EVENT_ROUTE_RESOLVED, NULL);
  qp_attr_init(&qa, IBV_QPT_UD);
  CHECK(rdma_create_qp(uc, NULL, &qa) == 0, "UD rdma_create_qp");
  CHECK(ibv_query_qp(uc->qp, &qpa, IBV_QP_STATE | IBV_QP_QKEY, &qia) == 0 && qpa.qp_state == IBV_QPS_RTS && qpa.qkey == RDMA_UDP_QKEY,
        "UD QP in RTS with Q_Key RDMA_UDP_QKEY");
  CHECK(rdma_connect(uc, NULL) == 0, "UD rdma_connect (SIDR REQ)");
  req = NULL;
  struct rdma_cm_id* us = NULL;
  if (expect(ch, RDMA_CM_EVENT_CONNECT_REQUEST, &req)) { us = req->id; rdma_ack_cm_event(req); }
  CHECK(us != NULL, "UD CONNECT_REQUEST");
  if (us) {
    qp_attr_init(&qa, IBV_QPT_UD);
    rdma_create_qp(us, NULL, &qa);
    CHECK(rdma_accept(us, NULL) == 0, "UD rdma_accept (SIDR REP)");
    struct rdma_cm_event* e = NULL;
    CHECK(expect(ch, RDMA_CM_EVENT_ESTABLISHED, &e) && e->id == uc && e->param.ud.qp_num == us->qp->qp_num &&
              e->param.ud.qkey == RDMA_UDP_QKEY && e->param.ud.ah_attr.is_global,
          "UD ESTABLISHED: the server's QP number, Q_Key, a global AH");
    if (e) rdma_ack_cm_event(e);
    rdma_destroy_qp(us);
    rdma_destroy_id(us);
  }
  rdma_destroy_qp(uc);
  rdma_destroy_id(uc);
  rdma_destroy_id(ul);

  // ---- a sync ID (no channel): calls wait for their outcome
  struct rdma_cm_id* sid = NULL;
  CHECK(rdma_create_id(NULL, &sid, NULL, RDMA_PS_TCP) == 0 && sid->channel, "rdma_create_id without a channel: its own");
  CHECK(rdma_resolve_addr(sid, NULL, (struct sockaddr*)&dst, 2000) == 0 && sid->event && sid->event->event == RDMA_CM_EVENT_ADDR_RESOLVED,
        "sync rdma_resolve_addr returns resolved (id->event)");
  CHECK(rdma_destroy_id(sid) == 0, "rdma_destroy_id of a sync ID with its event held");

  CHECK(rdma_destroy_id(listen_id) == 0, "rdma_destroy_id listener");
  rdma_destroy_event_channel(ch);
  printf("# %d checks, %d failed\n", n_checks, n_failed);
  return n_failed ? 1 : 0;
}
