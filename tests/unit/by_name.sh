# Unit tests run one at a time by name (tests/unit/check.h): --list names a
# file's tests and runs none, --test NAME runs that one alone, a name that
# is no test and an unknown argument are refused with exit 2.
# Usage: by_name.sh TEST_BINARY (a unit test with several tests).
t=$1
fails=0
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }

names=$("$t" --list) && [ "$(echo "$names" | wc -l)" -ge 2 ] && ! echo "$names" | grep -q checks \
    && ok "--list: the names, nothing run" || bad "--list: $names"
first=$(echo "$names" | head -1)
all=$("$t" | sed -n 's/.*: \([0-9]*\) checks, 0 failed$/\1/p')
one=$("$t" --test "$first" | sed -n 's/.*: \([0-9]*\) checks, 0 failed$/\1/p')
[ -n "$one" ] && [ -n "$all" ] && [ "$one" -gt 0 ] && [ "$one" -lt "$all" ] \
    && ok "--test $first: $one of the $all checks" || bad "--test $first: '$one' of '$all' checks"
"$t" --test no_such_test 2>err; rc=$?
[ $rc -eq 2 ] && grep -q "no test named no_such_test" err && ok "unknown name: exit 2, named" || bad "unknown name: rc $rc"
"$t" --bogus 2>err; rc=$?
[ $rc -eq 2 ] && grep -q "usage:" err && ok "unknown argument: exit 2" || bad "unknown argument: rc $rc"
rm -f err
[ $fails -eq 0 ]
