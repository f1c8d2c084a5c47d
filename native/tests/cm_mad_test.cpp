// The CM MAD codec (native/src/cm/mad.cpp) and the IP CM header (ip_hdr.cpp): bit packing MSB first, every
// message's fields at the kernel's offsets (include/rdma/ibta_vol1_c12.h), round trips, and refusals.
#include <cstring>

#include "cm/ip_hdr.h"
#include "cm/mad.h"
#include "cm_fixture.h"

using namespace vl;
using namespace vl::cm;

TEST(CmMad, BitsAreBigEndianMsbFirst) {
  uint8_t b[8] = {};
  put_bits(b, 0, 32, 0x29a5ee4a);
  EXPECT_EQ(b[0], 0x29); EXPECT_EQ(b[3], 0x4a);
  put_bits(b, 5 * 8 + 5, 2, 3);                  // CM_REQ_TRANSPORT_SERVICE_TYPE-like: bits 5..6 of a byte
  EXPECT_EQ(b[5], 0x06);
  EXPECT_EQ(get_bits(b, 5 * 8 + 5, 2), 3u);
  put_bits(b, 6 * 8, 5, 0x13);                   // a 5-bit field at the top of a byte
  EXPECT_EQ(b[6], 0x98);
  put_bits(b, 6 * 8, 5, 0);
  EXPECT_EQ(b[6], 0);
}

TEST(CmMad, KnownOffsetsOfTheReq) {
  Msg m; m.hdr.attr_id = CM_ATTR_REQ; m.hdr.tid = 0x000000024aeea529ull;
  m.set(F_LOCAL_COMM_ID, 0x29a5ee4a).set(F_SERVICE_ID, 0x1061144).set(F_LOCAL_QPN, 0x11).set(F_RESPONDER_RESOURCES, 0x80)
   .set(F_STARTING_PSN, 0xe60b1b).set(F_LOCAL_CM_RESPONSE_TIMEOUT, 20).set(F_RETRY_COUNT, 7).set(F_PATH_MTU, 3)
   .set(F_RNR_RETRY_COUNT, 7).set(F_MAX_CM_RETRIES, 15).set(F_PRI_FLOW_LABEL, 0x47ef1).set(F_PRI_HOP_LIMIT, 0x40)
   .set(F_PRI_LOCAL_ACK_TIMEOUT, 19).set(F_REMOTE_CM_RESPONSE_TIMEOUT, 20).set(F_END_TO_END_FLOW_CONTROL, 1);
  uint8_t b[256];
  ASSERT_TRUE(encode(m, b));
  // MAD header (IBA 13.4.2): base version, class, class version, method, TID, attribute ID
  EXPECT_EQ(b[0], 1); EXPECT_EQ(b[1], 0x07); EXPECT_EQ(b[2], 2); EXPECT_EQ(b[3], 3);
  EXPECT_EQ(b[8 + 4], 0x4a); EXPECT_EQ(b[16], 0); EXPECT_EQ(b[17], 0x10);
  const uint8_t* r = b + 24;
  EXPECT_EQ(r[0], 0x29);
  EXPECT_EQ(r[8 + 5], 0x06); EXPECT_EQ(r[8 + 6], 0x11); EXPECT_EQ(r[8 + 7], 0x44);   // service ID, big-endian
  EXPECT_EQ(r[34], 0x11); EXPECT_EQ(r[35], 0x80);                                   // QPN, responder resources
  EXPECT_EQ(r[43], 20u << 3 | 0 << 1 | 1);                                          // timeout, type RC, flow control
  EXPECT_EQ(r[44], 0xe6); EXPECT_EQ(r[46], 0x1b);
  EXPECT_EQ(r[47], 20u << 3 | 7);                                                   // local timeout, retry count
  EXPECT_EQ(r[50], 3u << 4 | 7);                                                    // MTU, RDC, RNR retry count
  EXPECT_EQ(r[51], 15u << 4);                                                       // max CM retries
  EXPECT_EQ(r[88], 0x47); EXPECT_EQ(r[89], 0xef); EXPECT_EQ(r[90] >> 4, 0x1);       // flow label (20 bits)
  EXPECT_EQ(r[93], 0x40); EXPECT_EQ(r[95], 19u << 3);
  Msg d;
  std::string why;
  ASSERT_TRUE(decode(b, 256, d, &why)) << why;
  for (int f = 0; f < F_COUNT; f++) EXPECT_EQ(d.f[f], m.f[f]) << kFieldNames[f];
}

