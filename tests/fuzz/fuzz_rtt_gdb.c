/* The rtt:gdb= client on arbitrary server replies: the input is everything
 * the "GDB server" sends (acks, packets, stop replies, non-stop %Stop
 * notifications, memory contents), fed through one end of a socketpair
 * that is then closed. The memory-access mode follows the input's length
 * (auto: non-stop when the input's qSupported offers QNonStop+; running;
 * halt), so every mode's reply handling is reached by the same corpus.
 * The same bytes then feed the bare link a Black Magic Probe lifecycle
 * uses (ergon_gdb_link: console output packets, swdp_scan, vAttach and
 * vFlash* replies). The client must fail cleanly (bad checksums, wrong
 * lengths, corrupt control blocks, a closed link) and never read or write
 * outside its buffers. Properties: every refusal says why (a message); a
 * read never reports more bytes than the buffer holds, a write never more
 * than it was given. */
#include "ergon/rtt_gdb.h"
#include "ergon/transport.h"
#include "fuzz_props.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A socketpair whose server end has sent data and is shut; the client end
 * in *client, the server end returned (-1 on failure). */
static int feed(const uint8_t *data, size_t size, int *client)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
		return -1;
	int big = 1 << 20;
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
	setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
	size_t off = 0;
	while (off < size) {
		ssize_t n = write(sv[0], data + off, size - off);
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	shutdown(sv[0], SHUT_WR);
	*client = sv[1];
	return sv[0];
}

static void fuzz_transport(const uint8_t *data, size_t size)
{
	static const char *const opts[] = {
	    ",search=0x20000000:0x400,find_s=0",
	    ",search=0x20000000:0x400,find_s=0,mem=running",
	    ",search=0x20000000:0x400,find_s=0,mem=halt",
	};
	int client = -1;
	int server = feed(data, size, &client);
	if (server < 0)
		return;
	struct ergon_transport *t = NULL;
	struct ergon_err err = {0};
	/* A small region and no retry: every input ends quickly. */
	int rc = ergon_rtt_gdb_open_fd(client, "fuzz", opts[size % 3], &t, &err);
	FUZZ_REQUIRE(rc == 0 || err.msg[0] != '\0');
	if (rc == 0) {
		unsigned char buf[4096];
		for (int i = 0; i < 4; i++) {
			size_t got = 0;
			struct ergon_err re = {0};
			if (ergon_transport_read(t, buf, sizeof buf, 0, &got, &re) != 0) {
				FUZZ_REQUIRE(re.msg[0] != '\0');
				break;
			}
			FUZZ_REQUIRE(got <= sizeof buf);
		}
		size_t w = 0;
		struct ergon_err we = {0};
		if (ergon_rtt_gdb_write_down(t, "GO\n", 3, &w, &we) == 0)
			FUZZ_REQUIRE(w <= 3);
		else
			FUZZ_REQUIRE(we.msg[0] != '\0');
		json_decref(ergon_transport_stats(t));
		ergon_transport_close(t);
	}
	close(server);
}

static void fuzz_link(const uint8_t *data, size_t size)
{
	static const char *const cmds[] = {
	    "qRcmd,737764705f7363616e", "vAttach;1",  "vFlashErase:0,400",
	    "vFlashWrite:0:}\x03}\x04", "vFlashDone", "vRun;"};
	int client = -1;
	int server = feed(data, size, &client);
	if (server < 0)
		return;
	struct ergon_gdb_link *l = NULL;
	struct ergon_err err = {0};
	if (ergon_gdb_link_open_fd(client, "fuzz-link", &l, &err) == 0) {
		char reply[512];
		for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
			if (ergon_gdb_link_cmd(l, cmds[i], strlen(cmds[i]), reply, sizeof reply, 0,
					       &err) != 0)
				break;
			(void)strlen(ergon_gdb_link_console(l));
		}
		ergon_gdb_link_close(l);
	}
	close(server);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 60000)
		return 0;
	fuzz_transport(data, size);
	fuzz_link(data, size);
	return 0;
}
