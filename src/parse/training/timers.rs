//! Timer lines: Megatron-LM's `time (ms) | forward-compute: ... | backward-params-all-reduce: ... |
//! backward-embedding-all-reduce: ...`, DeepSpeed's `[Rank 0] time (ms) | fwd: ... | bwd_allreduce:
//! ...`, and newer Megatron's multi-line `(min, max) time across ranks (ms):` block. Their all-reduce
//! timers, summed, are the all-reduce time of the step.

/// Is this timer name an all-reduce (or the data-parallel gradient sync that wraps one)?
/// `backward-params-all-reduce`, `backward-embedding-all-reduce`, `layernorm-grads-all-reduce`,
/// `embedding-grads-all-reduce`, `all-grads-sync` (Megatron), `bwd_allreduce` (DeepSpeed).
fn is_allreduce(name: &str) -> bool {
    let n = name.trim().to_ascii_lowercase().replace('_', "-");
    n.contains("all-reduce") || n.contains("allreduce") || n == "all-grads-sync"
}

/// Sums of the all-reduce timers of one line or block, in milliseconds. DeepSpeed prints the
/// micro-step timers (`bwd_allreduce_microstep`) and the global ones (`bwd_allreduce`) of the same
/// step; the global ones win.
#[derive(Debug, Default)]
struct Sum {
    global: Option<f64>,
    micro: Option<f64>,
}

impl Sum {
    fn add(&mut self, name: &str, ms: f64) {
        if !is_allreduce(name) || ms.is_nan() || ms < 0.0 {
            return;
        }
        let slot = if name.trim().ends_with("microstep") {
            &mut self.micro
        } else {
            &mut self.global
        };
        *slot = Some(slot.unwrap_or(0.0) + ms);
    }

    fn seconds(&self) -> Option<f64> {
        self.global.or(self.micro).map(|ms| ms / 1e3)
    }
}

/// `Some(all-reduce seconds, if the line had all-reduce timers)` for a one-line timer report.
pub(super) fn timer_line(body: &str) -> Option<Option<f64>> {
    let at = body.find("time (ms)")?;
    let rest = body[at + "time (ms)".len()..].trim_start();
    let rest = rest.strip_prefix('|')?;
    let mut sum = Sum::default();
    for cell in rest.split('|') {
        let Some((name, value)) = cell.rsplit_once(':') else {
            continue;
        };
        if let Ok(ms) = value.trim().parse::<f64>() {
            sum.add(name, ms);
        }
    }
    Some(sum.seconds())
}

/// The header of Megatron's multi-line timer report (`(min, max) time across ranks (ms):`, or `max
/// time across ranks (ms):` with `--timing-log-option max`).
pub(super) fn is_block_start(body: &str) -> bool {
    body.trim_end().ends_with("time across ranks (ms):")
}

/// An open multi-line timer report.
#[derive(Debug)]
pub(super) struct Block {
    pub rank: Option<u32>,
    sum: Sum,
    lines: u16,
}

/// Megatron has a few dozen timers; a longer block is not one.
const MAX_BLOCK_LINES: u16 = 256;

impl Block {
    pub fn new(rank: Option<u32>) -> Self {
        Self {
            rank,
            sum: Sum::default(),
            lines: 0,
        }
    }

    /// Take one line if it is an entry of the block: `    name ........: (min, max)` or `: max`.
    /// The slowest rank's time is the one the step waited for.
    pub fn entry(&mut self, body: &str) -> bool {
        if self.lines >= MAX_BLOCK_LINES || !body.starts_with([' ', '\t']) {
            return false;
        }
        let Some((name, value)) = body.rsplit_once(':') else {
            return false;
        };
        let name = name.trim().trim_end_matches(['.', ' ']);
        if name.is_empty() || name.contains(' ') {
            return false;
        }
        let value = value.trim().trim_start_matches('(').trim_end_matches(')');
        let mut max: Option<f64> = None;
        for v in value.split(',') {
            let Ok(v) = v.trim().parse::<f64>() else {
                return false;
            };
            max = Some(max.map_or(v, |m: f64| m.max(v)));
        }
        let Some(ms) = max else { return false };
        self.sum.add(name, ms);
        self.lines += 1;
        true
    }

    pub fn allreduce_seconds(&self) -> Option<f64> {
        self.sum.seconds()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn megatron_timer_line_sums_all_reduce_timers() {
        let l = "time (ms) | forward-compute: 29733.63 | backward-params-all-reduce: 27.34 | \
                 backward-embedding-all-reduce: 4236.02 | optimizer: 323.04";
        let s = timer_line(l).flatten().unwrap_or(f64::NAN);
        assert!((s - (0.02734 + 4.23602)).abs() < 1e-9, "{s}");
        assert_eq!(
            timer_line("time (ms) | optimizer_allgather: 884.11"),
            Some(None)
        );
        assert_eq!(timer_line("elapsed time per iteration (ms): 3 |"), None);
    }

    #[test]
    fn deepspeed_prefers_global_timers() {
        let micro = "[Rank 0] time (ms) | fwd_microstep: 1 | bwd_allreduce_microstep: 44.65 | step_microstep: 2";
        let global = "[Rank 0] time (ms) | fwd: 1 | bwd_allreduce: 44.66 | step: 2";
        let near = |l: &str, want: f64| {
            timer_line(l)
                .flatten()
                .is_some_and(|s| (s - want).abs() < 1e-12)
        };
        assert!(near(micro, 0.04465));
        assert!(near(global, 0.04466));
    }

    #[test]
    fn block_entries() {
        assert!(is_block_start(
            "INFO:megatron.core.timers:(min, max) time across ranks (ms):"
        ));
        let mut b = Block::new(None);
        assert!(
            b.entry("    forward-backward ...............................: (3486.52, 3486.84)")
        );
        assert!(b.entry("    all-grads-sync .................................: (13.67, 14.04)"));
        assert!(b.entry("    embedding-grads-all-reduce .....................: 0.04"));
        assert!(!b.entry("[before the start of training step] datetime: 2024-04-04 09:09:27"));
        assert!(!b.entry("    reading sizes..."));
        let s = b.allreduce_seconds().unwrap_or(f64::NAN);
        assert!((s - 0.01408).abs() < 1e-12, "{s}");
    }
}