TEST(CmMad, EveryLayoutRoundTripsAndFieldsDoNotOverlap) {
  for (uint16_t attr = CM_ATTR_REQ; attr <= CM_ATTR_SIDR_REP; attr++) {
    const Layout* l = layout(attr);
    ASSERT_TRUE(l) << attr;
    // no two fields (nor a field and the GIDs / info / private data) share a bit
    uint8_t used[232] = {};
    auto claim = [&](unsigned pos, unsigned w, const char* what) {
      for (unsigned i = pos; i < pos + w; i++) {
        ASSERT_LT(i / 8, 232u) << l->name << " " << what;
        ASSERT_FALSE(used[i / 8] & (0x80 >> (i % 8))) << l->name << " " << what << " overlaps at bit " << i;
        used[i / 8] |= uint8_t(0x80 >> (i % 8));
      }
    };
    for (size_t i = 0; i < l->nfields; i++) claim(l->fields[i].byte * 8u + l->fields[i].bit, l->fields[i].width, kFieldNames[l->fields[i].f]);
    if (l->gid_off) claim(l->gid_off * 8u, 256, "GIDs");
    if (l->info_off) claim(l->info_off * 8u, 72 * 8, "info");
    claim(l->pdata_off * 8u, l->pdata_len * 8u, "private data");
    EXPECT_EQ(l->pdata_off + l->pdata_len, 232) << l->name << ": private data ends the message";
    // all ones in every field round-trip
    Msg m; m.hdr.attr_id = attr; m.hdr.tid = 0x0123456789abcdefull;
    for (size_t i = 0; i < l->nfields; i++) m.f[l->fields[i].f] = l->fields[i].width == 64 ? ~0ull : (1ull << l->fields[i].width) - 1;
    for (size_t i = 0; i < l->pdata_len; i++) m.pdata[i] = uint8_t(i * 3 + 1);
    uint8_t b[256];
    ASSERT_TRUE(encode(m, b));
    Msg d;
    ASSERT_TRUE(decode(b, 256, d, nullptr));
    EXPECT_EQ(d.hdr.tid, m.hdr.tid);
    for (int f = 0; f < F_COUNT; f++) EXPECT_EQ(d.f[f], m.f[f]) << l->name << " " << kFieldNames[f];
    EXPECT_EQ(std::memcmp(d.pdata, m.pdata, l->pdata_len), 0);
  }
}

TEST(CmMad, DecodeRefusals) {
  Msg m; m.hdr.attr_id = CM_ATTR_RTU;
  uint8_t b[256];
  ASSERT_TRUE(encode(m, b));
  std::string why;
  Msg d;
  EXPECT_FALSE(decode(b, 255, d, &why)); EXPECT_NE(why.find("255"), std::string::npos);
  for (auto [off, v] : {std::pair{0, 2}, {1, 0x81}, {2, 1}, {3, 0x81}, {17, 0x19}, {17, 0x30}}) {
    uint8_t c[256]; std::memcpy(c, b, 256); c[off] = uint8_t(v);
    EXPECT_FALSE(decode(c, 256, d, &why)) << off;
  }
  m.hdr.attr_id = 0x42;
  EXPECT_FALSE(encode(m, b));
}

TEST(CmIpHdr, FormatAndServiceIds) {
  const CmAddr src = vlcm::v4("192.168.77.2", 0xa8b3), dst = vlcm::v4("192.168.77.1", 4420);
  uint8_t h[36];
  put_ip_hdr(h, src, dst);
  const uint8_t want[36] = {0, 0x40, 0xa8, 0xb3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xc0, 0xa8, 0x4d, 0x02,
                            0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xc0, 0xa8, 0x4d, 0x01};   // the kernel's, from the capture
  EXPECT_EQ(std::memcmp(h, want, 36), 0);
  CmAddr s2, d2;
  ASSERT_TRUE(get_ip_hdr(h, s2, d2, nullptr));
  EXPECT_EQ(std::memcmp(s2.ip, src.ip, 16), 0);
  EXPECT_EQ(s2.port, 0xa8b3);
  EXPECT_EQ(addr_text(d2), "192.168.77.1:0");
  const CmAddr s6 = vlcm::v6("fe80::1", 1), d6 = vlcm::v6("2001:db8::2", 2);
  put_ip_hdr(h, s6, d6);
  EXPECT_EQ(h[1], 0x60);
  ASSERT_TRUE(get_ip_hdr(h, s2, d2, nullptr));
  EXPECT_EQ(std::memcmp(d2.ip, d6.ip, 16), 0);
  h[0] = 1;
  EXPECT_FALSE(get_ip_hdr(h, s2, d2, nullptr));
  EXPECT_EQ(service_id(CM_PS_TCP, 4420), 0x1061144u);
  EXPECT_TRUE(is_ip_service(0x1061144));
  EXPECT_FALSE(is_ip_service(0x200061144ull));
  EXPECT_EQ(service_ps(0x1111b58), uint32_t(CM_PS_UDP));
  EXPECT_EQ(service_port(0x1111b58), 0x1b58);
}
