"""A stand-in for a debug probe's RTT TCP server (J-Link telnet, OpenOCD
`rtt server`), for tests/functional/test_profile_probes.sh.

usage: rtt_server.py PORT MODE FILE
  MODE replay : send FILE's bytes to each client, then close
  MODE nostart: send boot chatter without HPX_START, a line every 0.2 s
  MODE stall  : send FILE's first half, then nothing (the target hung)
Each client is served on its own thread (the host probes the port once
before it connects for the capture). Exits after 60 s.
"""
import socket
import sys
import threading
import time

port, mode, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
data = open(path, "rb").read() if path != "-" else b""


def serve(c):
    try:
        if mode == "replay":
            c.sendall(data)
        elif mode == "nostart":
            for i in range(300):
                c.sendall(b"boot: bootloader v1 waiting %d\n" % i)
                time.sleep(0.2)
        elif mode == "stall":
            c.sendall(data[: len(data) // 2])
            time.sleep(60)
    except OSError:
        pass
    finally:
        c.close()


s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen(8)
s.settimeout(60)
end = time.time() + 60
while time.time() < end:
    try:
        c, _ = s.accept()
    except OSError:
        break
    threading.Thread(target=serve, args=(c,), daemon=True).start()
