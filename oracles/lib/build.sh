# Shared by the oracles' entry scripts: build a Go command from one of the wrapper modules
# under oracles/, into the cache, keyed by name, version and a hash of the wrapper's files.
# Nothing is ever built inside the repository.
#
#   oracle_build NAME VERSION MODULE_DIR PACKAGE [LDFLAGS]   → prints the binary's path
#
# PACKAGE is a module path or `.`; a relative `./dir` package adds that directory's sources to
# the key. Two processes asking for the same binary (oracles/build ahead of oracles/run, or two
# families) build it once: the second waits on a lock in the cache and takes the first's result.
#
#   oracle_built_only   in a family's entry, right after its builds: under
#                       FLEETC_ORACLES_BUILD_ONLY=1 (oracles/build) the entry stops there.

ORACLES_CACHE="${FLEETC_ORACLES_CACHE:-$HOME/.cache/fleetc-oracles}"
export GOFLAGS="${GOFLAGS:--buildvcs=false}"

oracle_build() {
  local name="$1" version="$2" dir="$3" pkg="$4" ldflags="${5:-}"
  local key sub=""
  case "$pkg" in ./*) sub="$pkg" ;; esac
  key=$(cd "$dir" && cat go.mod go.sum $(ls *.go 2>/dev/null) ${sub:+$(ls "$sub"/*.go 2>/dev/null)} 2>/dev/null | { cat; printf '%s' "$pkg $ldflags"; } | sha256sum | cut -c1-12)
  local bin="$ORACLES_CACHE/bin/$name-$version-$key"
  if [ ! -x "$bin" ]; then
    mkdir -p "$ORACLES_CACHE/bin" "$ORACLES_CACHE/logs" "$ORACLES_CACHE/locks"
    local lock fd
    lock="$ORACLES_CACHE/locks/$name-$version-$key"
    exec {fd}>"$lock"
    flock "$fd"
    if [ ! -x "$bin" ]; then
      local log="$ORACLES_CACHE/logs/build-$name-$version.log" start=$SECONDS
      if ! (cd "$dir" && nice go build -trimpath -ldflags "$ldflags" -o "$bin.tmp" "$pkg") >"$log" 2>&1; then
        exec {fd}>&-
        echo "oracles: building $name $version failed; see $log" >&2
        tail -20 "$log" >&2
        return 1
      fi
      mv "$bin.tmp" "$bin"
      echo "oracles: built $name $version in $((SECONDS - start)) s (cold Go caches take longer)" >&2
    fi
    exec {fd}>&-
  fi
  printf '%s\n' "$bin"
}

# The -X flags that stamp a Kubernetes binary with its release (k8s.io/component-base/version),
# as upstream's hack/lib/version.sh does: `kube_version_ldflags v1.36.3`.
kube_version_ldflags() {
  local v="$1" minor
  minor="${v#v*.}"; minor="${minor%%.*}"
  local pkg=k8s.io/component-base/version
  printf -- '-X %s.gitVersion=%s -X %s.gitMajor=%s -X %s.gitMinor=%s -X %s.gitTreeState=clean' \
    "$pkg" "$v" "$pkg" "$(echo "${v#v}" | cut -d. -f1)" "$pkg" "$minor" "$pkg"
}

oracle_built_only() {
  if [ "${FLEETC_ORACLES_BUILD_ONLY:-}" = 1 ]; then exit 0; fi
}
