#!/usr/bin/env python3
"""A fake GDB remote-serial-protocol server with a SEGGER RTT target, for
the pyocd and bmp lifecycles' tests (nobody here has the probes).

    fake_gdb_rtt.py --stream FILE (--port N | --pty LINKFILE)
                    [--nonstop] [--bmp] [--calls FILE] [--flash-out FILE]
                    [--power-stream FILE --image-file FILE]

The "target" is 64 KiB of RAM at 0x20000000 holding the standard RTT block
at 0x20000100 (16-byte ID, max_up 1, max_down 1, descriptors of 24 bytes,
ergon's "ERGD" extension), up ring 1024 bytes at 0x20001000. The block
appears when the target first runs; each `c` (all-stop) or each read of
the block's header while running (--nonstop, answered with QNonStop+ and
memory reads while running) writes the next 256 bytes of FILE into the up
ring, as far as the host has drained it.

--port N serves TCP on 127.0.0.1:N (pyocd gdbserver); each connection
is a fresh boot, of --power-stream when --image-file (the fake probe's
last flashed image) names a power build. --pty LINKFILE
opens a pseudo-terminal, writes the slave's path to LINKFILE and serves the
master, like a Black Magic Probe's GDB port; --bmp adds what that firmware
answers: `qRcmd` (monitor swdp_scan, reset), vAttach;1 (memory before it is
refused), vFlashErase/vFlashWrite/vFlashDone (flash at 0x00000000..
0x00100000; --flash-out gets the flashed bytes as JSON {"0xADDR": "hex"}
of contiguous runs) and vRun (reset: the target halts at the reset vector
and the block is rebuilt when it runs). Every packet received is appended
to --calls, one per line.
"""
import argparse
import json
import os
import socket
import sys
import time
import tty

BASE, MEM = 0x20000000, 0x80000  # the RTT reader's default search range
CB, UP, UPSIZE, DN, DNSIZE = 0x20000100, 0x20001000, 1024, 0x20002000, 16
FLASH = 0x100000
CHUNK = 256


def csum(b):
    return b"%02x" % (sum(b) & 0xFF)


class Target:
    def __init__(self, stream, bmp):
        self.ram = bytearray(MEM)
        self.stream = stream
        self.pos = 0
        self.block = False
        self.running = False
        self.attached = not bmp
        self.flash = {}  # addr -> byte
        self.erased = []

    def put32(self, a, v):
        self.ram[a - BASE:a - BASE + 4] = v.to_bytes(4, "little")

    def get32(self, a):
        return int.from_bytes(self.ram[a - BASE:a - BASE + 4], "little")

    def reset(self):
        self.ram = bytearray(MEM)
        self.pos = 0
        self.block = False
        self.running = False

    def runs(self):
        if not self.block:
            self.ram[CB - BASE:CB - BASE + 16] = b"SEGGER RTT" + bytes(6)
            self.put32(CB + 16, 1)
            self.put32(CB + 20, 1)
            self.put32(CB + 28, UP)
            self.put32(CB + 32, UPSIZE)
            self.put32(CB + 52, DN)
            self.put32(CB + 56, DNSIZE)
            self.ram[CB + 72 - BASE:CB + 76 - BASE] = b"ERGD"
            self.block = True
        wr, rd = self.get32(CB + 36), self.get32(CB + 40)
        for _ in range(CHUNK):
            nxt = (wr + 1) % UPSIZE
            if nxt == rd or self.pos >= len(self.stream):
                break
            self.ram[UP - BASE + wr] = self.stream[self.pos]
            self.pos += 1
            wr = nxt
        self.put32(CB + 36, wr)


