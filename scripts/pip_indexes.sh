# Sourced by scripts/lock.sh and scripts/test_env.sh: the package sources pip is configured with
# on this machine (its find-links, index and extra indexes), as uv arguments in the array
# `index_args`. uv does not read pip's configuration, and the locked torch CPU build may be
# served only from such a source.
index_args=()
while IFS= read -r line; do
  key=${line%%=*}; value=${line#*=}; value=${value//\'/}
  case "$key" in
    *find-links) for v in $value; do index_args+=(--find-links "$v"); done ;;
    *extra-index-url) for v in $value; do index_args+=(--extra-index-url "$v"); done ;;
    *.index-url) index_args+=(--index-url "$value") ;;
  esac
done < <(python3 -m pip config list 2>/dev/null || true)
