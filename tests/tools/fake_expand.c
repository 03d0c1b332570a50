/* fake_expand.c — wildcards matched with fnmatch against a tracefs directory: see fake_expand.h. */
#include "tests/tools/fake_expand.h"
#include "common/common.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dt_fake_expand(void *ctx, const dt_attach *a, char ***names, uint32_t *n)
{
	DT_VEC(char *) out = { 0 };
	char path[4096];
	const char *root = ctx ? ctx : "/sys/kernel/tracing";
	if (a->provider == DT_P_TRACEPOINT) {
		snprintf(path, sizeof(path), "%s/events", root);
		DIR *sd = opendir(path);
		if (!sd)
			return -errno;
		struct dirent *s;
		while ((s = readdir(sd))) {
			if (s->d_name[0] == '.' || fnmatch(a->target, s->d_name, 0))
				continue;
			char sub[4608];
			snprintf(sub, sizeof(sub), "%s/%s", path, s->d_name);
			DIR *ed = opendir(sub);
			struct dirent *e;
			while (ed && (e = readdir(ed)))
				if (e->d_name[0] != '.' && !fnmatch(a->func, e->d_name, 0))
					DT_VEC_PUSH(&out, xasprintf("%s:%s", s->d_name, e->d_name));
			if (ed)
				closedir(ed);
		}
		closedir(sd);
	} else if (a->provider == DT_P_KPROBE || a->provider == DT_P_KRETPROBE) {
		snprintf(path, sizeof(path), "%s/available_filter_functions", root);
		FILE *f = fopen(path, "r");
		if (!f)
			return -errno;
		char buf[512];
		while (fgets(buf, sizeof(buf), f)) {
			buf[strcspn(buf, " \t\n")] = 0;
			if (!fnmatch(a->func, buf, 0))
				DT_VEC_PUSH(&out, xstrdup(buf));
		}
		fclose(f);
	} else {
		return -ENOTSUP;
	}
	/* Sorted so the output is stable whatever order readdir gives. */
	for (size_t i = 1; i < out.n; i++)
		for (size_t j = i; j > 0 && strcmp(out.v[j - 1], out.v[j]) > 0; j--) {
			char *t = out.v[j];
			out.v[j] = out.v[j - 1];
			out.v[j - 1] = t;
		}
	*names = out.v;
	*n = (uint32_t)out.n;
	return 0;
}
