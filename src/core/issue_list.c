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

/* One context value as a typed field; 0 when the value has no typed form
 * (an object, a list of anything but integers), which is then left out. */
static int field_of(const char *key, const json_t *v, struct ergon_issue_field *f, int64_t **ints)
{
	*f = (struct ergon_issue_field){.key = key};
	*ints = NULL;
	if (json_is_integer(v)) {
		f->kind = ERGON_IF_INT;
		f->i = (int64_t)json_integer_value(v);
	} else if (json_is_real(v)) {
		f->kind = ERGON_IF_REAL;
		f->d = json_real_value(v);
	} else if (json_is_boolean(v)) {
		f->kind = ERGON_IF_BOOL;
		f->i = json_is_true(v);
	} else if (json_is_string(v)) {
		f->kind = ERGON_IF_TEXT;
		f->text = json_string_value(v);
	} else if (json_is_null(v)) {
		f->kind = ERGON_IF_NULL;
	} else if (json_is_array(v)) {
		size_t n = json_array_size(v), k;
		const json_t *x;
		json_array_foreach(v, k, x)
		{
			if (!json_is_integer(x))
				return 0;
		}
		if (n > 0) {
			*ints = malloc(n * sizeof **ints);
			if (*ints == NULL)
				return -1;
			for (k = 0; k < n; k++)
				(*ints)[k] = (int64_t)json_integer_value(json_array_get(v, k));
		}
		f->kind = ERGON_IF_INTS;
		f->ints = *ints;
		f->nints = n;
	} else {
		return 0;
	}
	return 1;
}

int ergon_issue_list_from_json(const json_t *arr, struct ergon_issue_list *l,
			       struct ergon_err *err)
{
	if (arr == NULL)
		return 0;
	if (!json_is_array(arr))
		return ergon_err_set(err, ERGON_EPARSE, "issues: not a list");
	size_t i;
	const json_t *is;
	json_array_foreach(arr, i, is)
	{
		const char *code = json_string_value(json_object_get(is, "code"));
		const char *msg = json_string_value(json_object_get(is, "message"));
		if (code == NULL || ergon_issue_severity(code) == 0)
			return ergon_err_set(err, ERGON_EPARSE,
					     "issues[%zu].code: %s is not an issue code ergon knows "
					     "(ergon doctor --issues lists them)",
					     i, code ? code : "(missing)");
		const json_t *ctx = json_object_get(is, "context");
		size_t nctx = json_is_object(ctx) ? json_object_size(ctx) : 0, nf = 0;
		struct ergon_issue_field *fields = nctx ? calloc(nctx, sizeof *fields) : NULL;
		int64_t **ints = nctx ? calloc(nctx, sizeof *ints) : NULL;
		int rc = nctx && (fields == NULL || ints == NULL) ? ERGON_ENOMEM : 0;
		const char *key;
		const json_t *v;
		if (rc == 0 && nctx) {
			json_object_foreach((json_t *)ctx, key, v)
			{
				int got = field_of(key, v, &fields[nf], &ints[nf]);
				if (got < 0) {
					rc = ERGON_ENOMEM;
					break;
				}
				nf += (size_t)got;
			}
		}
		if (rc == 0)
			rc = ergon_issue_list_add(l, code, fields, nf, "%s", msg ? msg : "");
		for (size_t k = 0; ints && k < nctx; k++)
			free(ints[k]);
		free(ints);
		free(fields);
		if (rc)
			return ergon_err_set(err, rc, "issues[%zu]: out of memory", i);
		/* The severity the document states (a check whose code follows
		 * the mode may have raised it above the registry's). */
		const char *sev = json_string_value(json_object_get(is, "severity"));
		for (int s = ERGON_SEV_INFO; sev && s <= ERGON_SEV_ERROR; s++)
			if (strcmp(sev, ergon_severity_name(s)) == 0)
				l->items[l->n - 1].severity = s;
	}
	return 0;
}

const struct ergon_issue_field *ergon_issue_entry_field(const struct ergon_issue_entry *e,
							  const char *key)
{
	for (size_t i = 0; i < e->nfields; i++)
		if (strcmp(e->fields[i].key, key) == 0)
			return &e->fields[i];
	return NULL;
}
