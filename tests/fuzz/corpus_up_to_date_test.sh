#!/usr/bin/env bash
# corpus_up_to_date_test.sh MAKE_CORPUS -- fails when a seed make_corpus.cc writes differs
# from the committed one (or is missing): the protocol or an encoder changed, and
#   bazel run //tests/fuzz:make_corpus -- "$PWD/tests/fuzz/corpus"
# brings the corpus up to date. Inputs kept from fuzzing runs (regression_*) are not the
# generator's and are left alone.
set -eu
make_corpus=$1
fresh="${TEST_TMPDIR:-$(mktemp -d)}/corpus"
"$make_corpus" "$fresh"
count=0
stale=0
while IFS= read -r file; do
  relative=${file#"$fresh"/}
  count=$((count + 1))
  if ! cmp -s "$file" "tests/fuzz/corpus/$relative"; then
    echo "out of date: tests/fuzz/corpus/$relative"
    stale=$((stale + 1))
  fi
done < <(find "$fresh" -type f | sort)
if [ "$count" -eq 0 ]; then echo "make_corpus wrote nothing"; exit 1; fi
echo "$count seeds, $stale out of date"
[ "$stale" -eq 0 ]
