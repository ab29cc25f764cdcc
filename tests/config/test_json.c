/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The configuration's JSON parsers against each other (json_same.h): hand
 * cases at the edges of the grammar, every example configuration, and
 * deterministic mutations of them.  jansson is the reference.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>

#include "json_same.h"

/* Parse @text; CU-assert the invariant and that the fast parser took it (or not). */
static void
agree(const char *text, bool fast_expected)
{
	bool took;

	CU_ASSERT_EQUAL(json_parsers_agree(text, strlen(text), &took), 0);
	if (took != fast_expected)
		fprintf(stderr, "\nfast parser %s: %s\n", took ? "took" : "left", text);
	CU_ASSERT_EQUAL(took, fast_expected);
}

static void
test_edges(void)
{
	/* Taken by the fast parser, and equal to jansson's document. */
	agree("{}", true);
	agree("[]", true);
	agree(" \t\r\n{\"a\": [1, -2, 0, -0, 3.5, -0.0, 1e3, 2E-2, 9223372036854775807, "
	      "-9223372036854775808]} \n", true);
	agree("{\"s\": \"tab\\there \\\"q\\\" \\\\ \\/ \\b\\f\\n\\r\"}", true);
	agree("{\"u\": \"\\u00e9\\u20ac\\ud83d\\ude00\\u0041\"}", true);
	agree("[true, false, null, [[]], {\"k\": {}}]", true);
	agree("{\"a\": 1, \"b\": {\"a\": 2}}", true);
	/* Twenty keys: duplicates looked for by sorting. */
	agree("{\"a\":1,\"b\":1,\"c\":1,\"d\":1,\"e\":1,\"f\":1,\"g\":1,\"h\":1,\"i\":1,\"j\":1,"
	      "\"k\":1,\"l\":1,\"m\":1,\"n\":1,\"o\":1,\"p\":1,\"q\":1,\"r\":1,\"s\":1,\"t\":1}", true);
	/* Left to jansson, which accepts: non-ASCII text, long reals. */
	agree("{\"name\": \"caf\xc3\xa9\"}", false);
	agree("[1.00000000000000000000000000000000000000000000000000000000000000000000001]", false);
	/* Left to jansson, which rejects: each is an error jansson words. */
	static const char dup20[] = "{\"a\":1,\"b\":1,\"c\":1,\"d\":1,\"e\":1,\"f\":1,\"g\":1,\"h\":1,"
				    "\"i\":1,\"j\":1,\"k\":1,\"l\":1,\"m\":1,\"n\":1,\"o\":1,\"p\":1,"
				    "\"q\":1,\"r\":1,\"s\":1,\"a\":1}";
	const char *bad[] = {
		"", " ", "1", "\"s\"", "{", "[", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "[1,]", "[01]",
		"[1.]", "[.5]", "[1e]", "[-]", "[+1]", "[tru]", "[nul]", "[True]", "{a: 1}", "{'a': 1}",
		"{\"a\": 1} x", "{\"a\": 1}{}", "{\"a\": 1, \"a\": 2}",
		dup20,
		"[9223372036854775808]", "[-9223372036854775809]", "[1e999]", "[\"\\u0000\"]",
		"{\"\\u0000\": 1}", "[\"\\ud800\"]", "[\"\\udc00\"]", "[\"\\ud800\\u0041\"]", "[\"\\x\"]",
		"[\"\\u12\"]", "[\"tab\there\"]", "[\"open]", "[1 2]", "{\"a\" 1}", "[\"\xff\"]",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		agree(bad[i], false);
	/* The NUL byte inside the text, where strlen() cannot see it. */
	bool took;
	CU_ASSERT_EQUAL(json_parsers_agree("[1]\0", 4, &took), 0);
	CU_ASSERT_FALSE(took);
}

static char *
slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;

	if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
	    (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
		buf[n] = 0;
		*len = (size_t)n;
	} else {
		free(buf);
		buf = NULL;
	}
	if (f)
		fclose(f);
	return buf;
}

/* xorshift64*: the same mutations on every run. */
static uint64_t
next_rand(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/* One edit: a byte replaced, inserted or deleted, from an alphabet that makes JSON mistakes. */
static size_t
mutate(char *dst, const char *src, size_t len, uint64_t *s)
{
	static const char alpha[] = "{}[]:,\"\\ 0123456789.-+eEtfnulx\t\n\x01\x7f\xc3";
	size_t at = len ? next_rand(s) % len : 0;
	char c = alpha[next_rand(s) % (sizeof(alpha) - 1)];

	switch (next_rand(s) % 3) {
	case 0:
		memcpy(dst, src, len);
		if (len)
			dst[at] = c;
		return len;
	case 1:
		memcpy(dst, src, at);
		dst[at] = c;
		memcpy(dst + at + 1, src + at, len - at);
		return len + 1;
	default:
		memcpy(dst, src, at);
		if (len)
			memcpy(dst + at, src + at + 1, len - at - 1);
		return len ? len - 1 : 0;
	}
}

static void
test_examples_and_mutations(void)
{
	DIR *d = opendir(CFG_EXAMPLES_DIR);
	unsigned files = 0, taken = 0, mutants = 0, bad = 0;
	struct dirent *e;
	uint64_t seed = 0x9e3779b97f4a7c15ull;

	CU_ASSERT_PTR_NOT_NULL_FATAL(d);
	while ((e = readdir(d))) {
		char path[1024];
		size_t len = 0, n;
		char *text, *m;
		bool took;

		if (!strstr(e->d_name, ".json"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", CFG_EXAMPLES_DIR, e->d_name);
		text = slurp(path, &len);
		CU_ASSERT_PTR_NOT_NULL_FATAL(text);
		files++;
		/* Every example is ASCII JSON the fast parser takes whole. */
		CU_ASSERT_EQUAL(json_parsers_agree(text, len, &took), 0);
		if (!took)
			fprintf(stderr, "\nthe fast parser left %s to jansson\n", path);
		CU_ASSERT_TRUE(took);
		m = malloc(len + 2);
		CU_ASSERT_PTR_NOT_NULL_FATAL(m);
		for (int i = 0; i < 300; i++) {
			n = mutate(m, text, len, &seed);
			mutants++;
			if (json_parsers_agree(m, n, &took)) {
				bad++;
				fprintf(stderr, "\nparsers disagree on a mutant of %s:\n%.*s\n", path, (int)n, m);
			}
			taken += took;
		}
		free(m);
		free(text);
	}
	closedir(d);
	CU_ASSERT_TRUE(files >= 5);
	CU_ASSERT_EQUAL(bad, 0);
	/* Most single edits break the document; some must still parse, or the test proves little. */
	CU_ASSERT_TRUE(taken > 0);
	printf("\n%u examples, %u mutants, %u taken by the fast parser\n", files, mutants, taken);
}

int
main(void)
{
	unsigned fails;
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 2;
	s = CU_add_suite("json", NULL, NULL);
	CU_add_test(s, "the grammar's edges, both parsers", test_edges);
	CU_add_test(s, "every example and 300 mutants of each", test_examples_and_mutations);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	fails = CU_get_number_of_failures();
	CU_cleanup_registry();
	return fails ? 1 : 0;
}
