-- SPDX-License-Identifier: BSD-3-Clause
--
-- Scenario B of the interop tests, driven by pktgen-dpdk: flood the switch's
-- vm-blue-1 port with syntactically valid but meaningless RoCEv2 for a few
-- seconds: 64-byte UDP 4791 frames whose payload is all zeros, so the BTH
-- reads RC SEND First to QP 0 with no valid ICRC (the frames testpmd's txonly
-- makes).  The switch must drop every one under a named reason while other
-- tenants' traffic keeps flowing:
--
--   ROCE_PKTGEN_DST 192.168.1.20  a blue endpoint with no QP 0 -> "no_connection"
--   ROCE_PKTGEN_DST 192.168.1.99  not a blue endpoint          -> "wrong_tenant"
--
-- The source is blue's own 192.168.1.10 and the port's MAC should be blue's
-- 02:00:00:00:aa:10 (the virtio_user "mac=" devarg), so that no other check
-- decides first.
--
--   pktgen -l 0,1 --main-lcore 1 --no-pci --file-prefix pg \
--       --vdev net_virtio_user0,path=/tmp/vhost-blue.sock,mac=02:00:00:00:aa:10 \
--       --single-file-segments --in-memory \
--       -- -P -m "0.0" -f pktgen-scripts/junk-flood.lua
--
-- Settings (environment):
--   ROCE_PKTGEN_PORT     pktgen port facing the switch            (0)
--   ROCE_PKTGEN_DST      destination IP                           (192.168.1.20)
--   ROCE_PKTGEN_SECONDS  how long to send                         (3)
--   ROCE_PKTGEN_RATE     percent of the port's link speed         (100)
--   ROCE_PKTGEN_RESULT   file the JSON result line is appended to (none)
--   ROCE_PKTGEN_QUIT     1: quit pktgen at the end                (0)

local here = "pktgen-scripts/"
if debug and debug.getinfo then
	local src = debug.getinfo(1, "S").source
	here = src:match("^@(.*/)") or "./"
end
package.path = here .. "?.lua;" .. package.path
local rc = require "roce_common"
local printf = printf or function(...) io.write(string.format(...)) end

local port = rc.env("ROCE_PKTGEN_PORT", "0")
local dst = rc.env("ROCE_PKTGEN_DST", "192.168.1.20")
local seconds = tonumber(rc.env("ROCE_PKTGEN_SECONDS", "3"))
local rate = rc.env("ROCE_PKTGEN_RATE", "100")

pktgen.screen("off")
pktgen.stop(port)
pktgen.clr()
-- Single-packet mode, even if a capture was loaded with -s.
pktgen.pcap(port, "off")
pktgen.set_type(port, "ipv4")
pktgen.set_proto(port, "udp")
pktgen.set_ipaddr(port, "src", "192.168.1.10/24")
pktgen.set_ipaddr(port, "dst", dst)
rc.set_dst_mac(port, "02:00:00:00:01:01")   -- vm-blue-1's MAC, the tenant's gateway
pktgen.set(port, "sport", 4791)
pktgen.set(port, "dport", 4791)
pktgen.set(port, "size", 64)
-- All-zero payload: the BTH is opcode 0 (RC SEND First), DestQP 0.  With
-- pktgen's default "abc" pattern the opcode would be 0x61 and the switch
-- would say bad_opcode instead.
pktgen.pattern(port, "zero")
pktgen.set(port, "count", 0)                 -- until stopped
pktgen.set(port, "rate", rate)

printf("junk-flood: %ds of 64-byte UDP 4791 junk to %s on port %s\n", seconds, dst, port)
pktgen.start(port)
pktgen.delay(seconds * 1000)
pktgen.stop(port)
local st = rc.settled_stats(port)

local fields = {
	{ "script", "junk-flood" }, { "port", tonumber(port) }, { "dst", dst },
	{ "seconds", seconds },
}
for _, kv in ipairs(rc.stats_fields(st)) do
	fields[#fields + 1] = kv
end
rc.report(fields)
rc.finish()
