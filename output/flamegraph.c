/* flamegraph.c — folded stacks become a self-contained interactive SVG flame graph, the picture
 * flamegraph.pl made standard: one box per frame, as wide as the share of samples under it, the
 * root at the bottom, children sorted by name so the same stacks always draw the same. Everything
 * the viewer needs is inside the file: a title and subtitle saying what the graph shows (program,
 * map, target, rate, duration, total), a tooltip (<title>) and a details line with the total, the
 * hovered frame's count, CPU time and percentage, or the zoomed frame's; click to zoom into a frame (its ancestors stay, faded), a reset, and a search
 * (a regular expression, case-insensitive) that highlights matches and says what share of all
 * samples they cover. Frame names are XML-escaped (C++ templates are full of '<' and '&'). */
#include "output/output_internal.h"
#include "common/common.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FG_WIDTH 1200
#define FG_FRAME_H 16
#define FG_PAD_X 10
#define FG_PAD_TOP 66
#define FG_PAD_BOTTOM 34
#define FG_MIN_PX 0.1  /* narrower frames are not drawn (flamegraph.pl's minwidth) */
#define FG_CHAR_PX 7.0 /* average glyph width of 12px monospace-ish text, for the first layout */

struct node {
	char *name;
	int64_t value;
	uint32_t parent, depth;
	uint32_t first_child, next_sibling; /* after sorting; 0 = none (node 0 is the root) */
};

struct tree {
	DT_VEC(struct node) n;
	uint32_t *hash; /* (parent, name) -> node index + 1 */
	size_t hash_n;
};

static uint64_t hash_key(uint32_t parent, const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ull ^ parent;
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

static uint32_t *slot(struct tree *t, uint32_t parent, const char *s, size_t len)
{
	for (size_t h = hash_key(parent, s, len) & (t->hash_n - 1);; h = (h + 1) & (t->hash_n - 1)) {
		uint32_t i = t->hash[h];
		if (!i)
			return &t->hash[h];
		const struct node *nd = &t->n.v[i - 1];
		if (nd->parent == parent && !strncmp(nd->name, s, len) && !nd->name[len])
			return &t->hash[h];
	}
}

static uint32_t child(struct tree *t, uint32_t parent, const char *s, size_t len)
{
	if ((t->n.n + 1) * 2 > t->hash_n) {
		size_t n = t->hash_n ? t->hash_n * 2 : 4096;
		free(t->hash);
		t->hash = xcalloc(n, sizeof(*t->hash));
		t->hash_n = n;
		for (size_t i = 1; i < t->n.n; i++) {
			const struct node *nd = &t->n.v[i];
			*slot(t, nd->parent, nd->name, strlen(nd->name)) = (uint32_t)i + 1;
		}
	}
	uint32_t *sl = slot(t, parent, s, len);
	if (*sl)
		return *sl - 1;
	struct node nd = { .name = xstrndup(s, len), .parent = parent,
			   .depth = t->n.v[parent].depth + 1 };
	DT_VEC_PUSH(&t->n, nd);
	*sl = (uint32_t)t->n.n;
	return (uint32_t)t->n.n - 1;
}

static void put_xml(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			/* Control bytes are not allowed in XML 1.0 at all. */
			if ((unsigned char)*s < 0x20 && *s != '\t')
				fputc('?', f);
			else
				fputc(*s, f);
		}
	}
}

/* flamegraph.pl's warm palette, stable per name; kernel frames orange, inlined ones aqua. */
static void color(const char *name, char *buf, size_t n)
{
	uint64_t h = hash_key(0, name, strlen(name));
	unsigned v1 = (unsigned)(h & 0xff), v2 = (unsigned)((h >> 8) & 0xff);
	size_t len = strlen(name);

	if (len > 4 && !strcmp(name + len - 4, "_[k]"))
		snprintf(buf, n, "rgb(%u,%u,%u)", 220 + v1 % 35, 120 + v2 % 60, 30);
	else if (len > 4 && !strcmp(name + len - 4, "_[i]"))
		snprintf(buf, n, "rgb(%u,%u,%u)", 60 + v1 % 40, 190 + v2 % 50, 190 + v2 % 50);
	else
		snprintf(buf, n, "rgb(%u,%u,%u)", 205 + v1 % 50, v2 % 230, 55 + (v1 ^ v2) % 55);
}

