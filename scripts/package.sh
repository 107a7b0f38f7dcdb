#!/usr/bin/env bash
# Build the Debian package (with the RDMA verbs pinger) and check it as a user would get it:
# unpack it with dpkg -x, run the unpacked binary, look for every file the package promises,
# read its dependencies. Also checks that `cargo package` (crates.io) builds from what it ships.
#
# Cost on a 2-core machine: installing cargo-deb ~3 min the first time (cached in ~/.cargo/bin),
# the release build with verbs ~4 min, `cargo package` verification ~2 min.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v dpkg-deb >/dev/null 2>&1 || need+=(dpkg)
[ -e /usr/include/infiniband/verbs.h ] || need+=(libibverbs-dev)
[ -e /usr/include/rdma/rdma_cma.h ] || need+=(librdmacm-dev)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
# shellcheck source=scripts/libclang.sh
. scripts/libclang.sh
libclang_dir >/dev/null || need+=("$(libclang_package)")
if [ ${#need[@]} -gt 0 ]; then
  echo "scripts/package.sh: installing ${need[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
[ -n "${LIBCLANG_PATH:-}" ] || LIBCLANG_PATH="$(libclang_dir)" && export LIBCLANG_PATH

if ! cargo deb --version >/dev/null 2>&1; then
  echo "scripts/package.sh: installing cargo-deb (once; ~3 min)"
  cargo install --locked cargo-deb@^3 >/dev/null 2>&1 || cargo install --locked cargo-deb
fi

cargo build --release --features verbs
assets=target/package-assets
rm -rf "$assets"; mkdir -p "$assets"
target/release/rocetop man | gzip -9n > "$assets/rocetop.1.gz"
target/release/rocetop completions bash > "$assets/rocetop.bash"
target/release/rocetop completions zsh > "$assets/_rocetop"
target/release/rocetop completions fish > "$assets/rocetop.fish"
deb=$(cargo deb --no-build --features verbs --output target/debian/ 2>&1 | tail -n 1)
[ -f "$deb" ] || { echo "FAIL: cargo deb did not report a package: $deb"; exit 1; }
echo "package: $deb ($(du -h "$deb" | cut -f1))"

fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
dpkg -x "$deb" "$tmp/root"
info=$(dpkg-deb --info "$deb")
grep -q '^ Depends:.*libibverbs1' <<<"$info" || fail "Depends lacks libibverbs1: $info"
grep -q '^ Depends:.*librdmacm1' <<<"$info" || fail "Depends lacks librdmacm1"
for f in usr/bin/rocetop usr/share/man/man1/rocetop.1.gz \
         usr/share/bash-completion/completions/rocetop usr/share/zsh/vendor-completions/_rocetop \
         usr/share/fish/vendor_completions.d/rocetop.fish usr/share/doc/rocetop/examples/config.toml \
         usr/lib/systemd/system/rocetop-export.service; do
  [ -s "$tmp/root/$f" ] || fail "the package lacks $f"
done
# Every file the package holds is one it says it holds (dpkg -c) and vice versa.
listed=$(dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./||' | grep -v '/$' | sort)
found=$( (cd "$tmp/root" && find . -type f -o -type l) | sed 's|^\./||' | sort)
[ "$listed" = "$found" ] || fail "dpkg -c and the unpacked tree differ"
# The unit is installed but not enabled: no wants/ link in the package.
wants=$(find "$tmp/root" -path '*wants*')
[ -z "$wants" ] || fail "the package enables a unit: $wants"
bin="$tmp/root/usr/bin/rocetop"
ver=$("$bin" --version) || fail "--version"
grep -q 'verbs pinger: yes' <<<"$ver" || fail "the packaged binary lacks the verbs pinger: $ver"
"$bin" snapshot --demo --format prom > "$tmp/snap.prom" || fail "snapshot --demo"
grep -q '^rocetop_switch_pfc_rx_frames_total{' "$tmp/snap.prom" || fail "snapshot --demo printed no PFC counters"
man=$(zcat "$tmp/root/usr/share/man/man1/rocetop.1.gz")
grep -q 'ROCETOP SNAPSHOT' <<<"$man" || fail "man page"
echo "ok: $ver; $(wc -l < "$tmp/snap.prom") lines of demo metrics"

# crates.io: the package holds what the build embeds (config.toml, themes) and builds on its own.
cargo package --allow-dirty --quiet 2>&1 | tail -n 5
# (listed first: `tar | grep -q` under pipefail fails when grep stops reading early)
crate_files=$(tar tzf target/package/rocetop-*.crate)
grep -q '/themes/colorblind.toml$' <<<"$crate_files" || fail "crate lacks themes"
grep -q '^rocetop-[^/]*/config.toml$' <<<"$crate_files" || fail "crate lacks config.toml"
echo "ok: cargo package"
