# Shared by the oracles' entry scripts: build a Go command from one of the wrapper modules
# under oracles/, into the cache, keyed by name, version and a hash of the wrapper's files.
# Nothing is ever built inside the repository.
#
#   oracle_build NAME VERSION MODULE_DIR PACKAGE [LDFLAGS]   → prints the binary's path

ORACLES_CACHE="${FLEETC_ORACLES_CACHE:-$HOME/.cache/fleetc-oracles}"
export GOFLAGS="${GOFLAGS:--buildvcs=false}"

oracle_build() {
  local name="$1" version="$2" dir="$3" pkg="$4" ldflags="${5:-}"
  local key
  key=$(cd "$dir" && cat go.mod go.sum $(ls *.go 2>/dev/null) 2>/dev/null | { cat; printf '%s' "$pkg $ldflags"; } | sha256sum | cut -c1-12)
  local bin="$ORACLES_CACHE/bin/$name-$version-$key"
  if [ ! -x "$bin" ]; then
    mkdir -p "$ORACLES_CACHE/bin" "$ORACLES_CACHE/logs"
    local log="$ORACLES_CACHE/logs/build-$name-$version.log" start=$SECONDS
    if ! (cd "$dir" && nice go build -trimpath -ldflags "$ldflags" -o "$bin.tmp" "$pkg") >"$log" 2>&1; then
      echo "oracles: building $name $version failed; see $log" >&2
      tail -20 "$log" >&2
      return 1
    fi
    mv "$bin.tmp" "$bin"
    echo "oracles: built $name $version in $((SECONDS - start)) s (cold Go caches take longer)" >&2
  fi
  printf '%s\n' "$bin"
}
