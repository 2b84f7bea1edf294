"""A stand-in for openocd, for tests/functional/test_profile_probes.sh: it
records its arguments ("ARG ...") and every TCL command ("TCL ...") in
$FAKE_OCD_CALLS, serves OpenOCD's TCL command interface (commands and
replies end in 0x1a) on the port of `-c "tcl_port N"` (0: the kernel's
pick), and answers the commands ergon's openocd lifecycle sends the way
OpenOCD 0.12's documentation describes them:
  program/reset/resume/rtt setup/rtt start/rtt stop/rtt server stop: ""
  rtt channels: "rtt: Control block not available" for the first
                $FAKE_OCD_CB_AFTER (default 1) `rtt start`s, then
                "Channels: up=1, down=1"
  rtt server start PORT 0: serves $FAKE_OCD_STREAM to each client on PORT
  info procs ergon_swpoi_reset: the name when $FAKE_OCD_SWPOI=1, else ""
  mww ADDR VALUE: "" (a memory write)
  resume / mww / ergon_swpoi_reset with $FAKE_OCD_UART_TRIGGER set (a
                serial stream): records "PORT_OPEN_AT_RESET yes|no" (whether
                $FAKE_OCD_UART_PTS was open by any process) and creates the
                trigger file, so the fake UART (uart_pty.py) sends the boot
  version: "Open On-Chip Debugger 0.12.0 (fake)"; shutdown: exits
  anything else: the error 'invalid command name "X"'.
Commands arrive wrapped in ergon's catch wrapper, which it unwraps. It is
a fake: tests/functional/test_openocd_tcl.c runs the real openocd."""
import os
import re
import socket
import sys
import threading
import time

calls = open(os.environ["FAKE_OCD_CALLS"], "a", buffering=1)
for a in sys.argv[1:]:
    calls.write("ARG %s\n" % a)
calls.write("--\n")
stream = os.environ.get("FAKE_OCD_STREAM", "")
cb_after = int(os.environ.get("FAKE_OCD_CB_AFTER", "1"))
swpoi = os.environ.get("FAKE_OCD_SWPOI") == "1"
tcl_port = None
for i, a in enumerate(sys.argv):
    m = re.match(r"tcl_port (\d+)$", a)
    if m:
        tcl_port = int(m.group(1))
if tcl_port is None:
    sys.exit(0)  # a one-shot run (nothing to serve)


def rtt_server(port):
    data = open(stream, "rb").read() if stream else b""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(8)
    while True:
        c, _ = s.accept()
        try:
            c.sendall(data)
        finally:
            c.close()


starts = 0


def port_open(path):
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            for fd in os.listdir("/proc/%s/fd" % pid):
                if os.readlink("/proc/%s/fd/%s" % (pid, fd)) == path:
                    return True
        except OSError:
            pass
    return False


def target_started():
    trigger = os.environ.get("FAKE_OCD_UART_TRIGGER")
    if not trigger:
        return
    seen = port_open(os.environ.get("FAKE_OCD_UART_PTS", ""))
    calls.write("PORT_OPEN_AT_RESET %s\n" % ("yes" if seen else "no"))
    open(trigger, "w").close()


def answer(cmd):
    global starts
    if cmd == "resume" or cmd.startswith("mww ") or (cmd == "ergon_swpoi_reset" and swpoi):
        target_started()
    if cmd.startswith("mww "):
        return True, ""
    if cmd == "version":
        return True, "Open On-Chip Debugger 0.12.0 (fake)"
    if cmd.startswith("program ") or cmd in ("reset halt", "reset run", "resume", "rtt stop"):
        return True, ""
    if cmd.startswith("rtt setup ") or cmd.startswith("rtt server stop "):
        return True, ""
    if cmd == "rtt start":
        starts += 1
        return True, ""
    if cmd == "rtt channels":
        if starts > cb_after - 1 and starts >= 1:
            return True, "Channels: up=1, down=1"
        return True, "rtt: Control block not available"
    m = re.match(r"rtt server start (\d+) 0$", cmd)
    if m:
        threading.Thread(target=rtt_server, args=(int(m.group(1)),), daemon=True).start()
        time.sleep(0.05)
        return True, ""
    if cmd == "info procs ergon_swpoi_reset":
        return True, "ergon_swpoi_reset" if swpoi else ""
    if cmd == "ergon_swpoi_reset" and swpoi:
        return True, ""
    if cmd == "shutdown":
        return True, "shutdown command invoked"
    return False, 'invalid command name "%s"' % cmd.split(" ")[0]


ls = socket.socket()
ls.bind(("127.0.0.1", tcl_port))
ls.listen(1)
c, _ = ls.accept()
buf = b""
wrap = re.compile(r"^if \{\[catch \{(.*)\} ergon_m\]\} ", re.S)
while True:
    d = c.recv(4096)
    if not d:
        break
    buf += d
    while b"\x1a" in buf:
        raw, buf = buf.split(b"\x1a", 1)
        text = raw.decode()
        m = wrap.match(text)
        cmd = m.group(1) if m else text
        calls.write("TCL %s\n" % cmd)
        ok, res = answer(cmd)
        out = res if not m else ("OK:" if ok else "ERR:") + res
        c.sendall(out.encode() + b"\x1a")
        if cmd == "shutdown":
            sys.exit(0)
