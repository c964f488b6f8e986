#!/usr/bin/env bash
# Formats the C++ tree with .clang-format (`make format`), or with --check lists the files
# that do not follow it and fails (`make format-check`, run by `make test`).
# Usage: format.sh CLANG_FORMAT [--check]
set -euo pipefail
clang_format="$1"
cd "$(dirname "$0")/.."
if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
  mapfile -t files < <(git ls-files --cached --others --exclude-standard '*.h' '*.cpp')
else
  mapfile -t files < <(find include src python/src tests bench examples -name '*.h' -o -name '*.cpp' | sort)
fi
if [ "${2:-}" != "--check" ]; then
  "$clang_format" -i "${files[@]}"
  exit 0
fi
unformatted=()
for file in "${files[@]}"; do
  "$clang_format" --dry-run --Werror "$file" > /dev/null 2>&1 || unformatted+=("$file")
done
if [ ${#unformatted[@]} -gt 0 ]; then
  echo "format-check: ${#unformatted[@]} file(s) do not follow .clang-format (run \`make format\`):"
  printf '  %s\n' "${unformatted[@]}"
  exit 1
fi
echo "format-check: ${#files[@]} files follow .clang-format"
