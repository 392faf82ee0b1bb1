#!/usr/bin/env bash
# Checks of the tracked tree that `make test` runs before any test (fast, no build needed):
#  - no tracked file names an absolute path of a particular machine (a checkout works
#    wherever it is cloned: tests derive paths from the checkout, tests/integration/harness/paths.py);
#  - every tracked C++ file is formatted by the pinned clang-format (.clang-format; `make format`
#    fixes it).
set -uo pipefail
cd "$(dirname "$0")/.."
rc=0
# Home and workspace folders of a developer or CI machine. /tmp and system paths are fine.
pattern='(^|[^A-Za-z0-9_.])/(work|home|root|Users)/[A-Za-z0-9_.-]+'
hits=$(git grep -nIE "$pattern" -- . ':!scripts/check_tree.sh' || true)
if [ -n "$hits" ]; then
  echo "[check] tracked files name an absolute path of one machine; derive it from the checkout:"
  echo "$hits"
  rc=1
fi
clang_format=.venv/bin/clang-format
if [ ! -x "$clang_format" ]; then
  echo "[check] $clang_format is missing: run make setup"
  rc=1
else
  unformatted=$(git ls-files '*.cc' '*.h' | xargs "$clang_format" --dry-run 2>&1 |
    grep -oE '^[^:]+\.(cc|h):' | sort -u | tr -d ':' || true)
  if [ -n "$unformatted" ]; then
    echo "[check] not formatted by $("$clang_format" --version | grep -oE '[0-9]+\.[0-9.]+')" \
      "(make format fixes it):"
    echo "$unformatted" | sed 's/^/  /'
    rc=1
  fi
fi
[ "$rc" -eq 0 ] && echo "[check] tree: no machine-specific absolute paths, formatting clean"
exit "$rc"
