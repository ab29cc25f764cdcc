-- SPDX-License-Identifier: BSD-3-Clause
--
-- Helpers shared by the pktgen-dpdk scripts of dpdk-roce-vswitch: settings
-- from the environment, waiting on port counters, and a one-line JSON result
-- that pktgen-scripts/check.sh compares with the switch's exit summary.
--
-- Loaded with require "roce_common" after the caller has put this folder on
-- package.path (see replay-blue-rc.lua).  Only pktgen's documented Lua API is
-- used: pktgen.portStats, pktgen.delay, pktgen.set_mac and printf.

local M = {}

-- pktgen provides printf; plain Lua (a syntax check) does not.
local printf = printf or function(...) io.write(string.format(...)) end

local getenv = (os and os.getenv) or function() return nil end

-- A setting from the environment, or its default.
function M.env(name, default)
	local v = getenv(name)
	if v == nil or v == "" then
		return default
	end
	return v
end

-- The counters of one port: pktgen.portStats(portlist, "port") returns a
-- table indexed by port id, each with ipackets, opackets, ibytes, obytes,
-- ierrors, oerrors and rx_nombuf.
function M.port_stats(port)
	local all = pktgen.portStats(port, "port")
	local st = all[tonumber(port)]
	if st == nil then
		error("pktgen.portStats(" .. port .. ") has no entry for port " .. port)
	end
	return st
end

-- Poll every @step_ms until pred(stats) holds or @limit_ms pass; returns the
-- last stats and whether the predicate held.
function M.wait_for(port, pred, limit_ms, step_ms)
	local waited = 0
	step_ms = step_ms or 100
	local st = M.port_stats(port)
	while not pred(st) and waited < limit_ms do
		pktgen.delay(step_ms)
		waited = waited + step_ms
		st = M.port_stats(port)
	end
	return st, pred(st)
end

-- The counters once they stop moving.  pktgen refreshes the counters that
-- portStats returns from a periodic timer (about once a second), so a read
-- right after stop() can lag the frames really sent: read until opackets and
-- ipackets have held still for @quiet_ms (default 1500), at most @limit_ms
-- (default 6000).
function M.settled_stats(port, quiet_ms, limit_ms)
	quiet_ms = quiet_ms or 1500
	limit_ms = limit_ms or 6000
	local st = M.port_stats(port)
	local still, waited = 0, 0
	while still < quiet_ms and waited < limit_ms do
		pktgen.delay(250)
		waited = waited + 250
		local now = M.port_stats(port)
		if now.opackets == st.opackets and now.ipackets == st.ipackets then
			still = still + 250
		else
			still = 0
		end
		st = now
	end
	return st
end

-- pktgen.set_mac took (portlist, mac) in old releases and takes
-- (portlist, "src"|"dst", mac) in current ones.
function M.set_dst_mac(port, mac)
	if not pcall(pktgen.set_mac, port, "dst", mac) then
		pktgen.set_mac(port, mac)
	end
end

-- One JSON object on one line, keys in the given order (strings or integers).
local function json_line(fields)
	local parts = {}
	for _, kv in ipairs(fields) do
		local k, v = kv[1], kv[2]
		if type(v) == "number" then
			v = string.format("%d", v)
		elseif type(v) == "boolean" then
			v = v and "true" or "false"
		else
			v = string.format("%q", tostring(v))
		end
		parts[#parts + 1] = string.format("%q: %s", k, v)
	end
	return "{" .. table.concat(parts, ", ") .. "}"
end

-- Print the result and append it to $ROCE_PKTGEN_RESULT (when set).
function M.report(fields)
	local line = json_line(fields)
	printf("ROCE_RESULT %s\n", line)
	local path = M.env("ROCE_PKTGEN_RESULT", nil)
	if path then
		local f = assert(io.open(path, "a"))
		f:write(line, "\n")
		f:close()
	end
	return line
end

-- The standard fields of a port's counters.
function M.stats_fields(st)
	return {
		{ "opackets", st.opackets or 0 }, { "obytes", st.obytes or 0 },
		{ "oerrors", st.oerrors or 0 }, { "ipackets", st.ipackets or 0 },
		{ "ibytes", st.ibytes or 0 }, { "ierrors", st.ierrors or 0 },
		{ "rx_nombuf", st.rx_nombuf or 0 },
	}
end

-- Leave pktgen when the script is run by check.sh (ROCE_PKTGEN_QUIT=1).
function M.finish()
	if M.env("ROCE_PKTGEN_QUIT", "0") == "1" then
		pktgen.quit()
	end
end

return M
