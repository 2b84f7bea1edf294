"""A stand-in for a target's UART / USB CDC port, for
tests/functional/test_profile_probes.sh: it opens a pseudo-terminal, writes
the slave's path to PATH_FILE and closes its own slave side (so only the
program under test holds the port), waits until TRIGGER exists (the fake
probe creates it when it resets the target) and then writes STREAM to the
master, as the target's boot would. A real UART keeps nothing sent while no
one has the port open, so the fake probe also records whether the port was
open at the reset. It waits at most HOLD_S seconds for the trigger, and
keeps the port HOLD_S seconds after writing (closing the master would hang
up the port before the reader drained it); the test kills it at its end.
usage: uart_pty.py PATH_FILE TRIGGER STREAM HOLD_S"""
import os
import sys
import time

path_file, trigger, stream, hold_s = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
master, slave = os.openpty()
name = os.ttyname(slave)
os.close(slave)
with open(path_file + ".tmp", "w") as f:
    f.write(name + "\n")
os.rename(path_file + ".tmp", path_file)
t0 = time.time()
while not os.path.exists(trigger):
    if time.time() - t0 > hold_s:
        sys.exit(1)
    time.sleep(0.02)
data = open(stream, "rb").read()
for i in range(0, len(data), 4096):
    os.write(master, data[i : i + 4096])
end = time.time() + hold_s
while time.time() < end:
    time.sleep(0.1)
