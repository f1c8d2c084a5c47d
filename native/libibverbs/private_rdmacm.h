// The private interface between this libibverbs.so.1 and the librdmacm.so.1 built beside it (native/librdmacm):
// the process's one software device, its network attachment and its progress. Exported at its own version node
// (VERBSLAB_PRIVATE_1.0 in libibverbs.map) together with vl::Session's cm_* methods (vl/cm.h), so librdmacm.so.1
// drives the device's connection manager through the same vl::Session the verbs use. Not a public header: both
// libraries are built from one tree (scripts/build.mjs) and this struct's layout is checked by its size.
#pragma once
#include <infiniband/verbs.h>

#include <cstddef>
#include <cstdint>

#include "vl/session.h"

struct VerbslabRdmacm {
  size_t size;                                 // sizeof(VerbslabRdmacm) of the library that filled it
  vl::Session* session;                        // the process's session (its public methods take the session lock)
  vl::Handle dev;                              // the software device
  // Puts the device on the network at `address` (a numeric IPv4 / IPv6 address; nullptr or "" = the default:
  // VERBSLAB_ADDR / VERBSLAB_IFACE / the first free 127.0.0.N) unless it is already there. 0 or an errno value;
  // the reason in error().
  int (*attach)(const char* address);
  bool (*attached)();
  const char* (*error)();
  // hook(): called with the session lock held at the end of every progress pass (progress thread, after posts, an
  // empty poll_cq), after the device ran: where the CM's events are taken (Session::cm_get_events).
  void (*set_cm_hook)(void (*hook)());
  // Takes the session lock and runs one progress pass (the MADs a cm_* call queued leave now; its events are handed
  // out), then wakes the progress thread for the timers it armed.
  void (*progress)();
  vl::Handle (*qp_handle)(ibv_qp* qp);         // the device handles of this library's verbs objects
  vl::Handle (*pd_handle)(ibv_pd* pd);
};

// nullptr (errno ENODEV) when the device cannot be created; the reason then in VERBSLAB_DEBUG output.
extern "C" const VerbslabRdmacm* verbslab_private_rdmacm();
