# Sourced by scripts/test.sh (and its test): find a libclang that rdma-sys' bindgen can load.
#
# bindgen (clang-sys) loads `libclang.so`, `libclang.so.<N>`, `libclang-<N>.so` or `libclang-<N>.so.<M>`
# and skips `libclang-cpp.so.<N>` (the C++ library llvm ships beside it, often installed alone).
# rdma-sys 0.3's bindgen breaks on libclang 16+, so an llvm <= 15 is preferred (docs/latency.md).

# Whether directory $1 holds a libclang that bindgen would load.
libclang_in() {
  local f base
  for f in "$1"/libclang*.so*; do
    [ -e "$f" ] || continue
    base=${f##*/}
    case "$base" in
      libclang.so | libclang.so.[0-9]* | libclang-[0-9]*.so | libclang-[0-9]*.so.[0-9]*) return 0 ;;
    esac
  done
  return 1
}

# Print the lib directory of the newest llvm 13..15 under root $1 (default /) that holds a loadable
# libclang; return 1 when there is none.
libclang_dir() {
  local root=${1:-} v
  for v in 15 14 13; do
    if libclang_in "$root/usr/lib/llvm-$v/lib"; then
      echo "$root/usr/lib/llvm-$v/lib"
      return 0
    fi
  done
  return 1
}

# The package that brings a libclang bindgen can use: the newest libclang-1[543]-dev apt knows,
# else libclang-dev (which, on a distribution with only llvm 16+, will not do for --features verbs).
libclang_package() {
  local v
  for v in 15 14 13; do
    if apt-cache show "libclang-$v-dev" >/dev/null 2>&1; then
      echo "libclang-$v-dev"
      return 0
    fi
  done
  echo libclang-dev
}
