//! scripts/libclang.sh, which scripts/test.sh sources to decide whether to install libclang and
//! where to point LIBCLANG_PATH, run against fake /usr/lib trees. A machine with only llvm's
//! `libclang-cpp.so.14` has no libclang bindgen can load: that must read as missing.

use std::path::Path;
use std::process::Command;

/// Make `files` (paths under a fake root) and run `libclang_dir ROOT`: the directory it prints,
/// `None` when it reports none.
fn detect(files: &[&str]) -> Option<String> {
    let root = tempfile::tempdir().expect("tempdir");
    for f in files {
        let p = root.path().join(f);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(&p, b"").expect("touch");
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/libclang.sh");
    let out = Command::new("bash")
        .arg("-c")
        .arg(r#". "$0" && libclang_dir "$1""#)
        .arg(&script)
        .arg(root.path())
        .output()
        .expect("run bash");
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    match out.status.code() {
        Some(0) => Some(
            text.strip_prefix(root.path().to_str().expect("utf-8"))
                .expect("a directory under the fake root")
                .to_string(),
        ),
        Some(1) => {
            assert!(text.is_empty(), "nothing printed when missing: {text}");
            None
        }
        other => panic!(
            "libclang_dir failed ({other:?}): {}",
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

#[test]
fn libclang_cpp_alone_is_missing() {
    assert_eq!(detect(&["usr/lib/llvm-14/lib/libclang-cpp.so.14"]), None);
    assert_eq!(
        detect(&[
            "usr/lib/llvm-14/lib/libclang-cpp.so.14",
            "usr/lib/llvm-14/lib/libclangBasic.a",
            "usr/lib/llvm-14/lib/libclang-cpp.so",
        ]),
        None,
        "static archives and libclang-cpp are not what bindgen loads"
    );
    assert_eq!(detect(&[]), None);
}

#[test]
fn every_name_bindgen_loads_is_found() {
    for name in [
        "libclang.so",
        "libclang.so.1",
        "libclang-14.so",
        "libclang-14.so.1",
    ] {
        assert_eq!(
            detect(&[
                "usr/lib/llvm-14/lib/libclang-cpp.so.14",
                &format!("usr/lib/llvm-14/lib/{name}"),
            ])
            .as_deref(),
            Some("/usr/lib/llvm-14/lib"),
            "{name}"
        );
    }
}

#[test]
fn the_newest_llvm_bindgen_works_with_wins_and_16_plus_does_not_count() {
    assert_eq!(
        detect(&[
            "usr/lib/llvm-13/lib/libclang.so.1",
            "usr/lib/llvm-15/lib/libclang-15.so.1",
            "usr/lib/llvm-14/lib/libclang.so",
        ])
        .as_deref(),
        Some("/usr/lib/llvm-15/lib")
    );
    assert_eq!(
        detect(&[
            "usr/lib/llvm-18/lib/libclang.so",
            "usr/lib/llvm-18/lib/libclang-18.so.1"
        ]),
        None,
        "rdma-sys' bindgen breaks on 16+: install an older one"
    );
    assert_eq!(
        detect(&[
            "usr/lib/llvm-18/lib/libclang.so",
            "usr/lib/llvm-15/lib/libclang-cpp.so.15",
            "usr/lib/llvm-14/lib/libclang.so.1",
        ])
        .as_deref(),
        Some("/usr/lib/llvm-14/lib")
    );
}

/// The detection above is only worth something if scripts/test.sh uses it: a merge once put back
/// test.sh's own `ls /usr/lib/llvm-*/lib/libclang*.so*`, which matches libclang-cpp and so never
/// installed libclang on a fresh machine.
#[test]
fn test_sh_decides_with_libclang_sh_only() {
    let script =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/test.sh"))
            .expect("read scripts/test.sh");
    let code: Vec<&str> = script
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect();
    assert!(
        code.iter().any(|l| l.trim() == ". scripts/libclang.sh"),
        "scripts/test.sh must source scripts/libclang.sh"
    );
    assert!(
        code.iter()
            .any(|l| l.contains("libclang_dir") && l.contains("libclang_package")),
        "the install decision must come from libclang_dir / libclang_package"
    );
    let own_globs: Vec<&&str> = code.iter().filter(|l| l.contains("libclang*.so")).collect();
    assert!(
        own_globs.is_empty(),
        "scripts/test.sh globs libclang itself (matches libclang-cpp): {own_globs:?}"
    );
}
