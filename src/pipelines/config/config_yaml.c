/* The YAML configuration loader: libyaml's document API, walked against the
 * key table. Errors carry name:line:column (1-based) of the offending node. */
#include "ergon/config.h"
#include "ergon/fileio.h"
#include "pipelines/config/config_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef ERGON_HAVE_YAML
#include <yaml.h>

/* Deepest key is section.group.key: anything deeper is refused before the
 * walk recurses further. */
#define MAX_DEPTH 3
#define SCALAR_MAX 4096

struct walk {
	struct ergon_config *cfg;
	yaml_document_t *doc;
	const char *name;
	struct ergon_err *err;
	/* Where each key was set in this file, to refuse a second setting. */
	unsigned long seen_line[ERGON_CFG_KEYS_MAX];
	unsigned long seen_col[ERGON_CFG_KEYS_MAX];
};

static unsigned long line_of(const yaml_node_t *n)
{
	return (unsigned long)n->start_mark.line + 1;
}

static unsigned long col_of(const yaml_node_t *n)
{
	return (unsigned long)n->start_mark.column + 1;
}

/* Is prefix a group (a path with keys below it)? */
static int is_group(const char *path)
{
	size_t n = strlen(path);
	for (size_t i = 0; i < ergon_cfg_nkeys; i++)
		if (strncmp(ergon_cfg_keys[i].name, path, n) == 0 &&
		    ergon_cfg_keys[i].name[n] == '.')
			return 1;
	return 0;
}

/* The names directly under prefix ("" = the sections). */
static size_t children(const char *prefix, char names[][48], size_t cap)
{
	size_t plen = strlen(prefix), n = 0;
	for (size_t i = 0; i < ergon_cfg_nkeys; i++) {
		const char *k = ergon_cfg_keys[i].name;
		if (plen && (strncmp(k, prefix, plen) != 0 || k[plen] != '.'))
			continue;
		const char *rest = plen ? k + plen + 1 : k;
		size_t len = strcspn(rest, ".");
		if (len >= 48)
			continue;
		int dup = 0;
		for (size_t j = 0; j < n; j++)
			if (strlen(names[j]) == len && strncmp(names[j], rest, len) == 0)
				dup = 1;
		if (dup || n == cap)
			continue;
		memcpy(names[n], rest, len);
		names[n][len] = '\0';
		n++;
	}
	return n;
}

static int unknown_key(struct walk *w, const char *prefix, const char *key, const yaml_node_t *kn)
{
	char names[ERGON_CFG_KEYS_MAX][48];
	const char *cands[ERGON_CFG_KEYS_MAX] = {0};
	size_t n = children(prefix, names, ERGON_CFG_KEYS_MAX);
	char list[768] = "", sug[160] = "";
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		cands[i] = names[i];
		int wr = snprintf(list + o, sizeof(list) - o, "%s%s", o ? ", " : "", names[i]);
		if (wr > 0 && (size_t)wr < sizeof(list) - o)
			o += (size_t)wr;
	}
	ergon_cfg_suggest(key, cands, n, sug, sizeof(sug));
	if (sug[0] == '\0') {
		/* Not a typo of a sibling: perhaps a key of another section. */
		size_t kl = strlen(key);
		for (size_t i = 0; i < ergon_cfg_nkeys; i++) {
			const char *full = ergon_cfg_keys[i].name;
			size_t fl = strlen(full);
			if (fl > kl && full[fl - kl - 1] == '.' &&
			    strcmp(full + fl - kl, key) == 0) {
				snprintf(sug, sizeof(sug), " (it belongs under %.*s)",
					 (int)(fl - kl - 1), full);
				break;
			}
		}
	}
	return ergon_err_set(
	    w->err, ERGON_ECONFIG, "%s:%lu:%lu: unknown key '%s%s%.64s'%s; valid keys %s%s%s: %s",
	    w->name, line_of(kn), col_of(kn), prefix, *prefix ? "." : "", key, sug,
	    *prefix ? "under " : "at the top level", prefix, *prefix ? "" : "", list);
}

