/* The HTTP daemon of `ergon view --serve` (libmicrohttpd), on
 * 127.0.0.1 only. One internal thread answers the requests one at a time
 * (view_serve.c makes the answers), so the memory in use does not grow
 * with the number of clients: at most CONNECTIONS_MAX connections are
 * accepted, each with libmicrohttpd's bounded header memory and a
 * timeout. Built without libmicrohttpd, ergon_view_serve_start says which
 * package to install. docs/internals/view.md. */
#include "view_internal.h"

#include <sodium.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef ERGON_HAVE_MHD
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <sys/socket.h>

/* Connections open at once; more wait in the kernel's backlog. */
#define CONNECTIONS_MAX 64u
/* Seconds an idle connection is kept. */
#define IDLE_TIMEOUT_S 30u

struct ergon_view_server {
	struct MHD_Daemon *d;
	struct view_served *s;
	char token[33];
	char url[96];
	_Atomic uint64_t requests; /* the daemon's thread counts, anyone reads */
};

struct collect {
	struct view_arg a[VIEW_ARGS_MAX + 1];
	size_t n; /* counts past VIEW_ARGS_MAX: the handler refuses that */
};

static enum MHD_Result on_arg(void *cls, enum MHD_ValueKind kind, const char *key,
			      const char *value)
{
	(void)kind;
	struct collect *c = cls;
	if (c->n < VIEW_ARGS_MAX + 1)
		c->a[c->n] = (struct view_arg){key ? key : "", value};
	c->n++;
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **con_cls)
{
	(void)version;
	(void)upload_data;
	(void)con_cls;
	struct ergon_view_server *srv = cls;
	/* A body is never read: every path is answered on the first call,
	 * and libmicrohttpd drops the body and the connection. */
	*upload_data_size = 0;
	struct collect c = {.n = 0};
	MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, on_arg, &c);
	struct view_reply r;
	view_served_handle(srv->s, method, url, c.a, c.n > VIEW_ARGS_MAX ? VIEW_ARGS_MAX + 1 : c.n,
			   &r);
	srv->requests++;
	struct MHD_Response *resp = MHD_create_response_from_buffer(
	    r.len, r.body, r.owned ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (resp == NULL) {
		view_reply_free(&r);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", r.type);
	MHD_add_response_header(resp, "Cache-Control", "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	/* The token is in the page's URL: no Referer carries it anywhere. */
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	if (r.allow != NULL)
		MHD_add_response_header(resp, "Allow", r.allow);
	enum MHD_Result ok = MHD_queue_response(conn, r.status, resp);
	MHD_destroy_response(resp);
	return ok;
}

int ergon_view_serve_start(const struct ergon_view_input *in, size_t n,
			   const struct ergon_view_options *o, uint16_t port,
			   struct ergon_view_server **out, struct ergon_err *err)
{
	*out = NULL;
	if (sodium_init() < 0)
		return ergon_err_set(err, ERGON_EIO, "view: libsodium failed to initialise");
	struct ergon_view_server *srv = calloc(1, sizeof(*srv));
	if (srv == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "view: out of memory");
	unsigned char raw[16];
	randombytes_buf(raw, sizeof raw);
	sodium_bin2hex(srv->token, sizeof srv->token, raw, sizeof raw);
	int rc = view_served_open(in, n, o, srv->token, &srv->s, err);
	if (rc) {
		free(srv);
		return rc;
	}
	struct sockaddr_in sa;
	memset(&sa, 0, sizeof sa);
	sa.sin_family = AF_INET;
	sa.sin_port = htons(port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	srv->d = MHD_start_daemon(
	    MHD_USE_AUTO_INTERNAL_THREAD, port, NULL, NULL, on_request, srv, MHD_OPTION_SOCK_ADDR,
	    (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONNECTIONS_MAX,
	    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)IDLE_TIMEOUT_S, MHD_OPTION_END);
	if (srv->d == NULL) {
		view_served_free(srv->s);
		free(srv);
		if (port != 0)
			return ergon_err_set(
			    err, ERGON_EIO,
			    "view --serve: cannot listen on 127.0.0.1:%u (in use?); "
			    "give another --port, or none for a free one",
			    (unsigned)port);
		return ergon_err_set(err, ERGON_EIO,
				     "view --serve: cannot listen on 127.0.0.1 (no free port?)");
	}
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(srv->d, MHD_DAEMON_INFO_BIND_PORT);
	unsigned bound = di ? di->port : port;
	snprintf(srv->url, sizeof srv->url, "http://127.0.0.1:%u/?token=%s", bound, srv->token);
	*out = srv;
	return 0;
}

const char *ergon_view_server_url(const struct ergon_view_server *s)
{
	return s->url;
}

uint64_t ergon_view_server_requests(const struct ergon_view_server *s)
{
	return s->requests;
}

void ergon_view_server_stop(struct ergon_view_server *s)
{
	if (s == NULL)
		return;
	MHD_stop_daemon(s->d);
	view_served_free(s->s);
	free(s);
}

#else /* !ERGON_HAVE_MHD */

int ergon_view_serve_start(const struct ergon_view_input *in, size_t n,
			   const struct ergon_view_options *o, uint16_t port,
			   struct ergon_view_server **out, struct ergon_err *err)
{
	(void)in;
	(void)n;
	(void)o;
	(void)port;
	*out = NULL;
	return ergon_err_set(err, ERGON_ENOTSUP,
			     "view --serve: this ergon was built without libmicrohttpd; install "
			     "libmicrohttpd-dev (Debian: apt-get install libmicrohttpd-dev) and "
			     "rebuild, or write a page with --out");
}

const char *ergon_view_server_url(const struct ergon_view_server *s)
{
	(void)s;
	return "";
}

uint64_t ergon_view_server_requests(const struct ergon_view_server *s)
{
	(void)s;
	return 0;
}

void ergon_view_server_stop(struct ergon_view_server *s)
{
	(void)s;
}

#endif
