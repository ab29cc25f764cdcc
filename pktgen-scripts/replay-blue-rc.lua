-- SPDX-License-Identifier: BSD-3-Clause
--
-- Scenario A of the interop tests, driven by pktgen-dpdk: replay blue's RC
-- traffic (tests/interop/data/blue-rc.pcap, made by tests/interop/gen_pcaps.py)
-- into the switch's vm-blue-1 port, PASSES times, then report pktgen's port
-- counters.  The switch renames 55 of the 59 frames to the fabric and sends
-- the 4 hairpin frames (.11 qp 18 <-> .10 qp 19) back out of vm-blue-1, so
-- pktgen receives 4 per pass (examples/interop-testpmd.json).
--
--   pktgen -l 0,1 --main-lcore 1 --no-pci --file-prefix pg \
--       --vdev net_virtio_user0,path=/tmp/vhost-blue.sock,mac=02:00:00:00:aa:10 \
--       --single-file-segments --in-memory \
--       -- -P -j -m "0.0" -s 0:tests/interop/data/blue-rc.pcap \
--       -f pktgen-scripts/replay-blue-rc.lua
--
-- Settings (environment):
--   ROCE_PKTGEN_PORT     pktgen port facing the switch            (0)
--   ROCE_PKTGEN_FRAMES   frames in the capture given with -s      (59)
--   ROCE_PKTGEN_PASSES   times to send the capture                (1)
--   ROCE_PKTGEN_RATE     percent of the port's link speed         (10)
--   ROCE_PKTGEN_RESULT   file the JSON result line is appended to (none)
--   ROCE_PKTGEN_QUIT     1: quit pktgen at the end                (0)
--
-- pktgen sends a capture given with "-s P:file" when the port is in pcap
-- mode, looping over it; "count" bounds the frames sent.  The script stops the
-- port itself once the count is reached in case a release loops on.

local here = "pktgen-scripts/"
if debug and debug.getinfo then
	local src = debug.getinfo(1, "S").source
	here = src:match("^@(.*/)") or "./"
end
package.path = here .. "?.lua;" .. package.path
local rc = require "roce_common"
local printf = printf or function(...) io.write(string.format(...)) end

local port = rc.env("ROCE_PKTGEN_PORT", "0")
local frames = tonumber(rc.env("ROCE_PKTGEN_FRAMES", "59"))
local passes = tonumber(rc.env("ROCE_PKTGEN_PASSES", "1"))
local rate = rc.env("ROCE_PKTGEN_RATE", "10")
local target = frames * passes

pktgen.screen("off")
pktgen.stop(port)
pktgen.clr()
pktgen.pcap(port, "on")
pktgen.set(port, "rate", rate)
pktgen.set(port, "count", target)

printf("replay-blue-rc: sending %d frames (%d x %d) on port %s at %s%%\n", target, passes, frames, port, rate)
pktgen.start(port)
local st, done = rc.wait_for(port, function(s) return s.opackets >= target end, 30000)
pktgen.stop(port)
-- The hairpin frames come back through the switch, and pktgen's counters
-- lag: read them once they hold still.
st = rc.settled_stats(port)

local fields = {
	{ "script", "replay-blue-rc" }, { "port", tonumber(port) }, { "frames", frames },
	{ "passes", passes }, { "target", target }, { "reached", done },
}
for _, kv in ipairs(rc.stats_fields(st)) do
	fields[#fields + 1] = kv
end
rc.report(fields)
rc.finish()