/* The scalar's text, NUL-terminated, in buf; refuses embedded NULs. */
static int scalar_text(struct walk *w, const yaml_node_t *n, const char *what, char *buf,
		       size_t cap)
{
	size_t len = n->data.scalar.length;
	if (len >= cap)
		return ergon_err_set(w->err, ERGON_ECONFIG,
				     "%s:%lu:%lu: %s is %zu bytes long, above the %zu allowed",
				     w->name, line_of(n), col_of(n), what, len, cap - 1);
	if (memchr(n->data.scalar.value, '\0', len))
		return ergon_err_set(w->err, ERGON_ECONFIG,
				     "%s:%lu:%lu: %s holds a NUL byte; remove it", w->name,
				     line_of(n), col_of(n), what);
	memcpy(buf, n->data.scalar.value, len);
	buf[len] = '\0';
	return 0;
}

static int walk_map(struct walk *w, yaml_node_t *node, const char *prefix, int depth);

static int walk_value(struct walk *w, const char *full, yaml_node_t *kn, yaml_node_t *vn, int depth)
{
	int idx = ergon_config_key_index(full);
	if (idx >= 0) {
		char text[SCALAR_MAX], where[ERGON_CFG_WHERE_MAX];
		if (vn->type != YAML_SCALAR_NODE)
			return ergon_err_set(w->err, ERGON_ECONFIG,
					     "%s:%lu:%lu: %s: expected a single value, found a %s; "
					     "write `%s: VALUE`",
					     w->name, line_of(vn), col_of(vn), full,
					     vn->type == YAML_MAPPING_NODE ? "mapping" : "list",
					     strrchr(full, '.') + 1);
		if (w->seen_line[idx])
			return ergon_err_set(w->err, ERGON_ECONFIG,
					     "%s:%lu:%lu: %s is set a second time (first at line "
					     "%lu, column %lu); keep one",
					     w->name, line_of(kn), col_of(kn), full,
					     w->seen_line[idx], w->seen_col[idx]);
		w->seen_line[idx] = line_of(kn);
		w->seen_col[idx] = col_of(kn);
		int rc = scalar_text(w, vn, full, text, sizeof(text));
		if (rc)
			return rc;
		snprintf(where, sizeof(where), "%.120s:%lu:%lu", w->name, line_of(vn), col_of(vn));
		int quoted = vn->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
		return ergon_cfg_apply(w->cfg, (size_t)idx, text, quoted, ERGON_CFG_FILE, where,
				       w->err);
	}
	return walk_map(w, vn, full, depth + 1);
}

static int walk_map(struct walk *w, yaml_node_t *node, const char *prefix, int depth)
{
	if (node->type == YAML_SCALAR_NODE && node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	    (node->data.scalar.length == 0 ||
	     (node->data.scalar.length == 4 && memcmp(node->data.scalar.value, "null", 4) == 0) ||
	     (node->data.scalar.length == 1 && node->data.scalar.value[0] == '~')))
		return 0; /* "power:" with nothing below: an empty section */
	if (node->type != YAML_MAPPING_NODE || depth > MAX_DEPTH)
		return ergon_err_set(w->err, ERGON_ECONFIG,
				     "%s:%lu:%lu: %s%s: expected a mapping of keys (key: value "
				     "lines indented below it)",
				     w->name, line_of(node), col_of(node),
				     *prefix ? prefix : "the document",
				     *prefix ? "" : " (sections target, profiling, power, output)");
	for (yaml_node_pair_t *pr = node->data.mapping.pairs.start;
	     pr < node->data.mapping.pairs.top; pr++) {
		yaml_node_t *kn = yaml_document_get_node(w->doc, pr->key);
		yaml_node_t *vn = yaml_document_get_node(w->doc, pr->value);
		if (kn == NULL || vn == NULL)
			return ergon_err_set(w->err, ERGON_EPARSE, "%s: malformed YAML document",
					     w->name);
		if (kn->type != YAML_SCALAR_NODE)
			return ergon_err_set(w->err, ERGON_ECONFIG,
					     "%s:%lu:%lu: a key must be a plain name, not a %s",
					     w->name, line_of(kn), col_of(kn),
					     kn->type == YAML_MAPPING_NODE ? "mapping" : "list");
		char key[64], full[192];
		int rc = scalar_text(w, kn, "a key", key, sizeof(key));
		if (rc)
			return rc;
		snprintf(full, sizeof(full), "%s%s%s", prefix, *prefix ? "." : "", key);
		/* A dotted key ("power.enabled: true" at the top) is not nesting. */
		if (strchr(key, '.') || (ergon_config_key_index(full) < 0 && !is_group(full)))
			return unknown_key(w, prefix, key, kn);
		rc = walk_value(w, full, kn, vn, depth);
		if (rc)
			return rc;
	}
	return 0;
}

