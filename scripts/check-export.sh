#!/bin/sh
# Export every scenario in e2e/scenarios/ (and e2e/scenarios/pending/) to C and compile each one against
# rdma-core's libibverbs: cc -Wall -Werror -o /dev/null x.c -libverbs. Exit 1 if any export or compile fails.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
if [ ! -f /usr/include/infiniband/verbs.h ]; then
  echo "check-export: /usr/include/infiniband/verbs.h not found (install libibverbs-dev)" >&2
  exit 2
fi
CC=${CC:-cc}
out=$(mktemp -d "${TMPDIR:-/tmp}/verbslab-export.XXXXXX")
trap 'rm -rf "$out"' EXIT
fail=0; n=0
for f in e2e/scenarios/*.json e2e/scenarios/pending/*.json; do
  [ -f "$f" ] || continue
  case "$f" in *.schema.json) continue ;; esac
  n=$((n + 1))
  c="$out/$(basename "$f" .json).c"
  if ! node --import tsx app/scenario/cli.ts export-c "$f" -o "$c" 2>"$out/err"; then
    echo "FAIL export $f: $(cat "$out/err")"; fail=$((fail + 1)); continue
  fi
  if ! "$CC" -Wall -Werror -o /dev/null "$c" -libverbs 2>"$out/err"; then
    echo "FAIL compile $f:"; cat "$out/err"; fail=$((fail + 1)); continue
  fi
  echo "ok   $f"
done
echo "$n exported, $((n - fail)) compiled, $fail failed"
[ "$fail" -eq 0 ]
