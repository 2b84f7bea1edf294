/* The typed issue list (ergon/issue_list.h). */
#include "ergon/issue_list.h"

#include "ergon/issues.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MESSAGE_MAX 1024

static void entry_free(struct ergon_issue_entry *e)
{
	for (size_t i = 0; i < e->nfields; i++) {
		free((char *)e->fields[i].key);
		free((char *)e->fields[i].text);
		free((int64_t *)e->fields[i].ints);
	}
	free(e->fields);
	free(e->message);
	memset(e, 0, sizeof *e);
}

static int copy_field(struct ergon_issue_field *dst, const struct ergon_issue_field *src)
{
	*dst = *src;
	dst->key = strdup(src->key);
	dst->text = NULL;
	dst->ints = NULL;
	if (dst->key == NULL)
		return ERGON_ENOMEM;
	if (src->kind == ERGON_IF_TEXT) {
		dst->text = strdup(src->text ? src->text : "");
		if (dst->text == NULL)
			return ERGON_ENOMEM;
	}
	if (src->kind == ERGON_IF_INTS && src->nints > 0) {
		int64_t *v = malloc(src->nints * sizeof *v);
		if (v == NULL)
			return ERGON_ENOMEM;
		memcpy(v, src->ints, src->nints * sizeof *v);
		dst->ints = v;
	}
	return 0;
}

int ergon_issue_list_add(struct ergon_issue_list *l, const char *code,
			 const struct ergon_issue_field *fields, size_t nfields, const char *fmt,
			 ...)
{
	int sev = ergon_issue_severity(code);
	if (sev == 0)
		return ERGON_EUSAGE;
	const char *reg = NULL;
	for (size_t i = 0;; i++) {
		int s;
		const char *c = ergon_issue_code_at(i, &s, NULL);
		if (c == NULL)
			break;
		if (strcmp(c, code) == 0) {
			reg = c;
			break;
		}
	}
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 8;
		struct ergon_issue_entry *v = realloc(l->items, ncap * sizeof *v);
		if (v == NULL) {
			l->oom = 1;
			return ERGON_ENOMEM;
		}
		l->items = v;
		l->cap = ncap;
	}
	struct ergon_issue_entry *e = &l->items[l->n];
	memset(e, 0, sizeof *e);
	e->code = reg;
	e->severity = sev;
	e->message = malloc(MESSAGE_MAX);
	e->fields = nfields ? calloc(nfields, sizeof *e->fields) : NULL;
	int rc = e->message == NULL || (nfields && e->fields == NULL) ? ERGON_ENOMEM : 0;
	if (rc == 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(e->message, MESSAGE_MAX, fmt, ap);
		va_end(ap);
	}
	for (size_t i = 0; rc == 0 && i < nfields; i++) {
		rc = copy_field(&e->fields[i], &fields[i]);
		e->nfields = i + 1;
	}
	if (rc != 0) {
		entry_free(e);
		l->oom = 1;
		return rc;
	}
	l->n++;
	return 0;
}

int ergon_issue_list_has(const struct ergon_issue_list *l, const char *code)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->items[i].code, code) == 0)
			return 1;
	return 0;
}

void ergon_issue_list_cleanup(struct ergon_issue_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		entry_free(&l->items[i]);
	free(l->items);
	memset(l, 0, sizeof *l);
}

/* The context object; NULL when a value cannot be made (text that is not
 * UTF-8): the issue then has an empty context, as json_pack's failure gave
 * ergon_issue_add a NULL one. */
static json_t *context_json(const struct ergon_issue_entry *e)
{
	json_t *o = json_object();
	for (size_t i = 0; o && i < e->nfields; i++) {
		const struct ergon_issue_field *f = &e->fields[i];
		json_t *v = NULL;
		switch (f->kind) {
		case ERGON_IF_INT:
			v = json_integer((json_int_t)f->i);
			break;
		case ERGON_IF_REAL:
			v = json_real(f->d);
			break;
		case ERGON_IF_BOOL:
			v = json_boolean(f->i);
			break;
		case ERGON_IF_TEXT:
			v = json_string(f->text);
			break;
		case ERGON_IF_NULL:
			v = json_null();
			break;
		case ERGON_IF_INTS:
			v = json_array();
			for (size_t k = 0; v && k < f->nints; k++)
				if (json_array_append_new(v, json_integer((json_int_t)f->ints[k])))
					break;
			break;
		default:
			break;
		}
		if (v == NULL || json_object_set_new(o, f->key, v) != 0) {
			json_decref(o);
			return NULL;
		}
	}
	return o;
}

int ergon_issue_list_to_json(const struct ergon_issue_list *l, json_t *arr)
{
	for (size_t i = 0; i < l->n; i++) {
		const struct ergon_issue_entry *e = &l->items[i];
		int rc = ergon_issue_add(arr, e->code, context_json(e), "%s", e->message);
		if (rc)
			return rc;
		/* A code whose severity follows the mode (raised by its check)
		 * keeps the severity the check gave it. */
		if (e->severity != ergon_issue_severity(e->code)) {
			json_t *o = json_array_get(arr, json_array_size(arr) - 1);
			if (json_object_set_new(o, "severity",
						json_string(ergon_severity_name(e->severity))) != 0)
				return ERGON_ENOMEM;
		}
	}
	return 0;
}