static int yaml_problem(const char *name, const yaml_parser_t *p, struct ergon_err *err)
{
	const yaml_mark_t *m = p->problem ? &p->problem_mark : &p->mark;
	return ergon_err_set(err, ERGON_EPARSE,
			     "%s:%lu:%lu: YAML syntax error: %s%s%s; fix the syntax", name,
			     (unsigned long)m->line + 1, (unsigned long)m->column + 1,
			     p->problem ? p->problem : "unknown problem", p->context ? " " : "",
			     p->context ? p->context : "");
}

/* Nesting deeper than this cannot be a configuration (the deepest key is
 * three mappings down) and is refused before libyaml's document loader
 * sees it: its scanner is quadratic in the flow nesting depth, so a few
 * hundred kilobytes of "[[[[..." would take minutes. */
#define NESTING_MAX 16

/* Anchors and aliases: libyaml's document loader looks every alias up, and
 * every new anchor checked, in a linear list of the anchors so far, so n of
 * them cost n^2 (100 000 anchors in 1 MB: 22 s). A configuration needs few
 * (every value can be written out); these caps are checked on the events,
 * in linear time, before the loader runs. */
#define ANCHORS_MAX 64
#define ALIASES_MAX 256

/* First pass over the events only: stop at the first node nested deeper
 * than NESTING_MAX, the first anchor past ANCHORS_MAX or alias past
 * ALIASES_MAX. Syntax errors are left to the loader's pass, which reports
 * them the same way. */
static int check_nesting(const char *name, const char *text, size_t len, struct ergon_err *err)
{
	yaml_parser_t parser;
	if (!yaml_parser_initialize(&parser))
		return ergon_err_set(err, ERGON_ENOMEM, "%s: cannot initialise the YAML parser",
				     name);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	int depth = 0, rc = 0;
	unsigned long anchors = 0, aliases = 0;
	for (;;) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&parser, &ev))
			break;
		yaml_event_type_t t = ev.type;
		unsigned long line = (unsigned long)ev.start_mark.line + 1;
		unsigned long col = (unsigned long)ev.start_mark.column + 1;
		int anchored = (t == YAML_SCALAR_EVENT && ev.data.scalar.anchor) ||
			       (t == YAML_SEQUENCE_START_EVENT && ev.data.sequence_start.anchor) ||
			       (t == YAML_MAPPING_START_EVENT && ev.data.mapping_start.anchor);
		yaml_event_delete(&ev);
		if (anchored && ++anchors > ANCHORS_MAX) {
			rc = ergon_err_set(err, ERGON_ECONFIG,
					   "%s:%lu:%lu: more than %d YAML anchors (&name); a "
					   "configuration needs few: write the values out",
					   name, line, col, ANCHORS_MAX);
			break;
		}
		if (t == YAML_ALIAS_EVENT && ++aliases > ALIASES_MAX) {
			rc = ergon_err_set(err, ERGON_ECONFIG,
					   "%s:%lu:%lu: more than %d YAML aliases (*name); a "
					   "configuration needs few: write the values out",
					   name, line, col, ALIASES_MAX);
			break;
		}
		if (t == YAML_SEQUENCE_START_EVENT || t == YAML_MAPPING_START_EVENT) {
			if (++depth > NESTING_MAX) {
				rc = ergon_err_set(
				    err, ERGON_ECONFIG,
				    "%s:%lu:%lu: nested more than %d levels deep; a "
				    "configuration has at most 3 (section, group, key)",
				    name, line, col, NESTING_MAX);
				break;
			}
		} else if (t == YAML_SEQUENCE_END_EVENT || t == YAML_MAPPING_END_EVENT) {
			depth--;
		} else if (t == YAML_STREAM_END_EVENT) {
			break;
		}
	}
	yaml_parser_delete(&parser);
	return rc;
}

