// The CM's rdma-core values, checked at compile time against librdmacm's <rdma/rdma_cma.h> (librdmacm-dev):
// every RDMA_CM_EVENT_* name of vl/names.h kCmEventNames, the port spaces of vl/cm.h and the UDP Q_Key.
// (The ib_cm states, REJ reasons and attribute IDs are the kernel's include/rdma/ib_cm.h, not installed for user
// space; cm_kernel_test.cpp checks the wire values against a kernel capture.)
#include <gtest/gtest.h>
#include <rdma/rdma_cma.h>

#include "cm/cm_impl.h"
#include "vl/names.h"

#define VL_CM_SAME(id) static_assert(vl::names_value(vl::kCmEventNames, id, #id), "kCmEventNames: " #id " differs from rdma/rdma_cma.h")
VL_CM_SAME(RDMA_CM_EVENT_ADDR_RESOLVED);
VL_CM_SAME(RDMA_CM_EVENT_ADDR_ERROR);
VL_CM_SAME(RDMA_CM_EVENT_ROUTE_RESOLVED);
VL_CM_SAME(RDMA_CM_EVENT_ROUTE_ERROR);
VL_CM_SAME(RDMA_CM_EVENT_CONNECT_REQUEST);
VL_CM_SAME(RDMA_CM_EVENT_CONNECT_RESPONSE);
VL_CM_SAME(RDMA_CM_EVENT_CONNECT_ERROR);
VL_CM_SAME(RDMA_CM_EVENT_UNREACHABLE);
VL_CM_SAME(RDMA_CM_EVENT_REJECTED);
VL_CM_SAME(RDMA_CM_EVENT_ESTABLISHED);
VL_CM_SAME(RDMA_CM_EVENT_DISCONNECTED);
VL_CM_SAME(RDMA_CM_EVENT_DEVICE_REMOVAL);
VL_CM_SAME(RDMA_CM_EVENT_MULTICAST_JOIN);
VL_CM_SAME(RDMA_CM_EVENT_MULTICAST_ERROR);
VL_CM_SAME(RDMA_CM_EVENT_ADDR_CHANGE);
VL_CM_SAME(RDMA_CM_EVENT_TIMEWAIT_EXIT);
static_assert(sizeof(vl::kCmEventNames) / sizeof(vl::kCmEventNames[0]) == 16, "a CM event without a check");
static_assert(uint32_t(vl::CM_PS_TCP) == uint32_t(RDMA_PS_TCP) && uint32_t(vl::CM_PS_UDP) == uint32_t(RDMA_PS_UDP) &&
              uint32_t(vl::CM_PS_IB) == uint32_t(RDMA_PS_IB) && uint32_t(vl::CM_PS_IPOIB) == uint32_t(RDMA_PS_IPOIB),
              "port spaces differ from rdma/rdma_cma.h");
static_assert(vl::cm::kUdpQkey == RDMA_UDP_QKEY, "RDMA_UDP_QKEY");
static_assert(sizeof(vl::CM_EVENT_NAMES) / sizeof(vl::CM_EVENT_NAMES[0]) == 16 && sizeof(vl::CM_STATE_NAMES) / sizeof(vl::CM_STATE_NAMES[0]) == 16,
              "cm.h name arrays");

TEST(CmNames, TheNameArraysOfCmHAgreeWithNamesH) {
  for (uint32_t v = 0; v < 16; v++) {
    EXPECT_STREQ(vl::CM_EVENT_NAMES[v], vl::name_of(vl::kCmEventNames, v));
    EXPECT_STREQ(vl::CM_STATE_NAMES[v], vl::name_of(vl::kCmStateNames, v));
  }
}
