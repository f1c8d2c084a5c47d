-- icrc_check.lua: a Wireshark/tshark post-dissector that recomputes the RoCEv2 ICRC of every UDP datagram to
-- port 4791 (IPv4 and IPv6) and says whether the four bytes on the wire match.
--
-- It is the tests' independent referee: it shares no code with the device's C++ codec (native/src/wire), so a
-- frame the device wrote and this script calls "good" was checked by a second implementation, written from the
-- published formulation rather than from ours. The formulation is the Linux kernel's
-- (drivers/infiniband/sw/rxe/rxe_icrc.c, rxe_icrc_hdr() and rxe_icrc_check()), itself IBTA Vol. 1 Annex A17:
--   CRC-32 (reflected, polynomial 0xEDB88320, register preset to all ones) over
--     8 bytes of 0xFF                       the masked LRH that RoCEv2 does not carry
--     the IP header with its variant fields replaced by ones:
--        IPv4: TOS (byte 1), TTL (byte 8), header checksum (bytes 10-11)
--        IPv6: traffic class and flow label (low nibble of byte 0, bytes 1-3), hop limit (byte 7)
--     the UDP header with its checksum (bytes 6-7) replaced by ones
--     the BTH with byte 4 (FECN, BECN, resv6a) replaced by ones
--     the rest of the UDP payload up to, not including, the last four bytes (extension headers, payload, pad)
--   then the register complemented; it is sent least-significant byte first (like an Ethernet FCS).
--
-- More UDP ports (two test hosts on one machine listen on other ports than 4791) are given as script arguments:
--   tshark -X lua_script:icrc_check.lua -X lua_script1:5001 -X lua_script1:5002 -d udp.port==5001,infiniband ...
-- Fields added (tshark -X lua_script:native/tests/tshark/icrc_check.lua -T fields -e ...):
--   icrc_check.status    "good" | "bad" | "short" (a UDP payload too small to hold a BTH and an ICRC)
--   icrc_check.value     the CRC-32 value computed (0x93549c33 for WIRE example frame 1)
--   icrc_check.expected  the four bytes that should be on the wire, read big-endian, i.e. the notation of
--                        Wireshark's own infiniband.invariant.crc (0x339c5493 for that frame): on a good frame the
--                        two fields are equal
-- plus an expert error (group Checksum) on a mismatch, so `tshark -z expert` lists bad frames.
-- Written for tshark 4.0 (Lua 5.2: bit32 library, no native bitwise operators).

local proto = Proto("icrc_check", "RoCEv2 ICRC check (independent)")
local F_STATUS = ProtoField.string("icrc_check.status", "ICRC status")
local F_VALUE = ProtoField.uint32("icrc_check.value", "Computed CRC-32", base.HEX)
local F_EXPECTED = ProtoField.uint32("icrc_check.expected", "Expected ICRC field (as Wireshark shows it)", base.HEX)
local E_MISMATCH = ProtoExpert.new("icrc_check.mismatch", "RoCEv2 ICRC does not match the packet",
                                   expert.group.CHECKSUM, expert.severity.ERROR)
proto.fields = { F_STATUS, F_VALUE, F_EXPECTED }
proto.experts = { E_MISMATCH }

local PORTS = { [4791] = true }                 -- IANA's RoCEv2 port
for _, a in ipairs({ ... }) do
  local n = tonumber(a)
  if n then PORTS[n] = true end
end
local BTH_LEN, ICRC_LEN = 12, 4

local get_udp = Field.new("udp")
local get_udp_dst = Field.new("udp.dstport")
local get_udp_len = Field.new("udp.length")
local get_ipv4 = Field.new("ip")
local get_ipv6 = Field.new("ipv6")

local band, bxor, rshift, bnot = bit32.band, bit32.bxor, bit32.rshift, bit32.bnot

-- the reflected CRC-32 as a 16-entry (one nibble at a time) table; a byte is two steps
local NIBBLE = {}
for n = 0, 15 do
  local r = n
  for _ = 1, 4 do
    r = (band(r, 1) ~= 0) and bxor(rshift(r, 1), 0xEDB88320) or rshift(r, 1)
  end
  NIBBLE[n] = r
end

local function feed(reg, s)
  for i = 1, #s do
    reg = bxor(reg, s:byte(i))
    reg = bxor(rshift(reg, 4), NIBBLE[band(reg, 15)])
    reg = bxor(rshift(reg, 4), NIBBLE[band(reg, 15)])
  end
  return reg
end

-- s with the byte at 0-based offset `at` replaced by the byte value v
local function put(s, at, v)
  return s:sub(1, at) .. string.char(v) .. s:sub(at + 2)
end

-- the last occurrence of a field in this frame (the innermost header when tunnelled)
local function last(extractor)
  local all = { extractor() }
  return all[#all]
end

function proto.dissector(tvb, pinfo, tree)
  local dst = last(get_udp_dst)
  if dst == nil or not PORTS[dst.value] then return end
  local udp, ulen = last(get_udp), last(get_udp_len)
  if udp == nil or ulen == nil then return end
  local v4, v6 = last(get_ipv4), last(get_ipv6)
  local ip, iplen, is_v4
  if v4 ~= nil and (v6 == nil or v4.offset > v6.offset) then
    ip, iplen, is_v4 = v4, udp.offset - v4.offset, true
  elseif v6 ~= nil then
    ip, iplen, is_v4 = v6, 40, false
  else
    return
  end
  local sub = tree:add(proto, tvb(udp.offset, 0))
  local payload_len = ulen.value - 8
  if payload_len < BTH_LEN + ICRC_LEN or udp.offset + ulen.value > tvb:len() then
    sub:add(F_STATUS, "short")
    return
  end

  local iph = tvb:raw(ip.offset, iplen)
  if is_v4 then
    iph = put(put(put(put(iph, 1, 0xFF), 8, 0xFF), 10, 0xFF), 11, 0xFF)
  else
    iph = put(iph, 0, band(iph:byte(1), 0xF0) + 0x0F)
    iph = put(put(put(put(iph, 1, 0xFF), 2, 0xFF), 3, 0xFF), 7, 0xFF)
  end
  local udph = put(put(tvb:raw(udp.offset, 8), 6, 0xFF), 7, 0xFF)
  local body = tvb:raw(udp.offset + 8, payload_len - ICRC_LEN)
  body = put(body, 4, 0xFF)

  local reg = 0xFFFFFFFF
  reg = feed(reg, string.rep("\255", 8))
  reg = feed(reg, iph)
  reg = feed(reg, udph)
  reg = feed(reg, body)
  local value = bnot(reg)

  -- on the wire least-significant byte first; Wireshark reads those four bytes as a big-endian number
  local b0, b1, b2, b3 = band(value, 0xFF), band(rshift(value, 8), 0xFF), band(rshift(value, 16), 0xFF), rshift(value, 24)
  local expected = ((b0 * 256 + b1) * 256 + b2) * 256 + b3
  local w0, w1, w2, w3 = tvb:raw(udp.offset + ulen.value - ICRC_LEN, 4):byte(1, 4)
  local on_wire = ((w0 * 256 + w1) * 256 + w2) * 256 + w3

  local ok = on_wire == expected
  sub:add(F_STATUS, ok and "good" or "bad")
  sub:add(F_VALUE, value)
  sub:add(F_EXPECTED, expected)
  if not ok then
    sub:add_proto_expert_info(E_MISMATCH, string.format("ICRC on the wire 0x%08x, expected 0x%08x", on_wire, expected))
  end
end

register_postdissector(proto)
