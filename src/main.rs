use clap::Parser;

fn main() -> std::process::ExitCode {
    one_malloc_arena();
    // Backtraces are for bugs; configuration and connection problems are printed as plain sentences.
    let _ = color_eyre::install();
    rocetop::run(rocetop::cli::Cli::parse())
}

/// glibc gives each thread that meets a locked arena an arena of its own (up to 8 per core), and
/// memory freed in one arena serves only that arena: with the runtime's workers taking turns at
/// 512 nodes' buffers, each arena kept its own free room. One arena (the threads' tcache still
/// answers most small allocations without the lock): 128 nodes streaming, malloc's heap 41.5 ->
/// 39.3 MB for the same 32.8 MB in use, peak RSS 48.3 -> 45.8 MB, no CPU seen
/// (bench/HISTORY.md has 512). Set before any thread exists.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn one_malloc_arena() {
    // SAFETY: mallopt only sets a malloc parameter; nothing else runs yet.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn one_malloc_arena() {}
