# Sourced by scripts/test.sh and scripts/package.sh.
# libclang_dir prints the directory holding the libclang that bindgen (rdma-sys) loads: libclang.so or
# libclang-<N>.so (never libclang-cpp, which bindgen cannot use); an llvm <= 15 is preferred, since
# rdma-sys' bindgen breaks on libclang 16+. Returns 1 when none is installed.
libclang_dir() {
  local root="${LIBCLANG_SEARCH_ROOT:-/usr/lib}" d v
  for v in 15 14 13 12 11 16 17 18 19; do
    d="$root/llvm-$v/lib"
    if compgen -G "$d/libclang.so*" >/dev/null || compgen -G "$d/libclang-[0-9]*.so*" >/dev/null; then
      echo "$d"; return 0
    fi
  done
  for d in "$root" "$root"/x86_64-linux-gnu "$root"/aarch64-linux-gnu; do
    if compgen -G "$d/libclang.so*" >/dev/null || compgen -G "$d/libclang-[0-9]*.so*" >/dev/null; then
      echo "$d"; return 0
    fi
  done
  return 1
}
