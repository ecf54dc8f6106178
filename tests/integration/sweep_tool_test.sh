#!/usr/bin/env bash
# sweep_tool_test.sh -- rpma-sim-sweep itself, against a stand-in program that plays a
# librpma with 5 fault points: at N=2 it hangs, at N=3 it dies of SIGSEGV, at N=4 it prints
# an AddressSanitizer report, at N=1 and N=5 it fails cleanly, from N=6 on nothing fires. The
# table must say so, row by row, and the sweep must exit 1; a clean program exits 0.
#
# usage: sweep_tool_test.sh SWEEP
set -u
sweep=$1
work=${TEST_TMPDIR:-$(mktemp -d)}
fake=$work/fake_program.sh
cat >"$fake" <<'FAKE'
#!/usr/bin/env bash
n=${RPMA_FAULT_INJECTION:-0}
mode=${1:-bad}
for i in 1 2 3 4 5; do
  if [ "$i" -eq "$n" ]; then
    echo "Dec 01 00:00:00.000000 [1] *DEBUG* fake.cc:  $i: rpma_fake_$i: [#$i] [FAULT INJECTION: \"Invalid argument\"]" >&2
    if [ "$mode" = bad ]; then
      case $i in
        2) exec sleep 30 ;;
        3) kill -SEGV $$ ;;
        4) echo "==1==ERROR: AddressSanitizer: heap-use-after-free" >&2; exit 1 ;;
      esac
    fi
    exit 1
  fi
  echo "Dec 01 00:00:00.000000 [1] *DEBUG* fake.cc:  $i: rpma_fake_$i: [#$i]" >&2
done
exit 0
FAKE
chmod +x "$fake"
status=0
fail() { echo "FAIL: $*"; status=1; }

out=$("$sweep" --timeout 2 -- "$fake" bad 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 1 ] || fail "a sweep with a hang, a crash and a sanitizer report exited $rc, not 1"
row() { echo "$out" | grep -E "^ +$1  "; }
row 1 | grep -Eq "rpma_fake_1 +Invalid argument +1  ok$" || fail "row 1: $(row 1)"
row 2 | grep -q "HANG" || fail "row 2 is not a hang: $(row 2)"
row 3 | grep -q "CRASH(SIGSEGV)" || fail "row 3 is not a crash: $(row 3)"
row 4 | grep -q "SANITIZER" || fail "row 4 is not a sanitizer report: $(row 4)"
row 5 | grep -Eq " ok$" || fail "row 5: $(row 5)"
row 6 | grep -q "no fault fired: 5 points in all" || fail "row 6: $(row 6)"
echo "$out" | grep -q "^6 runs, 3 with a crash, hang or sanitizer/valgrind error$" ||
  fail "wrong summary line"

out=$("$sweep" --timeout 2 --stride 2 --first 1 -- "$fake" good 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 0 ] || fail "a clean sweep exited $rc"
echo "$out" | grep -q "^4 runs, 0 with" || fail "--stride 2 did not run N = 1, 3, 5, 7"

# A peer that crashes counts against the run (the sweep's usage: "Its crash (a signal it did
# not get from us) or its sanitizer errors count against the run as well"), whether it is
# started before the program or after it.
peer=$work/crashing_peer.sh
cat >"$peer" <<'PEER'
#!/usr/bin/env bash
echo "listening on 127.0.0.1"
sleep 0.2
kill -SEGV $$
PEER
chmod +x "$peer"
out=$("$sweep" --timeout 5 --max 1 --before "$peer" -- "$fake" good 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 1 ] || fail "a sweep whose --before peer died of SIGSEGV exited $rc, not 1"
row 1 | grep -q "peer-CRASH(SIGSEGV)" || fail "row 1 does not report the peer's crash: $(row 1)"
ready_fake=$work/ready_fake.sh
printf '#!/usr/bin/env bash\necho "listening on"\nsleep 0.5\nexec "$@"\n' >"$ready_fake"
chmod +x "$ready_fake"
out=$("$sweep" --timeout 5 --max 1 --after "$peer" -- "$ready_fake" "$fake" good 2>&1)
rc=$?
echo "$out"
[ "$rc" -eq 1 ] || fail "a sweep whose --after peer died of SIGSEGV exited $rc, not 1"
row 1 | grep -q "peer-CRASH(SIGSEGV)" || fail "row 1 does not report the peer's crash: $(row 1)"
exit "$status"