static int cmp_name(const void *a, const void *b, void *ctx)
{
	const struct node *n = ctx;
	return strcmp(n[*(const uint32_t *)a].name, n[*(const uint32_t *)b].name);
}

static const char script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"'use strict';\n"
	"var W = %d, PAD = %d, total = %" PRId64 ", UNIT = '%s', UNIT_NS = %" PRIu64 ";\n"
	"var frames = [], details, matchedtxt, zoomed = null;\n"
	"function init() {\n"
	"  details = document.getElementById('details');\n"
	"  matchedtxt = document.getElementById('matched');\n"
	"  var gs = document.querySelectorAll('g.f');\n"
	"  for (var i = 0; i < gs.length; i++) {\n"
	"    var g = gs[i];\n"
	"    frames.push({g: g, x: +g.getAttribute('fg-x'), w: +g.getAttribute('fg-w'),\n"
	"      d: +g.getAttribute('fg-d'), name: g.getAttribute('fg-n'),\n"
	"      rect: g.querySelector('rect'), text: g.querySelector('text'),\n"
	"      fill: g.querySelector('rect').getAttribute('fill')});\n"
	"    g.addEventListener('click', zoom);\n"
	"    g.addEventListener('mouseover', over);\n"
	"    g.addEventListener('mouseout', rest);\n"
	"  }\n"
	"  document.getElementById('reset').addEventListener('click', unzoom);\n"
	"  document.getElementById('search').addEventListener('click', search);\n"
	"  layout(0, total, -1);\n"
	"  rest();\n"
	"}\n"
	"function dur(ns) {\n"
	"  return ns >= 1e9 ? (ns / 1e9).toFixed(2) + ' s' : ns >= 1e6 ? (ns / 1e6).toFixed(1) +"
	" ' ms' : (ns / 1e3).toFixed(0) + ' us';\n"
	"}\n"
	"function amount(w) {\n"
	"  return w.toLocaleString() + ' ' + UNIT + (UNIT_NS ? ', ' + dur(w * UNIT_NS) + ' CPU' : '');\n"
	"}\n"
	"function label(f) {\n"
	"  var pct = (100 * f.w / total).toFixed(2);\n"
	"  return f.name + ' (' + amount(f.w) + ', ' + pct + '%%)';\n"
	"}\n"
	"/* With the pointer on no frame, the details line keeps the zoomed frame's figures, or the\n"
	"   total: a count is never only in a tooltip. */\n"
	"function rest() {\n"
	"  details.textContent = zoomed ? 'Zoomed: ' + label(zoomed) : 'Total: ' + amount(total) +"
	" ' (click a frame to zoom, hover for its count)';\n"
	"}\n"
	"function over(e) { details.textContent = 'Function: ' + label(frameOf(e.currentTarget)); }\n"
	"function frameOf(g) { for (var i = 0; i < frames.length; i++) if (frames[i].g === g)"
	" return frames[i]; }\n"
	"function fit(f, px) {\n"
	"  var chars = Math.floor((px - 6) / 7);\n"
	"  f.text.textContent = chars < 3 ? '' : f.name.length <= chars ? f.name :"
	" f.name.substring(0, chars - 2) + '..';\n"
	"}\n"
	"function layout(x0, w0, d0) {\n"
	"  var scale = (W - 2 * PAD) / w0;\n"
	"  for (var i = 0; i < frames.length; i++) {\n"
	"    var f = frames[i], inside = f.x >= x0 && f.x + f.w <= x0 + w0 && f.d >= d0;\n"
	"    var above = f.d < d0 && f.x <= x0 && f.x + f.w >= x0 + w0;\n"
	"    if (!inside && !above) { f.g.style.display = 'none'; continue; }\n"
	"    var x = above ? PAD : PAD + (f.x - x0) * scale, w = above ? W - 2 * PAD : f.w * scale;\n"
	"    f.g.style.display = w < 0.1 ? 'none' : '';\n"
	"    f.g.style.opacity = above ? 0.5 : 1;\n"
	"    f.rect.setAttribute('x', x.toFixed(2));\n"
	"    f.rect.setAttribute('width', Math.max(w - 0.5, 0).toFixed(2));\n"
	"    f.text.setAttribute('x', (x + 3).toFixed(2));\n"
	"    fit(f, w);\n"
	"  }\n"
	"}\n"
	"function zoom(e) {\n"
	"  var f = frameOf(e.currentTarget);\n"
	"  zoomed = f;\n"
	"  layout(f.x, f.w, f.d);\n"
	"  document.getElementById('reset').style.opacity = 1;\n"
	"}\n"
	"function unzoom() {\n"
	"  zoomed = null;\n"
	"  layout(0, total, -1);\n"
	"  rest();\n"
	"  document.getElementById('reset').style.opacity = 0;\n"
	"}\n"
	"function search() {\n"
	"  var term = prompt('Search for (regular expression):', '');\n"
	"  if (term === null) return;\n"
	"  searchFor(term);\n"
	"}\n"
	"function searchFor(term) {\n"
	"  var re, spans = [];\n"
	"  try { re = new RegExp(term, 'i'); } catch (err) { matchedtxt.textContent = 'bad regex';"
	" return; }\n"
	"  for (var i = 0; i < frames.length; i++) {\n"
	"    var f = frames[i], hit = term !== '' && re.test(f.name);\n"
	"    f.rect.setAttribute('fill', hit ? 'rgb(230,0,230)' : f.fill);\n"
	"    if (hit) spans.push([f.x, f.x + f.w]);\n"
	"  }\n"
	"  /* Nested matches count once: merge the covered ranges. */\n"
	"  spans.sort(function (a, b) { return a[0] - b[0]; });\n"
	"  var covered = 0, end = -1;\n"
	"  for (var k = 0; k < spans.length; k++) {\n"
	"    var s = Math.max(spans[k][0], end), e2 = spans[k][1];\n"
	"    if (e2 > s) { covered += e2 - s; end = e2; }\n"
	"  }\n"
	"  matchedtxt.textContent = term === '' ? '' : 'Matched: ' +"
	" (100 * covered / total).toFixed(2) + '%%';\n"
	"}\n"
	"window.addEventListener('load', init);\n"
	"]]></script>\n";

