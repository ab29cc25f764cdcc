# SPDX-License-Identifier: BSD-3-Clause
"""The switch's telemetry socket, for the tests that drive it: one command, one answer."""
import json
import socket


def telemetry(prefix, cmd, timeout=30):
    """Send @cmd to the DPDK process of --file-prefix @prefix; return its answer's value
    (None when the command is not registered yet)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(timeout)
    try:
        s.connect("/var/run/dpdk/%s/dpdk_telemetry.v2" % prefix)
        s.recv(1024)
        s.send(cmd.encode())
        reply = b""
        while True:
            chunk = s.recv(1 << 16)
            reply += chunk
            try:
                doc = json.loads(reply.decode())
                break
            except ValueError:
                if not chunk:
                    raise
    finally:
        s.close()
    return doc[cmd.split(",")[0]]
