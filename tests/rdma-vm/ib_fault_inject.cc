// Test-only verbs fault injection, linked into mp_ib_fault with
// -Wl,--wrap=ibv_open_device,--wrap=ibv_create_qp: the wrapped open patches
// the device context's ops table (ibv_post_send and ibv_poll_cq are inline
// calls through it), so weft's own unmodified code meets the fault.
//   WEFT_TEST_IB_FAULT=KIND:N   on the rank named by WEFT_TEST_IB_FAULT_RANK
//     wc-error:N    the Nth completion polled comes back IBV_WC_RETRY_EXC_ERR
//     post-fail:N   the Nth ibv_post_send fails with EIO
//     qp-error:N    after N posts, every QP of the context is moved to ERR
//     delay:N       each poll_cq returns nothing N times before the real poll
//     dup-imm:N     the Nth receive completion of a WRITE_WITH_IMM is handed
//                   out twice, as a faulty provider might
// Counting starts when the test calls ib_fault_arm() (after weft's init, whose
// own traffic, such as the tuner's link probe, must not meet the fault).
// Default connection setup only: with WEFT_IB_RDMACM=1 weft works on
// librdmacm's own device context and QPs, opened and created inside
// librdmacm, where a link-time --wrap does not reach (ib_device.h).
#include <infiniband/verbs.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

extern "C" ibv_context* __real_ibv_open_device(ibv_device* device);
extern "C" ibv_qp* __real_ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* attr);

namespace {

std::string kind;
long target = 0;
long posts = 0, completions = 0;
int (*realPoll)(ibv_cq*, int, ibv_wc*) = nullptr;
int (*realPost)(ibv_qp*, ibv_send_wr*, ibv_send_wr**) = nullptr;
std::vector<ibv_qp*> qps;
std::mutex mu;
bool live = false;  // set by ib_fault_arm()

bool armed() {
  static const bool on = [] {
    const char* spec = std::getenv("WEFT_TEST_IB_FAULT");
    const char* rank = std::getenv("WEFT_TEST_IB_FAULT_RANK");
    const char* me = std::getenv("WEFT_RANK");
    if (spec == nullptr || (rank != nullptr && me != nullptr && std::strcmp(rank, me) != 0))
      return false;
    const char* colon = std::strchr(spec, ':');
    kind.assign(spec, colon ? colon - spec : std::strlen(spec));
    target = colon ? std::atol(colon + 1) : 1;
    std::fprintf(stderr, "ib_fault_inject: %s after %ld on this rank\n", kind.c_str(), target);
    return true;
  }();
  return on;
}

// dup-imm: the copy goes out right after the original, or first in the next
// poll of the same queue when the caller's array was full.
int duplicatingPoll(ibv_cq* cq, int n, ibv_wc* wc) {
  static ibv_wc copy;
  static ibv_cq* copyCq = nullptr;
  std::lock_guard<std::mutex> lock(mu);
  int got = 0;
  if (copyCq == cq && n > 0) {
    wc[got++] = copy;
    copyCq = nullptr;
  }
  const int polled = realPoll(cq, n - got, wc + got);
  if (polled <= 0) return got > 0 ? got : polled;
  const int end = got + polled;
  for (int i = got; i < end; ++i) {
    if (wc[i].status != IBV_WC_SUCCESS || wc[i].opcode != IBV_WC_RECV_RDMA_WITH_IMM) continue;
    if (++completions != target) continue;
    copy = wc[i];
    copyCq = cq;
  }
  if (copyCq == cq && end < n) {
    wc[end] = copy;
    copyCq = nullptr;
    return end + 1;
  }
  return end;
}

int faultyPoll(ibv_cq* cq, int n, ibv_wc* wc) {
  if (!__atomic_load_n(&live, __ATOMIC_ACQUIRE)) return realPoll(cq, n, wc);
  if (kind == "delay") {
    static thread_local long skipped = 0;
    if (skipped++ % (target + 1) != 0) return 0;
  }
  if (kind == "dup-imm") return duplicatingPoll(cq, n, wc);
  int got = realPoll(cq, n, wc);
  if (kind == "wc-error" && got > 0) {
    std::lock_guard<std::mutex> lock(mu);
    if (completions < target && completions + got >= target) {
      wc[target - completions - 1].status = IBV_WC_RETRY_EXC_ERR;
    }
    completions += got;
  }
  return got;
}

int faultyPost(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
  if (!__atomic_load_n(&live, __ATOMIC_ACQUIRE)) return realPost(qp, wr, bad);
  long k;
  {
    std::lock_guard<std::mutex> lock(mu);
    k = ++posts;
  }
  if (kind == "post-fail" && k == target) {
    *bad = wr;
    return EIO;
  }
  if (kind == "qp-error" && k == target) {
    std::lock_guard<std::mutex> lock(mu);
    for (ibv_qp* q : qps) {
      ibv_qp_attr attr{};
      attr.qp_state = IBV_QPS_ERR;
      ibv_modify_qp(q, &attr, IBV_QP_STATE);
    }
  }
  return realPost(qp, wr, bad);
}

}  // namespace

extern "C" void ib_fault_arm() { __atomic_store_n(&live, true, __ATOMIC_RELEASE); }

extern "C" ibv_context* __wrap_ibv_open_device(ibv_device* device) {
  ibv_context* ctx = __real_ibv_open_device(device);
  if (ctx != nullptr && armed()) {
    realPoll = ctx->ops.poll_cq;
    realPost = ctx->ops.post_send;
    ctx->ops.poll_cq = faultyPoll;
    ctx->ops.post_send = faultyPost;
  }
  return ctx;
}

extern "C" ibv_qp* __wrap_ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* attr) {
  ibv_qp* qp = __real_ibv_create_qp(pd, attr);
  if (qp != nullptr) {
    std::lock_guard<std::mutex> lock(mu);
    qps.push_back(qp);
  }
  return qp;
}