int ergon_config_load_yaml(struct ergon_config *cfg, const char *name, const char *text, size_t len,
			   struct ergon_err *err)
{
	if (len > ERGON_CFG_FILE_MAX)
		return ergon_err_set(
		    err, ERGON_ETOOBIG,
		    "%s: %zu bytes, above the %d-byte limit of a configuration file", name, len,
		    ERGON_CFG_FILE_MAX);
	if (cfg->resolved)
		return ergon_err_set(err, ERGON_EUSAGE,
				     "%s: the configuration is already resolved; load files before "
				     "ergon_config_resolve",
				     name);
	int rc = 0;
	yaml_parser_t parser;
	yaml_document_t doc;
	int have_doc = 0;
	struct walk *w = NULL;
	/* Work on a copy: a file that fails half-way changes nothing. */
	struct ergon_config *tmp = malloc(sizeof(*tmp));
	if (tmp == NULL)
		return ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", name);
	*tmp = *cfg;
	rc = check_nesting(name, text, len, err);
	if (rc) {
		free(tmp);
		return rc;
	}
	if (!yaml_parser_initialize(&parser)) {
		free(tmp);
		return ergon_err_set(err, ERGON_ENOMEM, "%s: cannot initialise the YAML parser",
				     name);
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		rc = yaml_problem(name, &parser, err);
		goto out;
	}
	have_doc = 1;
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (root != NULL) {
		w = calloc(1, sizeof(*w));
		if (w == NULL) {
			rc = ergon_err_set(err, ERGON_ENOMEM, "%s: out of memory", name);
			goto out;
		}
		w->cfg = tmp;
		w->doc = &doc;
		w->name = name;
		w->err = err;
		rc = walk_map(w, root, "", 1);
		if (rc)
			goto out;
		/* One document per file: a second one would be silently ignored. */
		yaml_document_t next;
		if (!yaml_parser_load(&parser, &next)) {
			rc = yaml_problem(name, &parser, err);
			goto out;
		}
		int more = yaml_document_get_root_node(&next) != NULL;
		unsigned long l = (unsigned long)next.start_mark.line + 1;
		yaml_document_delete(&next);
		if (more) {
			rc = ergon_err_set(err, ERGON_ECONFIG,
					   "%s:%lu:1: a second YAML document; a configuration file "
					   "holds one (remove the '---' and what follows)",
					   name, l);
			goto out;
		}
	}
	*cfg = *tmp;
out:
	free(w);
	if (have_doc)
		yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	free(tmp);
	return rc;
}
#else
int ergon_config_load_yaml(struct ergon_config *cfg, const char *name, const char *text, size_t len,
			   struct ergon_err *err)
{
	(void)cfg;
	(void)text;
	(void)len;
	return ergon_err_set(err, ERGON_ENOTSUP,
			     "%s: this ergon was built without libyaml; install libyaml-dev "
			     "(scripts/bootstrap.sh) and rebuild",
			     name);
}
#endif

int ergon_config_load_file(struct ergon_config *cfg, const char *path, struct ergon_err *err)
{
	char *data = NULL;
	size_t len = 0;
	int rc = ergon_file_read_all(path, ERGON_CFG_FILE_MAX, &data, &len, err);
	if (rc)
		return rc;
	rc = ergon_config_load_yaml(cfg, path, data, len, err);
	free(data);
	return rc;
}