class Server:
    def __init__(self, args, target, rfd, wfd):
        self.a, self.t, self.rfd, self.wfd = args, target, rfd, wfd
        self.noack = False
        self.nonstop = False
        self.calls = open(args.calls, "a") if args.calls else None

    def send(self, data):
        while data:
            n = os.write(self.wfd, data)
            data = data[n:]

    def reply(self, payload):
        if isinstance(payload, str):
            payload = payload.encode()
        self.send(b"$" + payload + b"#" + csum(payload))

    def mem_reply(self, addr, n):
        if addr >= BASE and addr + n <= BASE + MEM:
            return self.t.ram[addr - BASE:addr - BASE + n].hex()
        if addr + n <= FLASH:
            return bytes(self.t.flash.get(addr + i, 0xFF) for i in range(n)).hex()
        return "E01"

    def handle(self, pk):
        t, a = self.t, self.a
        if self.calls:
            self.calls.write(pk[:80].decode("latin-1") + "\n")
            self.calls.flush()
        if pk.startswith(b"qSupported"):
            feats = "PacketSize=1000;QStartNoAckMode+"
            if a.nonstop:
                feats += ";QNonStop+"
            return self.reply(feats)
        if pk == b"QStartNoAckMode":
            self.reply("OK")
            self.noack = True
            return
        if pk == b"QNonStop:1" and a.nonstop:
            self.nonstop = True
            return self.reply("OK")
        if pk.startswith(b"qRcmd,") and a.bmp:
            cmd = bytes.fromhex(pk[6:].decode()).decode()
            if cmd == "swdp_scan":
                out = "Target voltage: 3.3V\nAvailable Targets:\nNo. Att Driver\n 1      ARM Cortex-M33\n"
            elif cmd == "reset":
                t.reset()
                out = ""
            else:
                return self.reply("E01")
            if out:
                self.reply("O" + out.encode().hex())
            return self.reply("OK")
        if pk.startswith(b"vAttach;") and a.bmp:
            t.attached = True
            t.running = False
            return self.reply("T05thread:1;")
        if not t.attached:
            return self.reply("W00" if pk == b"?" else "E01")
        if pk == b"?":
            if self.nonstop:
                return self.reply("OK" if t.running else "T05thread:1;")
            return self.reply("S05")
        if pk.startswith(b"vRun") and a.bmp:
            t.reset()
            return self.reply("T05thread:1;")
        if pk.startswith(b"vFlashErase:") and a.bmp:
            addr, ln = (int(x, 16) for x in pk[12:].decode().split(","))
            if addr + ln > FLASH:
                return self.reply("E01")
            t.erased.append((addr, ln))
            for i in range(addr, addr + ln):
                t.flash[i] = 0xFF
            return self.reply("OK")
        if pk.startswith(b"vFlashWrite:") and a.bmp:
            rest = pk[12:]
            colon = rest.index(b":")
            addr = int(rest[:colon].decode(), 16)
            data = rest[colon + 1:]
            for i, b in enumerate(data):
                if not any(s <= addr + i < s + n for s, n in t.erased):
                    return self.reply("E02")  # writing flash that was not erased
                t.flash[addr + i] = b
            return self.reply("OK")
        if pk == b"vFlashDone" and a.bmp:
            if a.flash_out:
                runs, cur, start = {}, bytearray(), None
                for k in sorted(t.flash):
                    if start is not None and k == start + len(cur):
                        cur.append(t.flash[k])
                    else:
                        if start is not None:
                            runs["0x%08x" % start] = cur.hex()
                        start, cur = k, bytearray([t.flash[k]])
                if start is not None:
                    runs["0x%08x" % start] = cur.hex()
                with open(a.flash_out + ".tmp", "w") as f:
                    json.dump(runs, f)
                os.rename(a.flash_out + ".tmp", a.flash_out)
            return self.reply("OK")
        if pk == b"vStopped" and self.nonstop:
            return self.reply("OK")
        if pk == b"vCont;c" and self.nonstop:
            t.running = True
            t.runs()
            return self.reply("OK")
        if pk == b"c":
            t.running = True
            t.runs()
            return
        if pk[:1] == b"m":
            addr, n = (int(x, 16) for x in pk[1:].decode().split(","))
            if t.running and not self.nonstop:
                return self.reply("E99")  # all-stop: no packets while running
            if t.running and addr == CB:
                t.runs()
            return self.reply(self.mem_reply(addr, n))
        if pk[:1] == b"M":
            head, data = pk[1:].split(b":", 1)
            addr, n = (int(x, 16) for x in head.decode().split(","))
            if t.running and not self.nonstop:
                return self.reply("E99")
            if not (addr >= BASE and addr + n <= BASE + MEM):
                return self.reply("E01")
            t.ram[addr - BASE:addr - BASE + n] = bytes.fromhex(data.decode())
            return self.reply("OK")
        if pk == b"k" or pk.startswith(b"D"):
            return self.reply("OK")
        return self.reply("")

    def serve(self):
        """Frames in until the link closes; False when it did."""
        state, pk, esc = 0, bytearray(), False
        while True:
            try:
                data = os.read(self.rfd, 4096)
            except OSError:
                return False
            if not data:
                return False
            for c in data:
                if state == 0:
                    if c == 3:
                        if self.t.running and not self.nonstop:
                            self.t.running = False
                            self.reply("T02thread:1;")
                    elif c == ord("$"):
                        state, pk = 1, bytearray()
                elif state == 1:
                    if c == ord("#"):
                        state = 2
                    elif esc:
                        pk.append(c ^ 0x20)
                        esc = False
                    elif c == ord("}"):
                        esc = True
                    else:
                        pk.append(c)
                elif state == 2:
                    state = 3
                else:
                    state = 0
                    if not self.noack:
                        self.send(b"+")
                    self.handle(bytes(pk))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--stream", required=True)
    p.add_argument("--port", type=int)
    p.add_argument("--pty")
    p.add_argument("--nonstop", action="store_true")
    p.add_argument("--bmp", action="store_true")
    p.add_argument("--calls")
    p.add_argument("--flash-out")
    p.add_argument("--power-stream")
    p.add_argument("--image-file")
    a = p.parse_args()
    t = Target(open(a.stream, "rb").read(), a.bmp)
    if a.pty:
        master, slave = os.openpty()
        tty.setraw(slave)
        tty.setraw(master)
        name = os.ttyname(slave)
        with open(a.pty + ".tmp", "w") as f:
            f.write(name)
        os.rename(a.pty + ".tmp", a.pty)
        # The slave stays open here too, so that a client closing it (a
        # lifecycle step ends) does not hang the master up; state (the
        # attach, the flash, the target) lives on, as on a real BMP.
        while True:
            s = Server(a, t, master, master)
            if not s.serve():
                time.sleep(0.05)
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", a.port))
    ls.listen(1)
    while True:
        c, _ = ls.accept()
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        stream = a.stream
        if a.power_stream and a.image_file and os.path.exists(a.image_file):
            if "power" in open(a.image_file).read():
                stream = a.power_stream
        t = Target(open(stream, "rb").read(), a.bmp)
        Server(a, t, c.fileno(), c.fileno()).serve()
        c.close()


if __name__ == "__main__":
    sys.exit(main())