int dt_flamegraph_write(FILE *f, const dt_fg_head *h, const char *const *folded,
			const int64_t *values, size_t n)
{
	struct tree t = {0};
	struct node root = { .name = xstrdup("all") };
	uint32_t maxdepth = 0;

	DT_VEC_PUSH(&t.n, root);
	for (size_t i = 0; i < n; i++) {
		const char *s = folded[i];
		uint32_t cur = 0;
		if (values[i] <= 0)
			continue; /* a flame graph draws shares: nothing for zero or negative */
		t.n.v[0].value += values[i];
		while (*s) {
			const char *semi = strchr(s, ';');
			size_t len = semi ? (size_t)(semi - s) : strlen(s);
			cur = child(&t, cur, s, len);
			t.n.v[cur].value += values[i];
			maxdepth = DT_MAX(maxdepth, t.n.v[cur].depth);
			s += len + (semi ? 1 : 0);
		}
	}

	/* Children sorted by name, as flamegraph.pl draws them. */
	DT_VEC(uint32_t) order = {0};
	for (uint32_t i = 1; i < t.n.n; i++)
		DT_VEC_PUSH(&order, i);
	if (order.n)
		qsort_r(order.v, order.n, sizeof(*order.v), cmp_name, t.n.v);
	for (size_t k = order.n; k-- > 0;) {
		struct node *nd = &t.n.v[order.v[k]];
		nd->next_sibling = t.n.v[nd->parent].first_child;
		t.n.v[nd->parent].first_child = order.v[k];
	}

	int64_t total = t.n.v[0].value;
	int height = FG_PAD_TOP + (int)(maxdepth + 1) * FG_FRAME_H + FG_PAD_BOTTOM;
	double scale = total > 0 ? (double)(FG_WIDTH - 2 * FG_PAD_X) / (double)total : 0;

	fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		   "<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		   "xmlns=\"http://www.w3.org/2000/svg\">\n",
		FG_WIDTH, height, FG_WIDTH, height);
	fprintf(f, "<style type=\"text/css\">\n"
		   "text { font-family: monospace; font-size: 12px; fill: rgb(0,0,0); }\n"
		   "g.f:hover rect { stroke: black; stroke-width: 0.5; cursor: pointer; }\n"
		   "#title { font-size: 17px; }\n"
		   "#subtitle { fill: rgb(80,80,80); }\n"
		   "#reset, #search { cursor: pointer; }\n"
		   "</style>\n");
	/* The unit goes into a JS string: it is ours ("samples", "value"), never user text. */
	fprintf(f, script, FG_WIDTH, FG_PAD_X, total > 0 ? total : 1, h->unit, h->unit_ns);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"rgb(248,248,248)\"/>\n",
		FG_WIDTH, height);
	fprintf(f, "<text id=\"title\" x=\"%d\" y=\"24\" text-anchor=\"middle\">", FG_WIDTH / 2);
	put_xml(f, h->title);
	fprintf(f, "</text>\n");
	fprintf(f, "<text id=\"subtitle\" x=\"%d\" y=\"44\" text-anchor=\"middle\">",
		FG_WIDTH / 2);
	put_xml(f, h->subtitle);
	fprintf(f, "</text>\n");
	fprintf(f, "<text id=\"reset\" x=\"%d\" y=\"24\" style=\"opacity:0\">Reset Zoom</text>\n",
		FG_PAD_X);
	fprintf(f, "<text id=\"search\" x=\"%d\" y=\"24\" text-anchor=\"end\">Search</text>\n",
		FG_WIDTH - FG_PAD_X);
	fprintf(f, "<text id=\"matched\" x=\"%d\" y=\"%d\" text-anchor=\"end\"> </text>\n",
		FG_WIDTH - FG_PAD_X, height - 12);
	fprintf(f, "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n", FG_PAD_X, height - 12);

	/* Depth-first, each frame placed right of its previous sibling. */
	DT_VEC(uint32_t) stack = {0};
	int64_t *xs = xcalloc(t.n.n, sizeof(*xs));
	DT_VEC_PUSH(&stack, 0);
	while (stack.n) {
		uint32_t i = stack.v[--stack.n];
		struct node *nd = &t.n.v[i];
		int64_t x = xs[i];
		for (uint32_t c = nd->first_child; c; c = t.n.v[c].next_sibling) {
			xs[c] = x;
			x += t.n.v[c].value;
			DT_VEC_PUSH(&stack, c);
		}
		double px = (double)nd->value * scale;
		if (px < FG_MIN_PX)
			continue;
		char fill[32];
		double rx = FG_PAD_X + (double)xs[i] * scale;
		int y = height - FG_PAD_BOTTOM - (int)(nd->depth + 1) * FG_FRAME_H;
		double pct = total > 0 ? 100.0 * (double)nd->value / (double)total : 0;
		int chars = (int)((px - 6) / FG_CHAR_PX);

		color(nd->name, fill, sizeof(fill));
		fprintf(f, "<g class=\"f\" fg-x=\"%" PRId64 "\" fg-w=\"%" PRId64 "\" fg-d=\"%u\" fg-n=\"",
			xs[i], nd->value, nd->depth);
		put_xml(f, nd->name);
		fprintf(f, "\"><title>");
		put_xml(f, nd->name);
		fprintf(f, " (%" PRId64 " %s, %.2f%%)</title>", nd->value, h->unit, pct);
		fprintf(f, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\" "
			   "rx=\"2\" ry=\"2\"/>", rx, y, px > 0.5 ? px - 0.5 : px, FG_FRAME_H - 1, fill);
		fprintf(f, "<text x=\"%.2f\" y=\"%d\">", rx + 3, y + FG_FRAME_H - 4);
		if (chars >= 3) {
			size_t len = strlen(nd->name);
			if (len <= (size_t)chars) {
				put_xml(f, nd->name);
			} else {
				char *cut = xstrndup(nd->name, (size_t)chars - 2);
				put_xml(f, cut);
				fputs("..", f);
				free(cut);
			}
		}
		fprintf(f, "</text></g>\n");
	}
	fprintf(f, "</svg>\n");

	free(stack.v);
	free(xs);
	free(order.v);
	for (size_t i = 0; i < t.n.n; i++)
		free(t.n.v[i].name);
	free(t.n.v);
	free(t.hash);
	return ferror(f) ? -EIO : 0;
}
